# Fresh host, little device time left: a smaller synthetic set (20,200 images of the same kind),
# then default under the loader benchmark, one-batch against DALI with batches fetched on a thread
# (the defaults), 60 paired blocks of 40 steps.
S=$(date +%s)
bash .gpu-bundle/unbundle.sh /tmp/parts >/dev/null 2>&1
echo "unbundled at +$(( $(date +%s) - S )) s"
C="configs/synthetic-food101.yaml device-calls/small.yaml"
timeout 90 python3 -m snakemake --cores 16 --configfile $C resources/synthetic-c101-150+50-px512-seed0/filelists/all.txt >results-data.log 2>&1
echo "data rc $? at +$(( $(date +%s) - S )) s"; tail -3 results-data.log
timeout $(( 300 - ($(date +%s) - S) )) python3 benchmarks/loader_overhead.py --configfile $C --modes default --steps 40 --blocks 60 --warmup 15 --no-timm-style --feeds synthetic dali --out $OUT/bench_default60.csv >$OUT/bench_default60.log 2>&1
echo "bench rc $? at +$(( $(date +%s) - S )) s"; grep -h "images/s\|per step\|/synthetic\|warm-up" $OUT/bench_default60.log
