# Device call 5 (after four calls that copy the bundle's parts): the host's CPU layout, the data,
# `default` under the loader benchmark (batches fetched on a thread, the default, against inline,
# and fetched but unused), then choose.py writes the overlay with the better fetch for default,
# and default's training job runs with it.
S=$(date +%s)
{ lscpu; echo; for c in /sys/devices/system/cpu/cpu[0-9]*; do echo "$(basename $c) siblings $(cat $c/topology/thread_siblings_list)"; done; } >$OUT/cpu.txt 2>&1
bash benchmarks/h200.sh 230 data
echo "data done at +$(( $(date +%s) - S )) s"
export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-bench TRITON_CACHE_DIR=/tmp/triton-cache-bench
timeout 200 python3 benchmarks/loader_overhead.py --configfile configs/synthetic-food101.yaml --modes default \
    --steps 40 --blocks 24 --warmup 15 --no-timm-style \
    --feeds synthetic dali dali:fetch=inline dali-fetch-only --out results/bench_default.csv >results/bench_default.log 2>&1
echo "benchmark done at +$(( $(date +%s) - S )) s"; cp results/bench_default.* $OUT/
grep -h "images/s\|per step\|/synthetic" results/bench_default.log
python3 device-calls/choose.py results/bench_default.csv >/tmp/overlay
O=$(cat /tmp/overlay); echo "overlay: $O"; cat "$O"; cp "$O" $OUT/
H200_CONFIGS="configs/synthetic-food101.yaml $O" bash benchmarks/h200.sh $(( 590 - ($(date +%s) - S) )) train:default
grep -h "INFO" results/synthetic-food101-*/logs/train/*.log | grep -v "torch.compile" | tail -8
