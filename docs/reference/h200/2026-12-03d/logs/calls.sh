# The three device calls of 2026-12-03d, exactly as run (after four calls that only copied the bundle's
# parts to /tmp/parts). Call 1 (in a copy of the working tree at commit 4f0f341):
S=$(date +%s); mkdir -p /tmp/parts /tmp/repo/.gpu-bundle && cp .gpu-bundle/part-04 /tmp/parts/ && tar cf - --exclude=./.gpu-bundle --exclude=./results --exclude=./resources --exclude=./.git --exclude=./.venv . | tar xf - -C /tmp/repo && cp .gpu-bundle/unbundle.sh /tmp/repo/.gpu-bundle/ && cd /tmp/repo && bash benchmarks/h200.sh 250 data
TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache-bench TRITON_CACHE_DIR=/tmp/triton-cache-bench timeout 230 python3 benchmarks/loader_overhead.py --configfile configs/synthetic-food101.yaml --modes reduce-overhead --steps 80 --blocks 3 --warmup 20 --no-timm-style --pipelines 1 2 3 --threads 4 8 --feeds synthetic dali dali:pipelines=2 dali:pipelines=2,threads=4 dali:pipelines=3,threads=4 dali:decoder=cpu,threads=12 dali:hw_decoder_load=0.25 --profile results/profile-pipelines --profile-steps 25 --profile-feeds synthetic dali dali:pipelines=2,threads=4 --out results/loader_pipelines.csv >results/loader_pipelines.log 2>&1
cp results/loader_pipelines.* $OUT/; cp results/profile-pipelines/profile.csv $OUT/profile_pipelines.csv
python3 - >/tmp/overlay <<'E'
import csv,re
r=[x for x in csv.DictReader(open('results/loader_pipelines.csv')) if x['feed'].startswith('dali:pipelines=') and x['feed'].endswith('/synthetic')]
b=max(r,key=lambda x:float(x['images_per_s']),default=None)
p='configs/synthetic-food101-pipelines.yaml'
if b and float(b['images_per_s'])>=0.97:
    kv=dict(i.split('=') for i in b['feed'][5:-10].split(','))
    s=open(p).read()
    s=re.sub(r'pipelines: \d+','pipelines: '+kv['pipelines'],s)
    s=re.sub(r'threads: \d+','threads: '+kv.get('threads','8'),s)
    open(p,'w').write(s); print(p)
else: print('configs/synthetic-food101-decoder-cpu.yaml')
E
O=$(cat /tmp/overlay); echo "overlay $O"; cat $O; cp $O $OUT/
H200_CONFIGS="configs/synthetic-food101.yaml $O" bash benchmarks/h200.sh $((585 - $(date +%s) + S)) train:none train:reduce-overhead; cp /tmp/overlay $OUT/

# Calls 2 and 3 (the same command, back to back on the same host):
cd /tmp/repo && O=$(cat /tmp/overlay) && H200_CONFIGS="configs/synthetic-food101.yaml $O" bash benchmarks/h200.sh 585 wait train:none train:reduce-overhead train:default detach:train:max-autotune wait; cp results/detached.log $OUT/ 2>/dev/null; cp /tmp/overlay $OUT/
