#!/usr/bin/env bash
# The full-protocol reference run (configs/synthetic-food101.yaml) on a lent GPU host whose calls
# are limited to ~10 minutes. Each call runs the stages it is given, in order, within BUDGET_S
# seconds: a stage already done is skipped, and one that would not fit in the time left is not
# started. Outputs stay on the host between calls; everything measured is packed into
# $OUT/results.tgz after every call.
#   [H200_CONFIGS="PRESET..."] bash benchmarks/h200.sh BUDGET_S STAGE...
# H200_CONFIGS: the presets passed to Snakemake (default configs/synthetic-food101.yaml), e.g.
#   "configs/synthetic-food101.yaml configs/synthetic-food101-decoder-cpu.yaml"
# Stages:
#   data          generate the 101,000 JPEGs and their DALI file lists (Snakemake)
#   diagnose      benchmarks/loader_overhead.py: per mode, what feeds the step (one synthetic batch,
#                 DALI with variants of the loader: decoding on the CPU, part of the decoding on
#                 the GPU's SMs; DALI fetched but not used), with the host's CPU time per step, and profiler traces
#                 (results/profile: GPU busy/idle per step, DALI's costliest kernels, costliest
#                 CUDA calls)
#   timm:MODE     timm's benchmark.py --bench train under MODE (none, default, reduce-overhead,
#                 max-autotune), same model, batch, image size, precision and memory format, through
#                 benchmarks/timm_bench.py -> results/timm/MODE.csv; needs timm's benchmark.py at
#                 .gpu-extra/timm_benchmark.py and timm's wheel in .gpu-extra/ (carry .gpu-extra;
#                 neither is in the repo: README, "Comparing with timm")
#   dali-stages   benchmarks/dali_stages.py: DALI alone, the training pipeline cut after each stage
#                 (read, decode, resize, normalize, the loader), images/s and the CPU ms of DALI's
#                 threads per training batch -> results/dali_stages.csv (loader settings over the
#                 preset's: H200_STAGES_SET, e.g. "hw_decoder_load=0 threads=8", and then
#                 results/dali_stages-hw_decoder_load=0,threads=8.csv)
#   vs-timm:MODE  benchmarks/step_vs_timm.py: timm's benchmark.py and our one-batch step under MODE,
#                 each with timm's process settings (CUDA's defaults) and with ours, as separate
#                 processes in turn for H200_VS_TIMM_ROUNDS (4) rounds of 4 blocks of
#                 H200_VS_TIMM_STEPS (50) steps -> results/vs_timm_MODE.csv (arms: H200_VS_TIMM_ARMS,
#                 default "timm timm+ours ours ours+cuda-defaults"; timm's need .gpu-extra as timm:MODE)
#   scaler-cost   benchmarks/scaler_host_cost.py: the gradient scaler's host CPU per step beside the
#                 optimizer step's, on the preset's model and optimizer (seconds; neither the bundle
#                 nor the data) -> results/scaler_host_cost.log
#   vs-timm-1p:MODE  benchmarks/step_vs_timm.py --one-process: timm's benchmark step and ours in ONE
#                 process, blocks of H200_VS_TIMM_STEPS (50) steps alternating for
#                 H200_VS_TIMM_1P_ROUNDS (30) rounds, the host's drift hitting both alike, under our
#                 process settings -> results/vs_timm_1p_MODE.csv (needs .gpu-extra as timm:MODE;
#                 neither the bundle nor the data: without the data, the model has H200_CLASSES (101)
#                 classes, and a call naming only timm: and vs-timm-1p: stages needs no bundle); under
#                 the CUDA-graph modes with --mark-timm-steps (step_vs_timm.py's docstring says why);
#                 then H200_VS_TIMM_1P_PROFILE (20) steps of each under the PyTorch profiler
#                 -> results/vs_timm_1p_MODE-profile.csv (kernels, GPU busy and idle, the costliest
#                 CUDA calls per step; traces in results/vs_timm_1p_MODE-profile/, not packed);
#                 H200_VS_TIMM_1P_ALSO (none) adds arms: "ours:timm-model ours:no-scaler ours:torch-scaler"
#   train:MODE    one mode's training job (Snakemake; each job compiles into a cold cache)
#   loader:MODE   benchmarks/loader_overhead.py for one mode: H200_BLOCKS (50) paired blocks of
#                 H200_STEPS (40) steps, the feeds in H200_FEEDS (default: one batch, the
#                 reference; the loader's defaults (fetch inline, DALI batches of 4 training
#                 batches, files read without mapping them); the same mapping each file (DALI's
#                 default, and the loader's until docs/reference/h100/2026-12-05); one batch
#                 beside 4 processes copying memory 10% of the time (about DALI's CPU per step:
#                 does any such load slow the step as much as DALI?). H100 2026-12-05 ran
#                 "synthetic dali dali:reader.dont_use_mmap=true" (dali then mapping the files),
#                 H100 2026-12-05b "synthetic dali dali:reader.dont_use_mmap=false" (reading);
#                 h200 2026-12-05 the fetch thread with batches of one in place of the mapping
#                 feed. 2026-12-04c's
#                 default had DALI batches of 8 in place of the last. 2026-12-04's was: one batch with the training
#                 threads pinned to 2 reserved cores, the defaults, the same pinning, and with it
#                 DALI batches of 4; 2026-12-03h's: one batch, the defaults, 2 DALI threads, 2
#                 reserved cores)
#                 -> results/loader_MODE.csv (fewer rounds if the call's time runs short); DALI
#                 alone with each thread count in H200_ALONE_THREADS (default 4 and 2)
#   choose:MODE   benchmarks/choose_loader.py: the best DALI feed of results/loader_MODE.csv under
#                 MODE as configs/synthetic-food101-chosen.yaml (run synthetic-food101-chosen);
#                 if nothing can be chosen the call stops. Train with it in a later call:
#                 H200_CONFIGS="configs/synthetic-food101.yaml configs/synthetic-food101-chosen.yaml"
#   detach:train:MODE
#                 the same job started in a session of its own (setsid), so that it outlives this
#                 call while the host stays held: for a job longer than one call (a cold
#                 max-autotune took 520 to over 596 s). Follow it with `wait`, in this call and
#                 the next ones, before any other stage: GPU jobs must never overlap.
#   detach:vs-timm-1p:MODE
#                 the same for the one-process comparison with timm (this script runs the stage on
#                 its own, in a session of its own): under max-autotune the cold compile of both
#                 models (~900 s) outlasts a call. Carry .gpu-extra; no bundle needed.
#   wait          wait (up to the budget) until a detached job has ended; every stage that uses
#                 Snakemake or the GPU waits for it first
#   summary       everything else: summary, plots, report inputs (Snakemake); skipped until all
#                 four modes' timings exist (it would otherwise start the missing training jobs)
# The reference run with all four modes (docs/reference/h200/2026-12-03c) was three calls after the
# bundle's, back to back on one host, then the summary on another machine from the packed results
# (benchmarks/h200_reference.py, see README):
#   bash benchmarks/h200.sh 575 data train:none train:reduce-overhead detach:train:default
#   bash benchmarks/h200.sh 580 wait detach:train:max-autotune wait
#   bash benchmarks/h200.sh 540 wait diagnose
# The run with the CPU-decoding overlay (docs/reference/h200/2026-12-03d; its calls exactly as run
# are in its logs/calls.sh) named every stage in each call, done ones being skipped:
#   H200_CONFIGS="configs/synthetic-food101.yaml configs/synthetic-food101-decoder-cpu.yaml" \
#     bash benchmarks/h200.sh 585 wait train:none train:reduce-overhead train:default \
#     detach:train:max-autotune wait
# The loader sweep and three-mode run of docs/reference/h200/2026-12-03e (overlay
# configs/synthetic-food101-loader.yaml) used this script for its training stages; all its calls
# are in that folder's logs/calls.sh.
# The four-mode run of docs/reference/h200/2026-12-03f (overlay configs/synthetic-food101-tuned.yaml,
# chosen on the device from a loader benchmark in the call before) likewise; its calls are in
# that folder's logs/calls.sh.
# The four-mode run of docs/reference/h200/2026-12-03h (the loader chosen under `default` by the
# loader: and choose: stages, max-autotune's job started at the end of the same call):
#   bash benchmarks/h200.sh 585 data loader:default choose:default && \
#     H200_CONFIGS="configs/synthetic-food101.yaml configs/synthetic-food101-chosen.yaml" \
#     bash benchmarks/h200.sh <585 less the call's time so far> detach:train:max-autotune wait
#   H200_CONFIGS=... bash benchmarks/h200.sh 585 wait train:default train:none train:reduce-overhead
#   H200_CONFIGS=... bash benchmarks/h200.sh 592 train:default train:none train:reduce-overhead
# The four-mode run of docs/reference/h200/2026-12-04b (the preset's own settings, no loader
# benchmark; each job measures fed / one-batch paired in 20 rounds after its epochs):
#   bash benchmarks/h200.sh 585 data detach:train:max-autotune wait
#   bash benchmarks/h200.sh 585 wait train:reduce-overhead train:none train:default   (twice)
# The four-mode run of docs/reference/h200/2026-12-04c (the same calls, with the loader's new
# defaults: fetch inline, DALI batches of 4 training batches; its logs/calls.sh has them as run).
set -uo pipefail
budget=${1:?usage: bash benchmarks/h200.sh BUDGET_S STAGE...}
shift
# every stage named is checked before anything runs: a misspelt one would waste a device call
modes="none|default|reduce-overhead|max-autotune"
for stage in "$@"; do
    if ! [[ $stage =~ ^(data|diagnose|dali-stages|scaler-cost|summary|wait)$ ||
        $stage =~ ^(train|detach:train|loader|choose|timm|vs-timm|vs-timm-1p|detach:vs-timm-1p):($modes)$ ]]; then
        echo "unknown stage $stage: use data, diagnose, dali-stages, scaler-cost, summary, wait, or train:, detach:train:," \
            "loader:, choose:, timm:, vs-timm:, vs-timm-1p:, detach:vs-timm-1p: with a mode (${modes//|/, })" >&2
        exit 2
    fi
