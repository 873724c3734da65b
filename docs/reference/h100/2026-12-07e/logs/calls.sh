# 2026-12-07e: the device calls as run (tool `run`, kind nvidia-h200 without needs_h200, carry
# [".gpu-extra"]: timm's benchmark.py of commit 6c376d81, sha256 7cc5d534f850..., and timm 1.0.29's
# wheel). Seven earlier starts in the session got no machine (the first cost 91 s of device time,
# each later one 180 s), and one call naming nvidia-h100-x1 was refused without a try (15 s); the
# first four also carried .gpu-bundle2/part-00 and, on an H100, would have run
# `bash benchmarks/h200.sh 570 detach:vs-timm-1p:max-autotune wait` (no longer fitting after them).
# The eighth start got an NVIDIA H100 80GB HBM3 host (16 CPU cores, driver 580.159.04, kernel
# 6.18.44, torch 2.11.0+cu130, timm 1.0.29) with 614 s of the session's 1,800 s left. Code of
# commit 14329f6. h200-call.log is the three calls' $OUT/h200.log in turn.

# call 1 (timeout_s 560): 165.3 s wall; on the H100, `default` (-> vs_timm_1p_default-run1.csv)
date +%s > /tmp/t0; g=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$g"; rm -rf /tmp/repo; mkdir -p /tmp/repo && tar cf - --exclude=./.gpu-bundle --exclude=./.gpu-bundle2 --exclude=./results --exclude=./resources --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo && cd /tmp/repo && nproc; uname -r; date -u; sha256sum .gpu-extra/timm_benchmark.py; if [[ $g == *H200* ]]; then bash benchmarks/h200.sh 520 vs-timm-1p:default vs-timm-1p:none; else bash benchmarks/h200.sh 400 vs-timm-1p:default; fi; date -u; cp results/*.csv results/*.log $OUT/ 2>/dev/null; ls results

# call 2 (timeout_s 320, same warm host, inductor cache warm): 96.0 s wall; `default` again
# (-> vs_timm_1p_default-run2.csv)
date +%s > /tmp/t0; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cd /tmp/repo && date -u; mv results/vs_timm_1p_default.csv results/vs_timm_1p_default-run1.csv; bash benchmarks/h200.sh 290 vs-timm-1p:default; date -u; cp results/*.csv results/*.log $OUT/ 2>/dev/null; ls results

# call 3 (timeout_s 215, same host): 84.1 s wall; eager (-> vs_timm_1p_none.csv); given back with
# 170 s left
date +%s > /tmp/t0; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cd /tmp/repo && date -u; bash benchmarks/h200.sh 190 vs-timm-1p:none; date -u; cp results/*.csv results/*.log $OUT/ 2>/dev/null; ls results
