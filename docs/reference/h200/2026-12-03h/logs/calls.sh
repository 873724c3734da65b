# The device calls of 2026-12-03h, exactly as run (H200, driver 580.159.04, torch 2.11.0+cu130,
# DALI 2.4.0, Snakemake 9.27.1, Python 3.12.3; code of commit 1c9b409, nothing untracked), one host
# (kernel 6.18.44-fc-v1252, the kernel of 2026-12-03g's host B), 21:09-21:35 UTC, 1640 s of device time.
# Calls 1-4 only copied the bundle's parts:
#   mkdir -p /tmp/parts && cp .gpu-bundle/part-0K /tmp/parts/          (carry .gpu-bundle/part-0K)
# Call 5: the data; `default` under the loader benchmark, 50 paired blocks of 40 steps of four feeds
# (one batch, the defaults, 2 DALI threads, 2 cores kept free of DALI's threads; DALI alone with 4
# and 2 threads: ../loader_default.csv, loader_default.log); benchmarks/choose_loader.py picked
# reserve_cores=2 (0.939 against 0.936 and 0.927, all within each other's spread) and wrote
# synthetic-food101-chosen.yaml; then max-autotune's job with it, started detached (its cold
# compile outlasts the call).
mkdir -p /tmp/parts /tmp/repo/.gpu-bundle && cp .gpu-bundle/part-04 /tmp/parts/ && ls /tmp/parts && tar cf - --exclude=./.gpu-bundle --exclude=./results --exclude=./resources --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo && cp .gpu-bundle/unbundle.sh /tmp/repo/.gpu-bundle/ && cd /tmp/repo && S=$(date +%s) && bash benchmarks/h200.sh 585 data loader:default choose:default && test -e configs/synthetic-food101-chosen.yaml && cat configs/synthetic-food101-chosen.yaml && H200_CONFIGS="configs/synthetic-food101.yaml configs/synthetic-food101-chosen.yaml" bash benchmarks/h200.sh $(( 585 - ($(date +%s) - S) )) detach:train:max-autotune wait; tail -4 $OUT/h200.log; uname -r
# Call 6: waited for max-autotune's job (it ended 443 s into the call); the other stages did not fit
cd /tmp/repo && H200_CONFIGS="configs/synthetic-food101.yaml configs/synthetic-food101-chosen.yaml" bash benchmarks/h200.sh 585 wait train:default train:none train:reduce-overhead; grep -h "INFO" results/synthetic-food101-chosen/logs/train/*.log | grep -v "torch.compile" | tail -20
# Call 7: the other three jobs, one after another
cd /tmp/repo && H200_CONFIGS="configs/synthetic-food101.yaml configs/synthetic-food101-chosen.yaml" bash benchmarks/h200.sh 592 train:default train:none train:reduce-overhead; grep -h "INFO" results/synthetic-food101-chosen/logs/train/*.log | grep -v "torch.compile" | grep "epoch\|synthetic batch"
# Here, from call 7's packed results (results.tgz, unpacked in /tmp/h):
#   python benchmarks/h200_reference.py /tmp/h docs/reference/h200/2026-12-03h --run synthetic-food101-chosen
