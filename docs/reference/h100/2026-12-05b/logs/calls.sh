# The device calls of 2026-12-05b that measured something, as run, in order, on the code of commit
# e0620ff (loader.reader_options {dont_use_mmap: true}: the feed `dali` below reads the files,
# `dali:reader.dont_use_mmap=false` maps them, DALI's default). Every call named kind nvidia-h200
# without needs_h200, and every one ran on an NVIDIA H100 80GB HBM3 host (16 CPU cores, driver
# 580.159.04): two hosts, one after the other (calls 1-8 18:09-18:24 UTC, calls 9-14 19:03-19:10
# UTC; the first was given back idle between). Each `run` call's working tree was this repository;
# the bundle (../shared/tools/gpu-bundle.sh, re-split into 48 MiB parts: see
# docs/reference/h100/2026-12-05/logs/calls.sh) carried DALI and Snakemake. .gpu-extra held timm's
# benchmark.py (sha256 7cc5d534f850...) and timm-1.0.29-py3-none-any.whl. $OUT of each call came
# back; h200-callN.log is its h200.log.

# first host, calls 1-5, each carrying .gpu-bundle2/part-0K:
rm -rf /tmp/parts; mkdir -p /tmp/parts && cp .gpu-bundle2/part-00 /tmp/parts/   # ... part-01 ... part-04

# call 6, carrying .gpu-bundle2/part-05, .gpu-bundle2/unbundle.sh, .gpu-extra (h200-call6.log)
#   -> loader_none.csv/.log, dali_stages.csv (DALI alone by stage, reading the files)
mkdir -p /tmp/parts /tmp/repo/.gpu-bundle && cp .gpu-bundle2/part-05 /tmp/parts/ &&
  tar cf - --exclude=./.gpu-bundle --exclude=./.gpu-bundle2 --exclude=./results --exclude=./resources \
    --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo &&
  cp .gpu-bundle2/unbundle.sh /tmp/repo/.gpu-bundle/ && cd /tmp/repo &&
  export H200_BLOCKS=30 H200_ALONE_THREADS=4 H200_FEEDS="synthetic dali dali:reader.dont_use_mmap=false" &&
  bash benchmarks/h200.sh 555 data loader:none dali-stages

# call 7 (h200-call7.log) -> loader_default.csv/.log
cd /tmp/repo && export H200_BLOCKS=30 H200_ALONE_THREADS=4 H200_FEEDS="synthetic dali dali:reader.dont_use_mmap=false" &&
  bash benchmarks/h200.sh 360 loader:default

# call 8 (h200-call8.log) -> vs_timm_default.csv (stopped after 3 of 4 rounds by its time limit)
cd /tmp/repo && H200_VS_TIMM_ROUNDS=4 bash benchmarks/h200.sh 500 vs-timm:default

# second host, calls 9-13 as calls 1-5; call 14, carrying what call 6 carried (h200-call14.log)
#   -> vs_timm_none.csv (the data made again: a fresh host)
mkdir -p /tmp/parts /tmp/repo/.gpu-bundle && cp .gpu-bundle2/part-05 /tmp/parts/ &&
  tar cf - --exclude=./.gpu-bundle --exclude=./.gpu-bundle2 --exclude=./results --exclude=./resources \
    --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo &&
  cp .gpu-bundle2/unbundle.sh /tmp/repo/.gpu-bundle/ && cd /tmp/repo &&
  H200_VS_TIMM_ARMS="timm ours" H200_VS_TIMM_ROUNDS=6 bash benchmarks/h200.sh 540 data vs-timm:none
