# The one device call of 2026-12-07b that ran to its end, as run, on the code of commit 554f383
# (the working tree clean at it). Session from 03:34 UTC: six earlier calls (all naming
# nvidia-h200, without needs_h200) got no machine (90-181 s of device time each), and a seventh
# got one that was taken back for other work before the call finished (327 s, nothing came back).
# This call named nvidia-h200 and ran on an NVIDIA H100 80GB HBM3 host (16 CPU cores, driver
# 580.159.04, kernel 6.18.44-fc-v1272-gpu, torch 2.11.0+cu130, timm 1.0.29, Python 3.12),
# 05:05-05:09 UTC, with 482 s of the session's 1,800 s left; given back with 220 s left. .gpu-extra
# carried timm's benchmark.py (sha256 7cc5d534f850...) and timm-1.0.29-py3-none-any.whl; no bundle,
# no data (--classes 101). logs/h200-call.log is its $OUT/h200.log.
date +%s > /tmp/t0; rm -rf /tmp/repo; mkdir -p /tmp/repo &&
  tar cf - --exclude=./.gpu-bundle --exclude=./.gpu-bundle2 --exclude=./results --exclude=./resources \
    --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo && cd /tmp/repo &&
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uname -r; date -u;
  sha256sum .gpu-extra/timm_benchmark.py; bash benchmarks/h200.sh 320 vs-timm-1p:default vs-timm-1p:none; date -u;
  cp results/*.csv results/*.log $OUT/ 2>/dev/null; ls results
# -> vs_timm_1p_default.csv, vs_timm_1p_none.csv (30 rounds of 50 steps each side)
