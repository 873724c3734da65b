# The device calls of 2026-12-04, exactly as run (H200, driver 580.159.04, torch 2.11.0+cu130,
# DALI 2.4.0, Snakemake 9.27.1, Python 3.12.3; code of commit cded984, nothing untracked), one host
# (kernel 6.18.44-fc-v1252), 14:22-14:48 UTC, 1582 s of device time, all seven calls issued in one
# message so that they ran back to back (the host goes back 30 s after a call ends).
# Calls 1-4 only copied the bundle's parts:
#   mkdir -p /tmp/parts && cp .gpu-bundle/part-0K /tmp/parts/          (carry .gpu-bundle/part-0K)
# Call 5: the data; `default` under the loader benchmark, 30 paired blocks of 40 steps of four feeds
# (one batch with the training threads pinned to 2 cores kept free of DALI's threads, the
# reference; the loader's defaults; the same with that pinning; the same with DALI batches of 4
# training batches; DALI alone with 4 and 2 threads: ../loader_default.csv, loader_default.log);
# benchmarks/choose_loader.py kept the configuration's own loader (no variant beat it in clearly
# more rounds than chance: 14 of 30, p=0.71) and wrote synthetic-food101-chosen.yaml (the CUDA
# settings only); then max-autotune's job with it, started detached (its cold compile outlasts
# the call).
mkdir -p /tmp/parts /tmp/repo/.gpu-bundle && cp .gpu-bundle/part-04 /tmp/parts/ && ls /tmp/parts && tar cf - --exclude=./.gpu-bundle --exclude=./results --exclude=./resources --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo && cp .gpu-bundle/unbundle.sh /tmp/repo/.gpu-bundle/ && cd /tmp/repo && S=$(date +%s) && H200_BLOCKS=30 bash benchmarks/h200.sh 585 data loader:default choose:default && test -e configs/synthetic-food101-chosen.yaml && cat configs/synthetic-food101-chosen.yaml && H200_CONFIGS="configs/synthetic-food101.yaml configs/synthetic-food101-chosen.yaml" bash benchmarks/h200.sh $(( 585 - ($(date +%s) - S) )) detach:train:max-autotune wait; tail -4 $OUT/h200.log; uname -r
# Call 6: waited for max-autotune's job (it ended 417 s into the call), then reduce-overhead's job
# (the only one that fit the 168 s left)
cd /tmp/repo && H200_CONFIGS="configs/synthetic-food101.yaml configs/synthetic-food101-chosen.yaml" bash benchmarks/h200.sh 585 wait train:default train:none train:reduce-overhead; grep -h "INFO" results/synthetic-food101-chosen/logs/train/*.log | grep "epoch\|synthetic batch" | tail -20
# Call 7: the other two jobs, one after another
cd /tmp/repo && H200_CONFIGS="configs/synthetic-food101.yaml configs/synthetic-food101-chosen.yaml" bash benchmarks/h200.sh 590 wait train:default train:none train:reduce-overhead; grep -h "INFO" results/synthetic-food101-chosen/logs/train/*.log | grep "epoch\|synthetic batch" | tail -30
# Here, from call 7's packed results (results.tgz, unpacked in /tmp/h):
#   python benchmarks/h200_reference.py /tmp/h docs/reference/h200/2026-12-04 --run synthetic-food101-chosen
