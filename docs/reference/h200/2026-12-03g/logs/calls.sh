# The device calls of 2026-12-03g, exactly as run (H200, driver 580.159.04, torch 2.11.0+cu130,
# DALI 2.4.0, Snakemake 9.27.1; code of commit 05803df plus the untracked folder device-calls/, whose
# scripts are copied beside this file). Two hosts: host A (calls 1-7, 19:17-19:40, kernel
# 6.18.44-fc-v1147, cpu.txt) and, after host A was taken back for other work, host B (calls 8-13,
# kernel 6.18.44-fc-v1252).
# Calls 1-4 (and 8-11 on host B) only copied the bundle's parts:
#   mkdir -p /tmp/parts && cp .gpu-bundle/part-0K /tmp/parts/          (carry .gpu-bundle/part-0K)
# Call 5: the host's CPU layout (cpu.txt), the data, `default` under the loader benchmark with 24
# paired blocks, choose.py, default's job with the chosen overlay. The benchmark did not finish
# within its 200 s (logs/loader_default_timed_out.log: only DALI alone was printed), so choose.py
# found no CSV and default's job ran with configs/synthetic-food101.yaml alone: the plain defaults,
# run `synthetic-food101` (plain-defaults/).
mkdir -p /tmp/parts /tmp/repo/.gpu-bundle && cp .gpu-bundle/part-04 /tmp/parts/ && ls /tmp/parts && tar cf - --exclude=./.gpu-bundle --exclude=./results --exclude=./resources --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo && cp .gpu-bundle/unbundle.sh /tmp/repo/.gpu-bundle/ && cd /tmp/repo && bash device-calls/call5.sh
# Call 6: the benchmark again with 12 paired blocks (inductor cache of call 5 warm:
# loader_default.csv), choose.py (thread 0.985 against inline 0.953: logs/synthetic-food101-fetch-thread.yaml,
# the defaults under another run name), then default's and eager's jobs with it (timings/, logs/)
cd /tmp/repo && S=$(date +%s) && export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-bench TRITON_CACHE_DIR=/tmp/triton-cache-bench && timeout 250 python3 benchmarks/loader_overhead.py --configfile configs/synthetic-food101.yaml --modes default --steps 40 --blocks 12 --warmup 15 --no-timm-style --feeds synthetic dali dali:fetch=inline dali-fetch-only --out results/bench_default.csv >results/bench_default.log 2>&1; echo "bench rc $? at +$(( $(date +%s) - S )) s"; cp results/bench_default.* $OUT/; grep -h "images/s\|per step\|/synthetic\|warm-up" results/bench_default.log; python3 device-calls/choose.py results/bench_default.csv >/tmp/overlay && O=$(cat /tmp/overlay) && cat $O && cp $O $OUT/ && unset TORCHINDUCTOR_CACHE_DIR TRITON_CACHE_DIR && H200_CONFIGS="configs/synthetic-food101.yaml $O" bash benchmarks/h200.sh $(( 590 - ($(date +%s) - S) )) train:default train:none; grep -h "INFO" results/synthetic-food101*/logs/train/*.log | grep -v "torch.compile" | tail -16
# Call 7 (nothing came back: host A was taken back for other work during it): reduce-overhead's
# job with the same overlay, then default under the benchmark with 48 paired blocks
cd /tmp/repo && S=$(date +%s) && H200_CONFIGS="configs/synthetic-food101.yaml configs/synthetic-food101-fetch-thread.yaml" bash benchmarks/h200.sh 200 train:reduce-overhead; grep -h "INFO" results/synthetic-food101-fetch-thread/logs/train/reduce-overhead.log | grep -v "torch.compile" | tail -5; export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-bench TRITON_CACHE_DIR=/tmp/triton-cache-bench && timeout $(( 440 - ($(date +%s) - S) )) python3 benchmarks/loader_overhead.py --configfile configs/synthetic-food101.yaml --modes default --steps 40 --blocks 48 --warmup 15 --no-timm-style --feeds synthetic dali dali:fetch=inline --out results/bench_default48.csv >results/bench_default48.log 2>&1; echo "bench rc $? at +$(( $(date +%s) - S )) s"; cp results/bench_default48.* $OUT/; grep -h "images/s\|per step\|/synthetic\|warm-up" results/bench_default48.log
# Host B, call 12: call8.sh (a smaller synthetic set, small.yaml: 20,200 images of the same kind,
# for device time). Its data stage failed: Snakemake's --configfile takes every word after it, so
# the target file list was read as a third config file (FileNotFoundError); the benchmark then
# found no file list.
mkdir -p /tmp/parts /tmp/repo/.gpu-bundle && cp .gpu-bundle/part-04 /tmp/parts/ && ls /tmp/parts && tar cf - --exclude=./.gpu-bundle --exclude=./results --exclude=./resources --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo && cp .gpu-bundle/unbundle.sh /tmp/repo/.gpu-bundle/ && cd /tmp/repo && bash device-calls/call8.sh
# Call 13: the data with --until filelists, then default under the benchmark, one-batch against
# the defaults (batches fetched on a thread), 50 paired blocks of 40 steps (loader_default_50blocks.csv)
cd /tmp/repo && S=$(date +%s); C="configs/synthetic-food101.yaml device-calls/small.yaml"; timeout 90 python3 -m snakemake --cores 16 --configfile $C --until filelists >results-data.log 2>&1; echo "data rc $?"; grep -i "error\|exception" results-data.log | head -5; ls resources resources/*/filelists; timeout $(( 240 - ($(date +%s) - S) )) python3 benchmarks/loader_overhead.py --configfile $C --modes default --steps 40 --blocks 50 --warmup 15 --no-timm-style --feeds synthetic dali --out $OUT/bench_default50.csv >$OUT/bench_default50.log 2>&1; echo "bench rc $? at +$(( $(date +%s) - S )) s"; grep -h "images/s\|per step\|/synthetic\|warm-up\|Error" $OUT/bench_default50.log
# Here: the summary and plots of the fetch-thread run (eager and default) from call 6's packed results
#   python benchmarks/h200_reference.py <unpacked results.tgz> docs/reference/h200/2026-12-03g \
#       --run synthetic-food101-fetch-thread --missing "reduce-overhead=not run: ..." --missing "max-autotune=not run: ..."