done
start=$(date +%s)
out=${OUT:-/tmp/h200-out}
mkdir -p "$out" results
export PYTHONUNBUFFERED=1
# presets, in order (default: the synthetic Food-101 preset alone); the run's name is the last `run:`
read -r -a configs <<<"${H200_CONFIGS:-configs/synthetic-food101.yaml}"
run=$(sed -n 's/^run: *\([^ #]*\).*/\1/p' "${configs[@]}" | tail -n 1)
[ -n "$run" ] || { echo "H200_CONFIGS: no run name in ${configs[*]}"; exit 2; }
run=results/$run
data=  # the presets' dataset folder, read from them once the bundle is unpacked (below)
sm=(python3 -m snakemake --cores "$(nproc)" --configfile "${configs[@]}" --rerun-incomplete)
left() { echo $((budget - ($(date +%s) - start))); }
log() { echo "[$(date +%T) +$(($(date +%s) - start))s] $*" | tee -a "$out/h200.log"; }

pack() {
    # profiler traces (results/profile/*.json.gz, ~5 MB each) stay on the host: profile.csv has their numbers
    tar czf "$out/results.tgz" --exclude='*.tmp' --exclude='*.json.gz' results \
        ${data:+"$data"/filelists "$data"/logs} .snakemake/log 2>/dev/null
    log "packed results ($(du -h "$out/results.tgz" | cut -f1))"
}
trap pack EXIT

