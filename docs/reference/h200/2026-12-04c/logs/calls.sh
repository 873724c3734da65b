# The device calls of 2026-12-04c, exactly as run (H200, driver 580.159.04, torch 2.11.0+cu130,
# DALI 2.4.0, Snakemake 9.27.1, Python 3.12.3; code of commit 405b1bb, nothing untracked), one host
# (kernel 6.18.44-fc-v1252), 18:02-18:27 UTC, 1,583 s of device time, all calls issued one after
# another so that they ran back to back (the host goes back 30 s after a call ends).
# The loader's new defaults (commit 6328734): loader.fetch inline, loader.batches_per_fetch 4. No
# loader benchmark and no chooser: the four jobs ran with the preset's own settings (run
# synthetic-food101), each measuring fed / one-batch paired in 20 rounds of 50 + 50 steps after its
# epochs, with the host's work per step in those blocks (paired_blocks_host_per_step).
# A first try carried the bundle's 56 MiB parts: with the working tree (9.5 MiB) over the 64 MiB a
# call may carry, those calls were refused, and the call that carried part-04 alone ran on the host
# without the bundle ("bundle missing", nothing else). The parts were cut again into 48 MiB ones:
#   mkdir -p .gpu-bundle2 && cat .gpu-bundle/part-0* | split -b 48M -d -a 2 - .gpu-bundle2/part-
#   cp .gpu-bundle/unbundle.sh .gpu-bundle2/      (.gpu-bundle2/ listed in .git/info/exclude)
# Calls 1-5 only copied those parts (call 1 first removed what the refused try had left):
rm -rf /tmp/parts /tmp/repo; mkdir -p /tmp/parts && cp .gpu-bundle2/part-00 /tmp/parts/ && ls /tmp/parts && nproc   # (carry .gpu-bundle2/part-00)
#   mkdir -p /tmp/parts && cp .gpu-bundle2/part-0K /tmp/parts/ && ls /tmp/parts      (K = 1..4, carry .gpu-bundle2/part-0K)
# Call 6: the data, then max-autotune's job started detached (its cold compile outlasts the call)
mkdir -p /tmp/parts /tmp/repo/.gpu-bundle && cp .gpu-bundle2/part-05 /tmp/parts/ && ls /tmp/parts && tar cf - --exclude=./.gpu-bundle --exclude=./.gpu-bundle2 --exclude=./results --exclude=./resources --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo && cp .gpu-bundle2/unbundle.sh /tmp/repo/.gpu-bundle/ && cd /tmp/repo && bash benchmarks/h200.sh 585 data detach:train:max-autotune wait; tail -4 $OUT/h200.log; uname -r
# Call 7: waited for max-autotune's job (it ended 237 s into the call), then reduce-overhead's;
# eager's did not fit the call's time left
cd /tmp/repo && bash benchmarks/h200.sh 585 wait train:reduce-overhead train:none train:default; grep -h INFO results/synthetic-food101/logs/train/*.log | grep "epoch\|synthetic batch\|paired\|host per step" | tail -40
# Call 8: eager's and default's jobs; the loader benchmark after them (eager, 30 paired rounds of
# the new defaults against fetch thread with 1 training batch per fetch) was not started: 97 s left
cd /tmp/repo && s=$(date +%s) && bash benchmarks/h200.sh 585 wait train:reduce-overhead train:none train:default; H200_FEEDS="synthetic dali dali:fetch=thread,batches_per_fetch=1" H200_BLOCKS=30 H200_ALONE_THREADS=4 bash benchmarks/h200.sh $((585 - $(date +%s) + s)) loader:none; grep -h INFO results/synthetic-food101/logs/train/*.log | grep "epoch\|synthetic batch\|paired\|host per step" | tail -40
# Here, from call 8's packed results (results.tgz, unpacked in /tmp/h):
#   python benchmarks/h200_reference.py /tmp/h docs/reference/h200/2026-12-04c --run synthetic-food101
