# The device calls of 2026-12-03f, exactly as run (H200, driver 580.159.04, torch 2.11.0+cu130,
# DALI 2.4.0, Snakemake 9.27.1; code of commit e27bc5d plus the untracked folder device-calls/,
# whose scripts are copied beside this file). One host for all calls (2026-12-03 17:44-18:11).
# Calls 1-4 only copied the bundle's parts:
#   mkdir -p /tmp/parts && cp .gpu-bundle/part-0K /tmp/parts/          (carry .gpu-bundle/part-0K)
# Call 5: the host's CPU layout (cpu.txt), the data, and the loader benchmark in three processes
# (CUDA sync auto and 8 connections; blocking and 8; blocking and 32), five feeds each, 10 paired
# blocks of 40 steps (loader_conn8_auto.csv, loader_conn8_blocking.csv, loader_conn32_blocking.csv).
# The files were renamed here from results/p1.csv, p2.csv, p3.csv.
mkdir -p /tmp/parts /tmp/repo/.gpu-bundle && cp .gpu-bundle/part-04 /tmp/parts/ && ls /tmp/parts && tar cf - --exclude=./.gpu-bundle --exclude=./results --exclude=./resources --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo && cp .gpu-bundle/unbundle.sh /tmp/repo/.gpu-bundle/ && cd /tmp/repo && bash device-calls/call5.sh
# Call 6: choose.py took the feed with the highest eager ratio of call 5 (1.047, 32 connections,
# blocking sync, 512 px decoder buffers, 4 threads, fetch on a thread) and wrote
# configs/synthetic-food101-tuned.yaml; then eager's and default's training jobs with it
cd /tmp/repo && bash device-calls/call6.sh
# Call 7: reduce-overhead's job, then max-autotune's, detached (a cold max-autotune job is longer than a call)
cd /tmp/repo && H200_CONFIGS="configs/synthetic-food101.yaml configs/synthetic-food101-tuned.yaml" bash benchmarks/h200.sh 590 train:reduce-overhead detach:train:max-autotune wait; grep -h "INFO" results/synthetic-food101-tuned/logs/train/*.log | grep -v "torch.compile" | tail -12
# Call 8: waited for max-autotune's job to end (it did, 8 min 56 s after it started)
cd /tmp/repo && H200_CONFIGS="configs/synthetic-food101.yaml configs/synthetic-food101-tuned.yaml" bash benchmarks/h200.sh 280 wait; grep -h "INFO" results/synthetic-food101-tuned/logs/train/max-autotune.log | grep -v "torch.compile" | tail -6; tail -5 results/detached.log
# Call 9: default under the loader benchmark with the run's settings, with and without 2 reserved
# cores (loader_default_conn32_blocking.csv, renamed from results/p4.csv)
cd /tmp/repo && export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-bench TRITON_CACHE_DIR=/tmp/triton-cache-bench && H=decoder.preallocate_width_hint=512,decoder.preallocate_height_hint=512 && timeout 185 python3 benchmarks/loader_overhead.py --configfile configs/synthetic-food101.yaml --steps 40 --blocks 10 --warmup 15 --no-timm-style --threads 4 --modes default --cuda-sync blocking --cuda-max-connections 32 --feeds synthetic dali:$H,threads=4,fetch=thread dali:$H,threads=4,fetch=thread,reserve_cores=2 --out results/p4.csv >results/p4.log 2>&1; cp results/p4.* $OUT/; grep -h "images/s\|/synthetic" results/p4.log
# Here: the summary and plots from call 8's packed results (all four modes)
#   python benchmarks/h200_reference.py <unpacked results.tgz> docs/reference/h200/2026-12-03f --run synthetic-food101-tuned
