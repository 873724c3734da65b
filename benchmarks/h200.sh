#!/usr/bin/env bash
# The full-protocol reference run (configs/synthetic-food101.yaml) on a lent GPU host whose calls
# are limited to ~10 minutes: each call runs what is left, in a fixed order, within BUDGET_S
# seconds, and never starts a step it has no time to finish. Outputs and the inductor cache stay
# on the host between calls; everything measured is packed into $OUT/results.tgz.
#   bash benchmarks/h200.sh BUDGET_S
set -uo pipefail
budget=${1:-540}
start=$(date +%s)
out=${OUT:-/tmp/h200-out}
mkdir -p "$out"
export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache TRITON_CACHE_DIR=/tmp/triton-cache PYTHONUNBUFFERED=1
config=configs/synthetic-food101.yaml
run=results/synthetic-food101
data=resources/synthetic-c101-750+250-px512-seed0
sm=(python3 -m snakemake --cores "$(nproc)" --configfile "$config" --rerun-incomplete)
left() { echo $((budget - ($(date +%s) - start))); }
log() { echo "[$(date +%T) +$(($(date +%s) - start))s] $*" | tee -a "$out/h200.log"; }

pack() {
    tar czf "$out/results.tgz" --exclude='*.tmp' results "$data"/filelists "$data"/logs .snakemake/log 2>/dev/null
    log "packed results ($(du -h "$out/results.tgz" | cut -f1))"
}
trap pack EXIT

if ! python3 -c 'import nvidia.dali, snakemake' 2>/dev/null; then
    [ -d /tmp/parts ] && ls /tmp/parts && bash .gpu-bundle/unbundle.sh /tmp/parts || { log "bundle missing"; exit 1; }
fi
nvidia-smi --query-gpu=name,driver_version,memory.used,utilization.gpu --format=csv | tee -a "$out/h200.log"

if [ ! -e "$data/filelists/all.txt" ]; then
    log "data: generating and listing 101,000 images"
    timeout "$(left)" "${sm[@]}" "$data/filelists/all.txt" >>"$out/h200.log" 2>&1 || { log "data failed"; exit 1; }
    log "data done"
fi

if [ -z "${SKIP_SWEEP:-}" ] && [ ! -e results/dali_alone.csv ] && [ "$(left)" -gt 120 ]; then
    log "DALI alone sweep"
    timeout 120 python3 benchmarks/loader_overhead.py --configfile "$config" --dali-only \
        --threads 4 8 --hw-loads 1 --out results/dali_alone.csv >>"$out/h200.log" 2>&1
fi

# rough seconds per training job on an H200 (compile + 3 epochs + margin), from GPU-FACTS.md
declare -A need=([none]=170 [reduce-overhead]=160 [default]=220 [max-autotune]=540)
for mode in none reduce-overhead default max-autotune; do
    [ -e "$run/timings/$mode.csv" ] && continue
    if [ "$(left)" -lt "${need[$mode]}" ]; then
        log "not starting $mode now: $(left) s left, needs ~${need[$mode]} s"
        continue
    fi
    log "train $mode"
    timeout "$(left)" "${sm[@]}" "$run/timings/$mode.csv" >>"$out/h200.log" 2>&1
    log "train $mode: exit $?"
done
if ls "$run"/timings/{none,default,reduce-overhead,max-autotune}.csv >/dev/null 2>&1; then
    log "summary and plots"
    timeout "$(left)" "${sm[@]}" >>"$out/h200.log" 2>&1
    log "all: exit $?"
fi
if [ ! -e results/loader_overhead.csv ] && [ "$(left)" -gt 200 ]; then
    log "loader benchmark (eager and reduce-overhead)"
    timeout $(($(left) - 10)) python3 benchmarks/loader_overhead.py --configfile "$config" \
        --modes none reduce-overhead --steps 100 --blocks 3 --warmup 20 \
        --out results/loader_overhead.csv >>"$out/h200.log" 2>&1
    log "loader benchmark: exit $?"
fi
