# 2026-12-07f: the device calls as run (tool `run`, kind nvidia-h200 without needs_h200, carry
# [".gpu-extra"]: timm's benchmark.py of commit 6c376d81, sha256 7cc5d534f850..., and timm 1.0.29's
# wheel). The session's first two starts got no machine (181 s and 90 s of device time); the third
# got an NVIDIA H100 80GB HBM3 host (16 CPU cores, driver 580.159.04, kernel 6.18.44, Python 3.12.3,
# torch 2.11.0+cu130, timm 1.0.29) with 1,529 s of the session's 1,800 s left (the lease held it
# about 300 s before the first call began; device time charged per call: its wall time plus 13-29 s).
# Code of commit 3147c8e (train.gc_frozen in place: the one-process rounds run
# with the heap frozen). h200-call.log is the five calls' $OUT/h200.log in turn; the gc_pause logs
# are gc_pause.py's output as printed.

# call 1 (timeout_s 580): 486.3 s wall. gc_pause.py under `default` (cold compile), 3000 steps per
# heap: the frozen heap's line never came, `timeout 250` ended it (logs/gc_pause_default-run1.log);
# then `default` against timm (cold compile; -> vs_timm_1p_default-run1.csv)
date +%s > /tmp/t0; g=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$g"; rm -rf /tmp/repo; mkdir -p /tmp/repo && tar cf - --exclude=./.gpu-bundle --exclude=./.gpu-bundle2 --exclude=./results --exclude=./resources --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo && cd /tmp/repo && nproc; uname -r; date -u; sha256sum .gpu-extra/timm_benchmark.py; if [[ $g == *H200* ]]; then bash benchmarks/h200.sh 545 vs-timm-1p:none vs-timm-1p:default; else mkdir -p results; timeout 250 python3 benchmarks/gc_pause.py --configfile configs/synthetic-food101.yaml --mode default --steps 3000 2>&1 | tee results/gc_pause_default.log; bash benchmarks/h200.sh $((545 - $(date +%s) + $(cat /tmp/t0))) vs-timm-1p:default; fi; date -u; cp results/*.csv results/*.log $OUT/ 2>/dev/null; ls results

# call 2 (timeout_s 450, same warm host): 207.2 s wall. gc_pause.py under `default` again (inductor
# cache warm), 1500 steps per heap (logs/gc_pause_default-run2.log); eager against timm
# (-> vs_timm_1p_none-run1.csv)
date +%s > /tmp/t0; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cd /tmp/repo && date -u; timeout 200 python3 benchmarks/gc_pause.py --configfile configs/synthetic-food101.yaml --mode default --steps 1500 2>&1 | grep -v Warning | tee results/gc_pause_default-run2.log; date -u; bash benchmarks/h200.sh 200 vs-timm-1p:none; date -u; cp results/*.csv results/*.log $OUT/ 2>/dev/null; ls results

# call 3 (timeout_s 420, same host): 248.9 s wall. gc_pause.py eager (logs/gc_pause_none.log);
# reduce-overhead against timm (-> vs_timm_1p_reduce-overhead.csv)
date +%s > /tmp/t0; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cd /tmp/repo && date -u; timeout 120 python3 benchmarks/gc_pause.py --configfile configs/synthetic-food101.yaml --mode none --steps 1500 2>&1 | grep -v Warning | tee results/gc_pause_none.log; date -u; bash benchmarks/h200.sh 260 vs-timm-1p:reduce-overhead; date -u; cp results/*.csv results/*.log $OUT/ 2>/dev/null; ls results

# call 4 (timeout_s 330, same host): 124.8 s wall. `default` again, cache warm
# (-> vs_timm_1p_default-run2.csv)
date +%s > /tmp/t0; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cd /tmp/repo && date -u; mv results/vs_timm_1p_default.csv results/vs_timm_1p_default-run1.csv; bash benchmarks/h200.sh 300 vs-timm-1p:default; date -u; cp results/*.csv results/*.log $OUT/ 2>/dev/null; ls results

# call 5 (timeout_s 230, same host): 140.1 s wall. Eager again (-> vs_timm_1p_none-run2.csv); given
# back with 243 s left
date +%s > /tmp/t0; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cd /tmp/repo && date -u; mv results/vs_timm_1p_none.csv results/vs_timm_1p_none-run1.csv; bash benchmarks/h200.sh 200 vs-timm-1p:none; date -u; mkdir -p $OUT/r; cp results/vs_timm_1p_none*.csv results/*.log $OUT/r/ 2>/dev/null; ls results
