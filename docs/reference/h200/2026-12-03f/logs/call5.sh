# Device call 5 (after four calls that copy the bundle's parts): the host's CPU layout, data, and
# eager's loader overhead under three process settings (CUDA's sync scheduling, CUDA connections),
# each with the same five feeds, 10 paired blocks of 40 steps.
S=$(date +%s)
{ lscpu; echo; for c in /sys/devices/system/cpu/cpu[0-9]*; do echo "$(basename $c) siblings $(cat $c/topology/thread_siblings_list)"; done; } >$OUT/cpu.txt 2>&1
bash benchmarks/h200.sh 220 data
echo "data done at +$(( $(date +%s) - S )) s"
export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-bench TRITON_CACHE_DIR=/tmp/triton-cache-bench
H=decoder.preallocate_width_hint=512,decoder.preallocate_height_hint=512
B="python3 benchmarks/loader_overhead.py --configfile configs/synthetic-food101.yaml --steps 40 --blocks 10 --warmup 15 --no-timm-style --threads 4"
F="synthetic dali dali:reserve_cores=2 dali:$H,threads=4,fetch=thread dali:$H,threads=4,fetch=thread,reserve_cores=2"
timeout 120 $B --modes none --feeds $F --out results/p1.csv >results/p1.log 2>&1
echo "p1 done at +$(( $(date +%s) - S )) s"; cp results/p1.* $OUT/
timeout 120 $B --modes none --cuda-sync blocking --feeds $F --out results/p2.csv >results/p2.log 2>&1
echo "p2 done at +$(( $(date +%s) - S )) s"; cp results/p2.* $OUT/
L=$(( 580 - ($(date +%s) - S) ))
timeout $L $B --modes none reduce-overhead --cuda-sync blocking --cuda-max-connections 32 --feeds $F --out results/p3.csv >results/p3.log 2>&1
echo "p3 done at +$(( $(date +%s) - S )) s"; cp results/p3.* $OUT/
grep -h "CUDA sync\|images/s\|/synthetic" results/p[123].log