# seconds a stage needs on an H200 (GPU-FACTS.md and earlier calls), with a margin (a loader: stage
# cuts its rounds to the time left: eager needs no compile); a training job
# includes the preset's 2 x 1,000 steps after its epochs (20-50 s); eager's job took 228 s on the H200
# of docs/reference/h200/2026-12-06
declare -A need=([data]=150 [diagnose]=200 [summary]=60 [dali-stages]=90 [scaler-cost]=60 [loader:default]=330
    [timm:none]=60 [timm:default]=150 [timm:reduce-overhead]=150 [timm:max-autotune]=560
    [loader:none]=150 [loader:reduce-overhead]=200 [loader:max-autotune]=600 [choose:none]=10
    [choose:default]=10 [choose:reduce-overhead]=10 [choose:max-autotune]=10
    [train:none]=260 [train:reduce-overhead]=175 [train:default]=270 [train:max-autotune]=590
    [detach:train:max-autotune]=0 [detach:train:default]=0 [detach:train:none]=0
    [detach:train:reduce-overhead]=0 [vs-timm:none]=200 [vs-timm:default]=300 [vs-timm:reduce-overhead]=400
    [vs-timm:max-autotune]=600 [vs-timm-1p:none]=135 [vs-timm-1p:default]=215
    [vs-timm-1p:reduce-overhead]=215 [vs-timm-1p:max-autotune]=915)
