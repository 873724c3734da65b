# Device call 6: the setting call 5 measured best for eager (choose.py), then eager's and
# default's training jobs with it.
S=$(date +%s)
python3 device-calls/choose.py results/p1.csv results/p2.csv results/p3.csv >/tmp/overlay
O=$(cat /tmp/overlay); echo "overlay: $O"; cat "$O"; cp "$O" $OUT/
H200_CONFIGS="configs/synthetic-food101.yaml $O" bash benchmarks/h200.sh 575 train:none train:default
grep -h "INFO" results/synthetic-food101-tuned/logs/train/*.log | grep -v "torch.compile" | tail -20
