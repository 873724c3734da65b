"""Pick the loader setting for the training jobs from call 5's CSVs: the highest eager DALI-fed /
one-batch ratio (median of paired blocks) among the DALI feeds and process settings measured.
Writes configs/synthetic-food101-tuned.yaml and prints its path."""
import csv
import sys
from pathlib import Path

sys.path.insert(0, "benchmarks")
import yaml  # noqa: E402

from loader_overhead import parse_feed  # noqa: E402

best = None
for path in sys.argv[1:]:
    if not Path(path).exists():
        continue
    rows = list(csv.DictReader(open(path)))
    for r in rows:
        if r["mode"] != "none" or not r["feed"].endswith("/synthetic") or not r["feed"].startswith("dali"):
            continue
        ratio = float(r["images_per_s"])
        if best is None or ratio > best[0]:
            best = (ratio, r["feed"][: -len("/synthetic")], r["cuda_max_connections"], r["cuda_sync"], path)
ratio, feed, connections, sync, path = best
_, overrides = parse_feed(feed)
loader = {k: v for k, v in overrides.items() if not k.startswith("decoder.") and k != "stream"}
options = {k[len("decoder."):]: v for k, v in overrides.items() if k.startswith("decoder.")}
if options:
    loader["decoder_options"] = options
overlay = {"run": "synthetic-food101-tuned", "train": {"cuda_sync": sync}}
if connections.isdigit():
    overlay["train"]["cuda_max_connections"] = int(connections)
if loader:
    overlay["loader"] = loader
out = Path("configs/synthetic-food101-tuned.yaml")
out.write_text(
    f"# Overlay for configs/synthetic-food101.yaml chosen on the device from {path}: feed {feed!r}\n"
    f"# (CUDA_DEVICE_MAX_CONNECTIONS {connections}, CUDA sync {sync}) fed eager at {ratio:.3f} of its one-batch rate.\n"
    + yaml.safe_dump(overlay, sort_keys=False))
print(out)
