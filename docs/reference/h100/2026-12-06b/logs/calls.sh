# The device calls of 2026-12-06b, as run, in order, on the code of commit c8e5f72 (the working
# tree was clean at that commit). Every call named kind nvidia-h200 without needs_h200 and ran on
# one NVIDIA H100 80GB HBM3 host (16 CPU cores, driver 580.159.04, Ubuntu 24.04.3, Python 3.12.3,
# torch 2.11.0+cu130, torchvision 0.26.0+cu130, CUDA 13.0, cuDNN 9.19, DALI 2.4.0, Snakemake from
# ../shared/tools/gpu-bundle.sh, timm 1.0.29), 02:49-03:13 UTC, held throughout (1,383 s of the
# session's 1,800 s of device time). The bundle was cut into 48 MiB parts as in
# docs/reference/h100/2026-12-05/logs/calls.sh. .gpu-extra held timm's benchmark.py (sha256
# 7cc5d534f850...) and timm-1.0.29-py3-none-any.whl. h200-callN.log is call N's $OUT/h200.log.

# call 1 (alone, to see whether a machine would start), carrying .gpu-bundle2/part-00:
date +%s > /tmp/t0; rm -rf /tmp/parts; mkdir -p /tmp/parts && cp .gpu-bundle2/part-00 /tmp/parts/ &&
  nvidia-smi --query-gpu=name,driver_version --format=csv
# calls 2-5, each carrying .gpu-bundle2/part-0K (K = 1..4):
mkdir -p /tmp/parts && cp .gpu-bundle2/part-01 /tmp/parts/ && ls /tmp/parts

# call 6, carrying .gpu-bundle2/part-05, .gpu-bundle2/unbundle.sh, .gpu-extra (h200-call6.log):
# the data made (Snakemake, 77 s) while, beside it, step_vs_timm ran timm's step and ours in one
# process under reduce-overhead with timm's steps marked (--mark-timm-steps), 4 rounds of 20 steps,
# to see whether that mends the one-process run that never finished a round on 2026-12-06
# (-> vs_timm_1p_reduce-overhead-during-data.csv, logs/vs-timm-1p-during-data.log; its rates are
# not comparisons: the data's JPEG encoding had the CPUs). The call was meant to start
# max-autotune's job after the data, but a stray fragment left in the command (`s=$(( 585 - ... +
# $(cat /tmp/call6) ))`, a file that did not exist) was a syntax error that ended the command line
# there (rc 1), after the data and before that job: no GPU job had started, and max-autotune ran in
# call 9 instead.
mkdir -p /tmp/parts /tmp/repo/.gpu-bundle && cp .gpu-bundle2/part-05 /tmp/parts/ &&
  tar cf - --exclude=./.gpu-bundle --exclude=./.gpu-bundle2 --exclude=./results --exclude=./resources \
    --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo &&
  cp .gpu-bundle2/unbundle.sh /tmp/repo/.gpu-bundle/ && cd /tmp/repo &&
  python3 -m pip install --no-deps --no-index .gpu-extra/timm-1.0.29-py3-none-any.whl >$OUT/diag.log 2>&1;
  (TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-vs TRITON_CACHE_DIR=/tmp/triton-cache-vs \
    timeout -s USR1 -k 15 200 python3 benchmarks/step_vs_timm.py --configfile configs/synthetic-food101.yaml \
    --mode reduce-overhead --one-process ours --mark-timm-steps --rounds 4 --steps 20 --warmup 5 \
    --classes 101 --out $OUT/vs_timm_1p_reduce-overhead-diag.csv 2>&1 | grep -v "^INFO\|Running train" >>$OUT/diag.log;
   echo "diag exit ${PIPESTATUS[0]} at $(date +%T)" >>$OUT/diag.log) & dp=$!;
  b=$(( $(cat /tmp/t0) + 1730 - $(date +%s) )); [ $b -gt 585 ] && b=585; bash benchmarks/h200.sh $b data;
  wait $dp; b=$(( $(cat /tmp/t0) + 1730 - $(date +%s) ));
  s=$(( 585 - $(date +%s) + $(cat /tmp/call6) )) 2>/dev/null;   # the stray fragment: ended the line here
  bash benchmarks/h200.sh $(( b < 480 ? b : 480 )) detach:train:max-autotune wait; tail -3 $OUT/diag.log

# calls 7 and 8 (h200-call7.log, h200-call8.log): the three shorter modes' jobs, each compiling into
# a cold cache (call 7 ran all three; call 8 found them done)
cd /tmp/repo && b=$(( $(cat /tmp/t0) + 1730 - $(date +%s) )); [ $b -gt 585 ] && b=585;
  bash benchmarks/h200.sh $b wait train:reduce-overhead train:none train:default

# call 9 (h200-call9.log, logs/detached.log): max-autotune's job, cold cache, detached and waited for
cd /tmp/repo && bash benchmarks/h200.sh 580 detach:train:max-autotune wait

# call 10 (h200-call10.log) -> vs_timm_1p_reduce-overhead.csv: 30 paired rounds of 50 steps in one
# process (h200.sh adds --mark-timm-steps under the CUDA-graph modes); the inductor cache of call 6
# was warm, hence warm-ups of 7 s and 3 s
cd /tmp/repo && H200_VS_TIMM_1P_ROUNDS=30 bash benchmarks/h200.sh 440 vs-timm-1p:reduce-overhead

# call 11 (h200-call11.log) -> dali_stages.csv: DALI alone, cut after each stage, reading the files
cd /tmp/repo && bash benchmarks/h200.sh 330 dali-stages

# here, from call 11's results.tgz (a superset of the earlier calls'), unpacked in /tmp/ref:
python benchmarks/h200_reference.py /tmp/ref docs/reference/h100/2026-12-06b --run synthetic-food101
