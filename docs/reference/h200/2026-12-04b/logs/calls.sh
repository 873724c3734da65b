# The device calls of 2026-12-04b, exactly as run (H200, driver 580.159.04, torch 2.11.0+cu130,
# DALI 2.4.0, Snakemake 9.27.1, Python 3.12.3; code of commit 0131fe6, nothing untracked), one host
# (kernel 6.18.44-fc-v1252), 16:10-16:36 UTC, 1,576 s of device time, all calls issued one after
# another so that they ran back to back (the host goes back 30 s after a call ends).
# No loader benchmark and no chooser this time: the four jobs ran with the preset's own settings
# (run synthetic-food101), each measuring fed / one-batch paired in 20 rounds of 50 + 50 steps
# after its epochs (the preset's train.upper_bound_steps: 1000).
# Calls 1-4 only copied the bundle's parts:
#   mkdir -p /tmp/parts && cp .gpu-bundle/part-0K /tmp/parts/          (carry .gpu-bundle/part-0K)
# Call 5: the data, then max-autotune's job started detached (its cold compile outlasts the call)
mkdir -p /tmp/parts /tmp/repo/.gpu-bundle && cp .gpu-bundle/part-04 /tmp/parts/ && ls /tmp/parts && tar cf - --exclude=./.gpu-bundle --exclude=./results --exclude=./resources --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo && cp .gpu-bundle/unbundle.sh /tmp/repo/.gpu-bundle/ && cd /tmp/repo && bash benchmarks/h200.sh 585 data detach:train:max-autotune wait; tail -4 $OUT/h200.log; uname -r
# Call 6: waited for max-autotune's job (it ended 152 s into the call), then reduce-overhead's and
# eager's jobs
cd /tmp/repo && bash benchmarks/h200.sh 585 wait train:reduce-overhead train:none train:default; grep -h INFO results/synthetic-food101/logs/train/*.log | grep "epoch\|synthetic batch\|paired" | tail -30
# Call 7: default's job
cd /tmp/repo && bash benchmarks/h200.sh 590 wait train:reduce-overhead train:none train:default; grep -h INFO results/synthetic-food101/logs/train/*.log | grep "epoch\|synthetic batch\|paired" | tail -40
# Call 8: default's job once more with the training threads pinned to 2 reserved cores
# (../pinned-default/: its CSV, JSON, log and the overlay); eager's did not fit the device time left
cd /tmp/repo && printf 'run: synthetic-food101-pinned\nloader:\n  reserve_cores: 2\n  pin_training: true\n' > configs/synthetic-food101-pinned.yaml && H200_CONFIGS="configs/synthetic-food101.yaml configs/synthetic-food101-pinned.yaml" bash benchmarks/h200.sh 400 train:default train:none; cp configs/synthetic-food101-pinned.yaml $OUT/; grep -h INFO results/synthetic-food101-pinned/logs/train/*.log | grep "epoch\|synthetic batch\|paired\|pinned\|cpus" | tail -20
# Here, from call 7's packed results (results.tgz, unpacked in /tmp/h):
#   python benchmarks/h200_reference.py /tmp/h docs/reference/h200/2026-12-04b --run synthetic-food101
