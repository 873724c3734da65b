# The device calls of 2026-12-05 (one NVIDIA H200 host, 07:18-07:43 UTC, 1,541 s held), as run, in
# order, on the code of commit 5d2a34b. Each `run` call's working tree was this repository;
# the bundle (../shared/tools/gpu-bundle.sh, re-split into 48 MiB parts) carried DALI and Snakemake.
# .gpu-extra held timm's benchmark.py (sha256 7cc5d534..., see benchmarks/timm_bench.py) and
# timm-1.0.29-py3-none-any.whl. $OUT of each call came back; h200-callN.log is its h200.log.

# calls 1-5, each carrying .gpu-bundle2/part-0K:
mkdir -p /tmp/parts && cp .gpu-bundle2/part-00 /tmp/parts/     # ... part-01 ... part-04

# call 6, carrying .gpu-bundle2/part-05, .gpu-bundle2/unbundle.sh, .gpu-extra (h200-call6.log):
mkdir -p /tmp/parts /tmp/repo/.gpu-bundle && cp .gpu-bundle2/part-05 /tmp/parts/ &&
  tar cf - --exclude=./.gpu-bundle --exclude=./.gpu-bundle2 --exclude=./results --exclude=./resources \
    --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo &&
  cp .gpu-bundle2/unbundle.sh /tmp/repo/.gpu-bundle/ && cd /tmp/repo &&
  H200_BLOCKS=30 H200_ALONE_THREADS=4 bash benchmarks/h200.sh 585 data dali-stages loader:none
#   -> dali_stages.csv, loader_none.csv, loader_none.log

# call 7 (h200-call7.log) -> loader_default.csv, loader_default.log
cd /tmp/repo && H200_BLOCKS=30 H200_ALONE_THREADS=4 bash benchmarks/h200.sh 585 loader:default

# call 8 (h200-call8.log) -> dali_stages-hw_decoder_load=0.csv, timm/{none,default,reduce-overhead}.*
cd /tmp/repo && H200_STAGES_SET="hw_decoder_load=0" bash benchmarks/h200.sh 120 dali-stages
cd /tmp/repo && bash benchmarks/h200.sh 460 timm:none timm:default timm:reduce-overhead

# call 9 -> step_vs_timm.csv/.log (our step and the timm-style step, one batch, no loader), timm/none-again.*
cd /tmp/repo && export PYTHONUNBUFFERED=1 TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-bench \
  TRITON_CACHE_DIR=/tmp/triton-cache-bench &&
  timeout 450 python3 benchmarks/loader_overhead.py --configfile configs/synthetic-food101.yaml \
    --modes none default reduce-overhead --steps 40 --blocks 10 --warmup 15 --feeds synthetic \
    --threads 4 --time-limit 380 --out results/step_vs_timm.csv > results/step_vs_timm.log 2>&1
TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-timm TRITON_CACHE_DIR=/tmp/triton-cache-timm timeout 100 \
  python3 benchmarks/timm_bench.py --bench train --model resnet50 -b 64 --img-size 224 --num-classes 101 \
  --amp --amp-dtype float16 --channels-last --no-retry --results-file results/timm/none-again.csv

# call 10 -> step_cudnn_benchmark.csv/.log (the same, with cuDNN's autotuner on, as the training job
# has it; loader_overhead.py did not set it then), timm/{default,none}-long.* (200 timed steps)
cd /tmp/repo && timeout 300 python3 -c "
import sys, runpy, torch
torch.backends.cudnn.benchmark = True
sys.argv = ['loader_overhead.py', '--configfile', 'configs/synthetic-food101.yaml', '--modes', 'none', 'default', '--steps', '40', '--blocks', '10', '--warmup', '15', '--feeds', 'synthetic', '--threads', '4', '--out', 'results/step_cudnn_benchmark.csv']
runpy.run_path('benchmarks/loader_overhead.py', run_name='__main__')
" > results/step_cudnn_benchmark.log 2>&1
for m in default none; do extra=(); [ $m != none ] && extra=(--torchcompile inductor --torchcompile-mode $m)
  TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-timm TRITON_CACHE_DIR=/tmp/triton-cache-timm timeout 120 \
    python3 benchmarks/timm_bench.py --bench train --model resnet50 -b 64 --img-size 224 --num-classes 101 \
    --amp --amp-dtype float16 --channels-last --no-retry "${extra[@]}" --num-bench-iter 200 \
    --results-file results/timm/$m-long.csv > results/timm/$m-long.log 2>&1; done

# call 11 (h200-call11.log) -> timm/max-autotune.* (cold compile, 439 s in all)
cd /tmp/repo && bash benchmarks/h200.sh 585 timm:max-autotune