# H200_TAG: appended to the outputs of loader: and dali-stages stages (results/loader_MODE-TAG.csv),
# to repeat one under other conditions, e.g. H200_TAG=malloc MALLOC_TRIM_THRESHOLD_=... bash ...
tag=${H200_TAG:+-$H200_TAG}
# a stage is done when this file exists
declare -A done_file=([diagnose]=results/loader_overhead.csv [summary]="$run/summary.csv"
    [scaler-cost]=results/scaler_host_cost.log)
stages_set=${H200_STAGES_SET:-}
done_file[dali-stages]=results/dali_stages${stages_set:+-${stages_set// /,}}$tag.csv
for mode in none default reduce-overhead max-autotune; do
    done_file[timm:$mode]=results/timm/$mode.csv
    done_file[loader:$mode]=results/loader_$mode$tag.csv
    done_file[vs-timm:$mode]=results/vs_timm_$mode.csv
    done_file[vs-timm-1p:$mode]=results/vs_timm_1p_$mode.csv
    done_file[detach:vs-timm-1p:$mode]=results/vs_timm_1p_$mode.csv
    need[detach:vs-timm-1p:$mode]=0
    done_file[choose:$mode]=configs/synthetic-food101-chosen.yaml
done

# the bundle (DALI, Snakemake) is needed unless every stage is timm's or the one-process comparison
# with it, which need neither (vs-timm-1p then names the preset's classes in place of its file list),
# or waiting
bundle_needed=
for stage in "$@"; do [[ $stage =~ ^(timm|vs-timm-1p|detach:vs-timm-1p):|^(wait|scaler-cost)$ ]] || bundle_needed=1; done
if [ -n "$bundle_needed" ] && ! python3 -c 'import nvidia.dali, snakemake' 2>/dev/null; then
    [ -d /tmp/parts ] && bash .gpu-bundle/unbundle.sh /tmp/parts >>"$out/h200.log" 2>&1 || { log "bundle missing"; exit 1; }
fi
# resources/<dataset> as the pipeline names it from the presets (relative: the packed results keep it)
data=$(python3 -c 'import os, sys; sys.path.insert(0, "benchmarks"); from loader_overhead import data_paths, load_config
print(os.path.relpath(data_paths(load_config(sys.argv[1:]))[0].parents[1]))' "${configs[@]}") \
    || { log "cannot read the dataset from ${configs[*]}"; exit 2; }
done_file[data]=$data/filelists/all.txt
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.used,utilization.gpu --format=csv | tee -a "$out/h200.log"
# the detached job's Snakemake (or this script, running a detached stage), by the pid it wrote (not
# by name: another run of the same presets on the machine is not this one); never this very process
detached_running() {
    local pid
    pid=$(cat results/detached.pid 2>/dev/null) || return 1
    [ -n "$pid" ] && [ "$pid" != $$ ] && grep -qE 'snakemake|h200\.sh' "/proc/$pid/cmdline" 2>/dev/null
}
wait_detached() {
    while detached_running && [ "$(left)" -gt 15 ]; do sleep 5; done
    if detached_running; then log "a detached job is still running ($(left) s left)"; return 1; fi
    [ -e results/detached.log ] && tail -n 2 results/detached.log >>"$out/h200.log"
    return 0
}
# a call killed at its time limit leaves Snakemake's lock behind (unless a detached job holds it)
[ -z "$bundle_needed" ] || detached_running || "${sm[@]}" --unlock >>"$out/h200.log" 2>&1

install_timm() {  # the wheel's timm, over whatever other version the host's image has
    local wheel version
    wheel=$(ls .gpu-extra/timm-*.whl 2>/dev/null | head -n 1)
    [ -n "$wheel" ] || { log "no timm wheel in .gpu-extra"; return 1; }
    version=$(basename "$wheel" | cut -d- -f2)
    python3 -c 'import sys, timm; sys.exit(timm.__version__ != sys.argv[1])' "$version" 2>/dev/null && return 0
    python3 -m pip install --no-deps --no-index "$wheel" >>"$out/h200.log" 2>&1 || { log "cannot install $wheel"; return 1; }
}

timm_bench() {  # MODE: timm's benchmark.py on one fixed batch (its --bench train)
    local mode=$1 extra=()
    install_timm || return 1
    [ "$mode" != none ] && extra=(--torchcompile inductor --torchcompile-mode "$mode")
    mkdir -p results/timm
    TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-timm TRITON_CACHE_DIR=/tmp/triton-cache-timm \
        timeout "$(left)" python3 benchmarks/timm_bench.py --bench train --model resnet50 -b 64 \
        --img-size 224 --num-classes 101 --amp --amp-dtype float16 --channels-last --no-retry "${extra[@]}" \
        --results-file "results/timm/$mode.csv" >"results/timm/$mode.log" 2>&1
    local status=$?
    # in results.tgz, not copied to $OUT one by one: a call brings back at most 8 files
    grep -h "samples/sec" "results/timm/$mode.log" | tail -n 1 | tee -a "$out/h200.log"
    return $status
}

for stage in "$@"; do
    if [ "$stage" = wait ]; then log "wait"; wait_detached; log "wait: exit $?"; continue; fi
    wait_detached || break
    file=${done_file[$stage]:-$run/timings/${stage#*train:}.csv}
    if [ -e "$file" ]; then log "$stage: done before"; continue; fi
    if [ "$(left)" -lt "${need[$stage]:-600}" ]; then
        log "$stage: not started, $(left) s left, needs ~${need[$stage]:-600} s"
        continue
    fi
    log "$stage"
    case $stage in
        data) timeout "$(left)" "${sm[@]}" "$data/filelists/all.txt" >>"$out/h200.log" 2>&1 ;;
        scaler-cost)  # written only once complete: a cut run is not "done before"
            timeout "$(left)" python3 benchmarks/scaler_host_cost.py --configfile "${configs[@]}" \
                --steps "${H200_SCALER_STEPS:-2000}" \
                >results/scaler_host_cost.log.tmp 2>&1
            status=$?
            grep -v "Warning\|warn" results/scaler_host_cost.log.tmp | tee -a "$out/h200.log"
            [ $status = 0 ] && mv results/scaler_host_cost.log.tmp results/scaler_host_cost.log
            (exit $status) ;;
        diagnose)
            TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-bench TRITON_CACHE_DIR=/tmp/triton-cache-bench \
                timeout "$(left)" python3 benchmarks/loader_overhead.py --configfile "${configs[@]}" \
                --modes reduce-overhead --steps 80 --blocks 3 --warmup 20 \
                --feeds synthetic dali dali-fetch-only dali:decoder=cpu dali:decoder=cpu,threads=12 \
                dali:hw_decoder_load=0.5 dali:hw_decoder_load=0 \
                --profile results/profile --profile-steps 25 \
                --profile-feeds synthetic dali dali:decoder=cpu,threads=12 \
                --out results/loader_overhead.csv >>"$out/h200.log" 2>&1 ;;
        loader:*)
            mode=${stage#loader:}
            read -r -a feeds <<<"${H200_FEEDS:-synthetic dali dali:reader.dont_use_mmap=false synthetic:burn=4,burn_duty=0.1,burn_kind=memory}"
            TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-bench TRITON_CACHE_DIR=/tmp/triton-cache-bench \
                timeout "$(left)" python3 benchmarks/loader_overhead.py --configfile "${configs[@]}" \
                --modes "$mode" --steps "${H200_STEPS:-40}" --blocks "${H200_BLOCKS:-50}" --warmup 15 \
                --no-timm-style --feeds "${feeds[@]}" --threads ${H200_ALONE_THREADS:-4 2} --time-limit $(( $(left) - 30 )) \
                --out "results/loader_$mode$tag.csv" >"results/loader_$mode$tag.log" 2>&1
            status=$?
            cp "results/loader_$mode$tag".* "$out/" 2>/dev/null
            grep -h "images/s\|per step\|/synthetic" "results/loader_$mode$tag.log" | tee -a "$out/h200.log"
            (exit $status) ;;
        choose:*)
            mode=${stage#choose:}
            if ! python3 benchmarks/choose_loader.py "results/loader_$mode$tag.csv" --mode "$mode" \
                    --run synthetic-food101-chosen --out configs/synthetic-food101-chosen.yaml 2>&1 | tee -a "$out/h200.log"; then
                log "$stage: nothing chosen; the call stops"; exit 1
            fi
            cp configs/synthetic-food101-chosen.yaml "$out/" ;;
        timm:*) timm_bench "${stage#timm:}" ;;
        vs-timm:*)
            read -r -a arms <<<"${H200_VS_TIMM_ARMS:-timm timm+ours ours ours+cuda-defaults}"
            [[ " ${arms[*]}" == *" timm"* ]] && { install_timm || continue; }
            TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-vs TRITON_CACHE_DIR=/tmp/triton-cache-vs \
                timeout "$(left)" python3 benchmarks/step_vs_timm.py --configfile "${configs[@]}" \
                --mode "${stage#vs-timm:}" --arms "${arms[@]}" --rounds "${H200_VS_TIMM_ROUNDS:-4}" \
                --steps "${H200_VS_TIMM_STEPS:-50}" --time-limit $(( $(left) * 2 / 3 )) \
                --out "$file" 2>&1 | tee -a "$out/h200.log"
            status=${PIPESTATUS[0]}
            cp "$file" "$out/" 2>/dev/null
            (exit $status) ;;
        vs-timm-1p:*)
            install_timm || continue
            classes=()  # no data made: the model's classes (H200_CLASSES, default Food-101's 101)
            [ -e "${done_file[data]}" ] || classes=(--classes "${H200_CLASSES:-101}")
            [[ $stage =~ :(reduce-overhead|max-autotune)$ ]] && classes+=(--mark-timm-steps)
            # H200_VS_TIMM_1P_ALSO: more arms beside the two (step_vs_timm.py --also), e.g.
            # "ours:timm-model ours:no-scaler": each adds a block a round and a compile
            read -r -a also <<<"${H200_VS_TIMM_1P_ALSO:-}"
            [ ${#also[@]} -eq 0 ] || classes+=(--also "${also[@]}")
            TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-vs TRITON_CACHE_DIR=/tmp/triton-cache-vs \
                timeout "$(left)" python3 benchmarks/step_vs_timm.py --configfile "${configs[@]}" \
                --mode "${stage#vs-timm-1p:}" --one-process ours --rounds "${H200_VS_TIMM_1P_ROUNDS:-30}" \
                --steps "${H200_VS_TIMM_STEPS:-50}" --time-limit $(( $(left) - 45 )) "${classes[@]}" \
                --profile-steps "${H200_VS_TIMM_1P_PROFILE:-20}" --out "$file" 2>&1 |
                grep -v "^INFO\|Running train\|Train \[\|^USDT\|profiler_st" | tee -a "$out/h200.log"
            status=${PIPESTATUS[0]}
            cp "$file" "${file%.csv}-profile.csv" "$out/" 2>/dev/null
            (exit $status) ;;
        dali-stages)
            read -r -a set <<<"$stages_set"
            timeout "$(left)" python3 benchmarks/dali_stages.py --configfile "${configs[@]}" --batches 200 \
                --rounds 5 ${set[@]+--set "${set[@]}"} --out "$file" 2>&1 | tee -a "$out/h200.log"
            status=${PIPESTATUS[0]}
            cp "$file" "$out/" 2>/dev/null
            (exit $status) ;;
        train:*) timeout "$(left)" "${sm[@]}" "$file" >>"$out/h200.log" 2>&1 ;;
        detach:*)
            # a training job's Snakemake, or this script running the stage on its own (its own $OUT
            # and a budget of its own: it ends when the stage does)
            detached_cmd=("${sm[@]}" "$file")
            [[ $stage == detach:train:* ]] ||
                detached_cmd=(env OUT=/tmp/h200-detached bash benchmarks/h200.sh 3600 "${stage#detach:}")
            # shellcheck disable=SC2016  # $$ is the inner bash's pid, which exec hands to the command
            setsid nohup bash -c 'echo $$ >results/detached.pid; exec "$@"' detached "${detached_cmd[@]}" \
                >results/detached.log 2>&1 </dev/null &
            sleep 5; detached_running ;;
        summary)
            if ls "$run"/timings/{none,default,reduce-overhead,max-autotune}.csv >/dev/null 2>&1; then
                timeout "$(left)" "${sm[@]}" >>"$out/h200.log" 2>&1
            else
                log "summary: not all four modes trained yet"
            fi ;;
        *) log "unknown stage $stage"; exit 2 ;;  # checked at the start; kept for safety
    esac
    log "$stage: exit $?"
done
