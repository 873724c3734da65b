# The device calls of 2026-12-03e, exactly as run (H200, driver 580.159.04, torch 2.11.0+cu130,
# DALI 2.4.0, Snakemake 9.27.1; code of commit 8a9d826 plus the untracked folder device-calls/,
# whose scripts are copied beside this file). Calls 1-4 only copied the bundle's parts:
#   mkdir -p /tmp/parts && cp .gpu-bundle/part-0K /tmp/parts/          (carry .gpu-bundle/part-0K)
# Call 5: data, the loader sweep at CUDA_DEVICE_MAX_CONNECTIONS 8 and 32, and choose_overlay.py
# (a setting at >= 0.97 under reduce-overhead and eager, with DALI alone >= 3x): none qualified.
mkdir -p /tmp/parts /tmp/repo/.gpu-bundle && cp .gpu-bundle/part-04 /tmp/parts/ && ls /tmp/parts && tar cf - --exclude=./.gpu-bundle --exclude=./results --exclude=./resources --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo && cp .gpu-bundle/unbundle.sh /tmp/repo/.gpu-bundle/ && cd /tmp/repo && bash device-calls/call5.sh
# Calls 6 and 7: call6.sh (call 6 ran its second sweep, loader_fallback.csv; none qualified, so no
# training; call 7 found the sweep done and nothing chosen, and did nothing)
cd /tmp/repo && bash device-calls/call6.sh
# Call 8: 32 connections with the hardware decoder's buffers preallocated for 512 px
cd /tmp/repo && export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-bench TRITON_CACHE_DIR=/tmp/triton-cache-bench && H=decoder.preallocate_width_hint=512,decoder.preallocate_height_hint=512 && timeout 330 python3 benchmarks/loader_overhead.py --configfile configs/synthetic-food101.yaml --steps 80 --blocks 5 --warmup 20 --no-timm-style --modes reduce-overhead none --cuda-max-connections 32 --pipelines 1 --feeds synthetic dali:$H dali:pipelines=2,$H dali:decoder=cpu,threads=12 --out results/loader_combo.csv >results/loader_combo.log 2>&1; cp results/loader_combo.* $OUT/; grep -h "images/s\|/synthetic" results/loader_combo.log
# Call 9: call9.sh (eager and default sweep, the overlay configs/synthetic-food101-loader.yaml from
# its best eager feed, then the eager and reduce-overhead training jobs)
cp device-calls/call9.sh /tmp/repo/device-calls/ && cd /tmp/repo && bash device-calls/call9.sh
# Call 10: the default training job
cd /tmp/repo && H200_CONFIGS="configs/synthetic-food101.yaml configs/synthetic-food101-loader.yaml" bash benchmarks/h200.sh 400 train:none train:reduce-overhead train:default; grep -h "INFO" results/synthetic-food101-loader/logs/train/*.log | grep -v "torch.compile" | tail -20
# Call 11: eager and default at CUDA's 8 connections (the first command is a typo'd option that only
# printed argparse's error; the second is the run)
cd /tmp/repo && export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-bench TRITON_CACHE_DIR=/tmp/triton-cache-bench && H=decoder.preallocate_width_hint=512,decoder.preallocate_height_hint=512 && timeout 250 python3 benchmarks/loader_overhead.py --configfile configs/synthetic-food101.yaml --steps 60 --blocks 5 --warmup 20 --no-timm-style --modes none default --dali-alone-skip 2>/dev/null; timeout 250 python3 benchmarks/loader_overhead.py --configfile configs/synthetic-food101.yaml --steps 60 --blocks 5 --warmup 20 --no-timm-style --modes none default --threads 4 --feeds synthetic dali dali:$H,fetch=thread,threads=4 --out results/loader_eager_conn8.csv >results/loader_eager_conn8.log 2>&1; cp results/loader_eager_conn8.* $OUT/; grep -h "images/s\|/synthetic" results/loader_eager_conn8.log
# Here: the summary and plots from call 10's packed results
#   python benchmarks/h200_reference.py <unpacked results.tgz> docs/reference/h200/2026-12-03e \
#     --run synthetic-food101-loader --missing "max-autotune=not run: the session's 30 minutes of device time ran out after the loader sweep and the three other modes"
