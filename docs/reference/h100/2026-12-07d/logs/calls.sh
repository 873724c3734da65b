# 2026-12-07d: the device calls as run (tool `run`, kind nvidia-h200 without needs_h200, carry
# [".gpu-extra"]: timm's benchmark.py of commit 6c376d81, sha256 7cc5d534f850..., and timm 1.0.29's
# wheel). Fourteen earlier starts in the session got no machine (the first cost 181 s of device
# time, each later one 90 s), and one call naming nvidia-h100-x1 was refused without a try (15 s).
# The fifteenth start got an NVIDIA H100 80GB HBM3 host (16 CPU cores, driver 580.159.04, kernel
# 6.18.44, torch 2.11.0+cu130, timm 1.0.29) with 434 s of the session's 1,800 s left.

# call 1 (timeout_s 370): meant for an H200 only, it exited at once on the H100
date +%s > /tmp/t0; g=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$g"; date -u; if [[ $g != *H200* ]]; then echo "not an H200"; exit 0; fi; rm -rf /tmp/repo; mkdir -p /tmp/repo && tar cf - --exclude=./.gpu-bundle --exclude=./.gpu-bundle2 --exclude=./results --exclude=./resources --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo && cd /tmp/repo && nproc; uname -r; sha256sum .gpu-extra/timm_benchmark.py; bash benchmarks/h200.sh 330 vs-timm-1p:default vs-timm-1p:none vs-timm-1p:reduce-overhead; date -u; cp results/*.csv results/*.log $OUT/ 2>/dev/null; ls results

# call 2 (timeout_s 360, on the same warm host; h200-call.log is its $OUT/h200.log): 208.6 s wall;
# `default` was not started (193 s left, h200.sh asks 200); the host was given back with 185 s left
date +%s > /tmp/t0; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; rm -rf /tmp/repo; mkdir -p /tmp/repo && tar cf - --exclude=./.gpu-bundle --exclude=./.gpu-bundle2 --exclude=./results --exclude=./resources --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo && cd /tmp/repo && nproc; uname -r; date -u; sha256sum .gpu-extra/timm_benchmark.py; bash benchmarks/h200.sh 330 vs-timm-1p:reduce-overhead vs-timm-1p:default vs-timm-1p:none; date -u; cp results/*.csv results/*.log $OUT/ 2>/dev/null; ls results
