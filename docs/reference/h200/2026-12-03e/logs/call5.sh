# Device call 5 (after four calls that copy the bundle's parts): data, loader sweep, choice, training.
S=$(date +%s)
left() { echo $((585 - ($(date +%s) - S))); }
bash benchmarks/h200.sh 200 data
export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-bench TRITON_CACHE_DIR=/tmp/triton-cache-bench
B="python3 benchmarks/loader_overhead.py --configfile configs/synthetic-food101.yaml --steps 80 --blocks 3 --warmup 20 --no-timm-style"
timeout 140 $B --modes reduce-overhead --feeds synthetic dali dali:decoder.preallocate_width_hint=512,decoder.preallocate_height_hint=512 \
  --out results/loader_conn8.csv >results/loader_conn8.log 2>&1
timeout 200 $B --modes reduce-overhead none --cuda-max-connections 32 --pipelines 1 2 --feeds synthetic dali dali:pipelines=2 \
  --profile results/profile-conn32 --profile-steps 25 --profile-feeds synthetic dali \
  --out results/loader_conn32.csv >results/loader_conn32.log 2>&1
cp results/loader_conn* $OUT/; cp results/profile-conn32/profile.csv $OUT/profile_conn32.csv
python3 device-calls/choose_overlay.py results/loader_conn32.csv results/loader_conn8.csv >/tmp/overlay
O=$(cat /tmp/overlay); echo "overlay: ${O:-none}"
if [ -n "$O" ]; then
  cat "$O"; cp "$O" $OUT/
  H200_CONFIGS="configs/synthetic-food101.yaml $O" bash benchmarks/h200.sh $(left) train:none
fi
grep -h "images/s\|/synthetic" results/loader_conn*.log
