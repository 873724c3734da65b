# The device calls of 2026-12-06 (h200), as run, in order, on the code of commit 8929bb0 (the working
# tree was clean at that commit). Every call named kind nvidia-h200 without needs_h200. Three first
# calls (about 03:50, 03:54 and 04:03 UTC) got no machine (181, 90 and 90 s of device time); the
# fourth started at once on one NVIDIA H200 host (16 CPU cores, driver 580.159.04, Ubuntu 24.04.3, Python 3.12.3,
# torch 2.11.0+cu130, torchvision 0.26.0+cu130, CUDA 13.0, cuDNN 9.19, DALI 2.4.0, Snakemake 9.27.1
# from ../shared/tools/gpu-bundle.sh), held 04:09-04:31 UTC for calls 1-8, then given back with
# 116 s of the session's 1,800 s left (the run used 1,323 s, the bundle's calls included). The bundle was cut into 48 MiB parts as in
# docs/reference/h100/2026-12-05/logs/calls.sh. h200-callN.log is call N's $OUT/h200.log.

# call 1 (alone, to see whether a machine would start), carrying .gpu-bundle2/part-00:
date +%s > /tmp/t0; rm -rf /tmp/parts; mkdir -p /tmp/parts && cp .gpu-bundle2/part-00 /tmp/parts/ &&
  nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv && nproc && date -u
# calls 2-5, each carrying .gpu-bundle2/part-0K (K = 1..4):
mkdir -p /tmp/parts && cp .gpu-bundle2/part-01 /tmp/parts/ && ls /tmp/parts

# call 6, carrying .gpu-bundle2/part-05 and .gpu-bundle2/unbundle.sh (h200-call6.log): the data
# (Snakemake, 99 s) and eager's job; default's was not started (225 s left, h200.sh asks 270)
mkdir -p /tmp/parts /tmp/repo/.gpu-bundle && cp .gpu-bundle2/part-05 /tmp/parts/ &&
  tar cf - --exclude=./.gpu-bundle --exclude=./.gpu-bundle2 --exclude=./results --exclude=./resources \
    --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo &&
  cp .gpu-bundle2/unbundle.sh /tmp/repo/.gpu-bundle/ && cd /tmp/repo &&
  b=$(( $(cat /tmp/t0) + 1380 - $(date +%s) )); [ $b -gt 585 ] && b=585; echo "budget $b";
  bash benchmarks/h200.sh $b data train:none train:default

# call 7 (h200-call7.log, logs/detached.log): default's job, then max-autotune's, detached (it ran
# on past the call's end: 04:19:46-04:28:25), waited for
cd /tmp/repo && b=$(( $(cat /tmp/t0) + 1380 - $(date +%s) )); [ $b -gt 585 ] && b=585; echo "budget $b";
  bash benchmarks/h200.sh $b wait train:none train:default detach:train:max-autotune wait

# call 8 (h200-call8.log): waited for max-autotune's job to end, then reduce-overhead's job
cd /tmp/repo && b=$(( $(cat /tmp/t0) + 1380 - $(date +%s) )); [ $b -gt 585 ] && b=585; echo "budget $b";
  bash benchmarks/h200.sh $b wait train:reduce-overhead

# here, from call 8's results.tgz (a superset of the earlier calls'), unpacked in /tmp/ref:
python benchmarks/h200_reference.py /tmp/ref docs/reference/h200/2026-12-06 --run synthetic-food101
