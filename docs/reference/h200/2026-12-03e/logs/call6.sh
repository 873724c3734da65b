# Device calls 6 and 7 (same host): with a chosen overlay, the four training jobs (max-autotune
# detached, it outlasts a call); without one, a second loader sweep, then training if it chose one.
S=$(date +%s)
left() { echo $((585 - ($(date +%s) - S))); }
export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-bench TRITON_CACHE_DIR=/tmp/triton-cache-bench
if [ ! -s /tmp/overlay ] && [ ! -e results/loader_fallback.csv ]; then
  timeout 260 python3 benchmarks/loader_overhead.py --configfile configs/synthetic-food101.yaml --steps 80 \
    --blocks 3 --warmup 20 --no-timm-style --modes reduce-overhead none --cuda-max-connections 32 \
    --pipelines 2 --hw-loads 0.5 0.25 --feeds synthetic dali:pipelines=2,hw_decoder_load=0.5 \
    dali:pipelines=2,hw_decoder_load=0.25 --out results/loader_fallback.csv >results/loader_fallback.log 2>&1
  cp results/loader_fallback.* $OUT/
  python3 device-calls/choose_overlay.py results/loader_fallback.csv >/tmp/overlay
  grep -h "images/s\|/synthetic" results/loader_fallback.log
fi
O=$(cat /tmp/overlay); echo "overlay: ${O:-none}"
if [ -n "$O" ]; then
  cp "$O" $OUT/
  H200_CONFIGS="configs/synthetic-food101.yaml $O" bash benchmarks/h200.sh $(left) wait train:none \
    train:reduce-overhead train:default detach:train:max-autotune wait
  cp results/detached.log $OUT/ 2>/dev/null
fi
