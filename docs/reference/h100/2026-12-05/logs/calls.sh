# The device calls of 2026-12-05 that measured something (one NVIDIA H100 80GB HBM3 host, 16 CPU
# cores, 13:00-13:14 UTC), as run, in order, on the code of commit 5c6007a, when the loader still
# mapped each file (loader.reader_options {}): the feed `dali` below is DALI's default (mmap), and
# `dali:reader.dont_use_mmap=true` reads the files, the loader's default since. No H200 could be
# had this session (five refusals); an earlier H100 host of the same session (12:42) was given
# back idle before it measured anything. Each `run` call's working tree was this repository; the
# bundle (../shared/tools/gpu-bundle.sh, re-split into 48 MiB parts) carried DALI and Snakemake.
# $OUT of each call came back; h200-callN.log is its h200.log.

# calls 1-5, each carrying .gpu-bundle2/part-0K:
rm -rf /tmp/parts /tmp/repo; mkdir -p /tmp/parts && cp .gpu-bundle2/part-00 /tmp/parts/   # ... part-01 ... part-04

# call 6, carrying .gpu-bundle2/part-05, .gpu-bundle2/unbundle.sh, .gpu-extra (h200-call6.log)
#   -> dali_stages.csv (DALI alone by stage, mapping the files), loader_none.csv/.log
#   (the dont_use_mmap dali-stages run was not started: 80 s left, 90 needed)
mkdir -p /tmp/parts /tmp/repo/.gpu-bundle && cp .gpu-bundle2/part-05 /tmp/parts/ &&
  tar cf - --exclude=./.gpu-bundle --exclude=./.gpu-bundle2 --exclude=./results --exclude=./resources \
    --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo &&
  cp .gpu-bundle2/unbundle.sh /tmp/repo/.gpu-bundle/ && cd /tmp/repo &&
  bash benchmarks/h200.sh 260 data dali-stages
H200_STAGES_SET="reader.dont_use_mmap=true" bash benchmarks/h200.sh 95 dali-stages
export H200_BLOCKS=30 H200_ALONE_THREADS=4 H200_FEEDS="synthetic dali dali:reader.dont_use_mmap=true"
bash benchmarks/h200.sh 190 loader:none

# call 7 (h200-call7.log) -> loader_default.csv/.log
cd /tmp/repo && export H200_BLOCKS=30 H200_ALONE_THREADS=4 H200_FEEDS="synthetic dali dali:reader.dont_use_mmap=true"
bash benchmarks/h200.sh 350 loader:default

# call 8 (h200-call8.log) -> loader_none-rep.csv/.log: eager again, the two DALI feeds in the other order
cd /tmp/repo && export H200_BLOCKS=30 H200_ALONE_THREADS=4 H200_FEEDS="synthetic dali:reader.dont_use_mmap=true dali"
H200_TAG=rep bash benchmarks/h200.sh 185 loader:none
