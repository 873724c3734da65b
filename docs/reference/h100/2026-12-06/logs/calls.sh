# The device call of 2026-12-06 that measured something, as run, on the code of commit 0c938f0
# (step_vs_timm --one-process --classes; h200.sh running timm: and vs-timm-1p: stages without the
# bundle or the data). It named kind nvidia-h200 without needs_h200 and ran on an NVIDIA H100 80GB
# HBM3 host (16 CPU cores, driver 580.159.04, kernel 6.18.44-fc-v1272-gpu, torch 2.11.0+cu130,
# timm 1.0.29, Python 3.12), 01:33-01:43 UTC. Four earlier tries this session got no machine (each
# failed start cost 3 to 5 minutes of the session's device time, each call refused after it 15 s),
# so the bundle's calls and the reference run planned for this session never ran.
# The working tree was this repository; .gpu-extra carried timm's benchmark.py (sha256
# 7cc5d534f850...) and timm-1.0.29-py3-none-any.whl. logs/h200-call.log is its $OUT/h200.log.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r; nproc; date -u;
  bash benchmarks/h200.sh 570 vs-timm-1p:none vs-timm-1p:default vs-timm-1p:reduce-overhead; date -u;
  cp results/vs_timm_1p_*.csv $OUT/
# -> vs_timm_1p_none.csv, vs_timm_1p_default.csv (30 rounds each). vs-timm-1p:reduce-overhead warmed
# both steps up (compiles included: timm 31 s, ours 28 s) and then printed no round in the 5.5
# minutes left before the call's budget stopped it (exit 124): one process with two CUDA-graph
# compiled models never finished a round of 2 x 50 steps. Why is not known (no traceback was taken;
# the device time left did not allow another start). step_vs_timm refuses those modes since.
# The sign test's p in vs_timm_1p_none.csv reads 0.0: the script then rounded it to 4 decimals;
# 29 of 30 rounds ahead is p = 2 x 31 / 2^30 = 5.8e-8 (two-sided), printed to 3 significant digits since.
