# 2026-12-07g: the device calls as run (tool `run`, carry [".gpu-extra"]: timm's benchmark.py of
# commit 6c376d81, sha256 7cc5d534f850..., and timm 1.0.29's wheel). The session's first start
# (kind nvidia-h200) got no machine (181 s of device time), nor did the second (90 s); the third (kind nvidia-h200, without needs_h200) got an NVIDIA H100 80GB
# HBM3 host (16 CPU cores, driver 580.159.04, kernel 6.18.44, Python 3.12.3, torch 2.11.0+cu130,
# timm 1.0.29) with 1,529 s of the session's 1,800 s left; four calls back to back; given back
# with 199 s left. Code of commit 09394e2 (step_vs_timm.py --also; h200.sh H200_VS_TIMM_1P_ALSO).
# h200-call.log is the four calls' $OUT/h200.log in turn; logs/scaler_host_cost.log is call 1's.

# call 1 (timeout_s 600): 506.4 s wall (budget 1,529 -> 934 s). scaler-cost; `default` against
# timm with our step on timm's model and ours without the scaler beside it (cold compile;
# -> vs_timm_1p_default-run1.csv, -run1-profile.csv); eager against timm (-> vs_timm_1p_none-run1.csv)
date +%s > /tmp/t0; g=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$g"; rm -rf /tmp/repo; mkdir -p /tmp/repo && tar cf - --exclude=./.gpu-bundle --exclude=./.gpu-bundle2 --exclude=./results --exclude=./resources --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo && cd /tmp/repo && nproc; uname -r; date -u; H200_VS_TIMM_1P_ALSO="ours:timm-model ours:no-scaler" bash benchmarks/h200.sh 400 scaler-cost vs-timm-1p:default; date -u; cp results/*.csv results/*.log $OUT/ 2>/dev/null; bash benchmarks/h200.sh $((565 - $(date +%s) + $(cat /tmp/t0))) vs-timm-1p:none; date -u; cp results/*.csv results/*.log $OUT/ 2>/dev/null; ls results

# call 2 (timeout_s 460, same warm host): 294.7 s wall (-> 627 s left). `default` again, the four
# arms, 40 rounds, inductor cache warm (-> vs_timm_1p_default-run2.csv, -run2-profile.csv)
date +%s > /tmp/t0; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cd /tmp/repo && date -u; mv results/vs_timm_1p_default.csv results/vs_timm_1p_default-run1.csv; mv results/vs_timm_1p_default-profile.csv results/vs_timm_1p_default-run1-profile.csv; H200_VS_TIMM_1P_ROUNDS=40 H200_VS_TIMM_1P_ALSO="ours:timm-model ours:no-scaler" bash benchmarks/h200.sh 420 vs-timm-1p:default; date -u; cp results/vs_timm_1p_default*.csv results/*.log $OUT/ 2>/dev/null; ls results

# call 3 (timeout_s 560, same host): 208.7 s wall (-> 408 s left). `reduce-overhead` against timm
# with ours without the scaler beside it (-> vs_timm_1p_reduce-overhead.csv, -profile.csv)
date +%s > /tmp/t0; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cd /tmp/repo && date -u; H200_VS_TIMM_1P_ALSO="ours:no-scaler" bash benchmarks/h200.sh 530 vs-timm-1p:reduce-overhead; date -u; cp results/vs_timm_1p_reduce*.csv results/*.log $OUT/ 2>/dev/null; ls results

# call 4 (timeout_s 350, same host): 197.4 s wall (-> 201 s left; given back). Eager again, the
# four arms (-> vs_timm_1p_none-run2.csv, -run2-profile.csv)
date +%s > /tmp/t0; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cd /tmp/repo && date -u; mv results/vs_timm_1p_none.csv results/vs_timm_1p_none-run1.csv; mv results/vs_timm_1p_none-profile.csv results/vs_timm_1p_none-run1-profile.csv; H200_VS_TIMM_1P_ALSO="ours:timm-model ours:no-scaler" bash benchmarks/h200.sh 320 vs-timm-1p:none; date -u; cp results/vs_timm_1p_none*.csv results/*.log $OUT/ 2>/dev/null; ls results
