# Call 9: eager and default with the hardware decoder's size hints at CUDA_DEVICE_MAX_CONNECTIONS=32
# (reduce-overhead fed at 0.982 that way in call 8), with and without fetching on a thread; then
# the overlay from the best of them under eager, and the eager training job.
S=$(date +%s)
export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-bench TRITON_CACHE_DIR=/tmp/triton-cache-bench
H=decoder.preallocate_width_hint=512,decoder.preallocate_height_hint=512
timeout 240 python3 benchmarks/loader_overhead.py --configfile configs/synthetic-food101.yaml --steps 60 \
  --blocks 5 --warmup 20 --no-timm-style --modes none default --cuda-max-connections 32 --pipelines 1 \
  --threads 4 --feeds synthetic dali:$H dali:$H,fetch=thread dali:$H,threads=4 dali:$H,fetch=thread,threads=4 \
  --out results/loader_eager.csv >results/loader_eager.log 2>&1
cp results/loader_eager.* $OUT/; grep -h "images/s\|/synthetic" results/loader_eager.log
python3 - <<'P'
import csv
rows = [r for r in csv.DictReader(open("results/loader_eager.csv")) if r["mode"] == "none" and r["feed"].endswith("/synthetic")]
best = max(rows, key=lambda r: float(r["images_per_s"]))
extra = dict(i.split("=") for i in best["feed"][:-10].split(":", 1)[1].split(",") if not i.startswith("decoder."))
lines = ["# Overlay chosen on the device (call 9): CUDA_DEVICE_MAX_CONNECTIONS 32 and the hardware decoder's",
         f"# size hints; best eager feed {best['feed']} at {float(best['images_per_s']):.3f}",
         "run: synthetic-food101-loader", "train:", "  cuda_max_connections: 32", "loader:",
         "  decoder_options: {preallocate_width_hint: 512, preallocate_height_hint: 512}"]
lines += [f"  {k}: {v}" for k, v in extra.items()]
open("configs/synthetic-food101-loader.yaml", "w").write("\n".join(lines) + "\n")
P
cat configs/synthetic-food101-loader.yaml; cp configs/synthetic-food101-loader.yaml $OUT/
echo configs/synthetic-food101-loader.yaml >/tmp/overlay
H200_CONFIGS="configs/synthetic-food101.yaml configs/synthetic-food101-loader.yaml" \
  bash benchmarks/h200.sh $((585 - $(date +%s) + S)) train:none train:reduce-overhead
