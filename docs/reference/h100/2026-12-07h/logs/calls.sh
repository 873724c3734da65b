# 2026-12-07h: the device calls as run (tool `run`, carry [".gpu-extra"]: timm's benchmark.py of
# commit 6c376d81, sha256 7cc5d534f850..., and timm 1.0.29's wheel). The session's first five starts
# got no machine (20:04 and 20:13 UTC kind nvidia-h200, 91 s and 90 s; 20:52, 21:04 nvidia-h200, 180 s each;
# 21:16 nvidia-h100-x1, 90 s; between them status said none_now, and at 20:39 that new loans were
# paused); the sixth (21:28, kind nvidia-h200, without needs_h200) got an NVIDIA H100 80GB HBM3 host
# (16 CPU cores, driver 580.159.04, kernel 6.18.44, Python 3.12.3, torch 2.11.0+cu130, timm
# 1.0.29) with 1,169 s of the session's 1,800 s left; three calls back to back; given back with
# 171 s left. Code of commit c4d9cfc (train.FusedLossScaler, the job's fp16 scaler; the side stream
# made once per process, 005ebb4). h200-call.log is the three calls' $OUT/h200.log in turn;
# logs/scaler_host_cost.log is call 1's.

# call 1 (timeout_s 600): 512.6 s wall (-> 567 s left). scaler-cost; `default` against timm with
# our step with torch.amp.GradScaler beside it (cold compile; -> vs_timm_1p_default-run1.csv,
# -run1-profile.csv); eager the same (-> vs_timm_1p_none.csv, -profile.csv)
date +%s > /tmp/t0; g=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$g"; rm -rf /tmp/repo; mkdir -p /tmp/repo && tar cf - --exclude=./.gpu-bundle --exclude=./.gpu-bundle2 --exclude=./results --exclude=./resources --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo && cd /tmp/repo && nproc; uname -r; date -u; H200_VS_TIMM_1P_ALSO="ours:torch-scaler" bash benchmarks/h200.sh 400 scaler-cost vs-timm-1p:default; date -u; cp results/*.csv results/*.log $OUT/ 2>/dev/null; H200_VS_TIMM_1P_ALSO="ours:torch-scaler" bash benchmarks/h200.sh $((565 - $(date +%s) + $(cat /tmp/t0))) vs-timm-1p:none; date -u; cp results/*.csv results/*.log $OUT/ 2>/dev/null; ls results

# call 2 (timeout_s 510, same warm host): 194.3 s wall (-> 362 s left). `reduce-overhead`, the same
# three arms (-> vs_timm_1p_reduce-overhead.csv, -profile.csv)
date +%s > /tmp/t0; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cd /tmp/repo && date -u; H200_VS_TIMM_1P_ALSO="ours:torch-scaler" bash benchmarks/h200.sh 470 vs-timm-1p:reduce-overhead; date -u; cp results/vs_timm_1p_reduce*.csv results/*.log $OUT/ 2>/dev/null; ls results

# call 3 (timeout_s 320, same host): 179.6 s wall (-> 174 s left; given back). `default` again,
# inductor cache warm (-> vs_timm_1p_default-run2.csv, -run2-profile.csv)
date +%s > /tmp/t0; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cd /tmp/repo && date -u; mv results/vs_timm_1p_default.csv results/vs_timm_1p_default-run1.csv; mv results/vs_timm_1p_default-profile.csv results/vs_timm_1p_default-run1-profile.csv; H200_VS_TIMM_1P_ALSO="ours:torch-scaler" bash benchmarks/h200.sh 290 vs-timm-1p:default; date -u; cp results/vs_timm_1p_default*.csv results/*.log $OUT/ 2>/dev/null; ls results
