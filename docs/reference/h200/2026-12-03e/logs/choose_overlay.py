"""Pick the loader setting for the training run from the sweep's CSVs: the highest DALI-fed /
one-batch ratio under reduce-overhead, among those at least 0.97 (and at least 0.97 under eager
where the sweep measured eager). Writes configs/synthetic-food101-loader.yaml and prints its path,
or prints nothing when no setting qualifies."""
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
    ratios = {(r["mode"], r["feed"][: -len("/synthetic")]): float(r["images_per_s"])
              for r in rows if r["feed"].endswith("/synthetic")}
    alone = {r["feed"]: float(r["images_per_s"]) for r in rows if r["feed"].startswith("dali-alone")}
    fastest = max((float(r["images_per_s"]) for r in rows if r["feed"] == "synthetic"), default=0.0)
    for (mode, feed), ratio in ratios.items():
        if mode != "reduce-overhead" or ratio < 0.97 or not feed.startswith("dali"):
            continue
        if ratios.get(("none", feed), 1.0) < 0.97:
            continue
        o = parse_feed(feed)[1]  # DALI alone for this setting, where the sweep timed it: at least 3x
        key = (f"dali-alone threads={o.get('threads', 8)} hw_decoder_load={float(o.get('hw_decoder_load', 1.0))}"
               + ("" if o.get("pipelines", 1) == 1 else f" pipelines={o['pipelines']}"))
        if key in alone and alone[key] < 3 * fastest:
            continue
        connections = rows[0].get("cuda_max_connections", "")
        if best is None or ratio > best[0]:
            best = (ratio, feed, connections, path)
if best is None:
    sys.exit(0)
ratio, feed, connections, path = best
_, overrides = parse_feed(feed)
loader = {k: v for k, v in overrides.items() if not k.startswith("decoder.") and k != "stream"}
options = {k[len("decoder."):]: v for k, v in overrides.items() if k.startswith("decoder.")}
if options:
    loader["decoder_options"] = options
overlay = {"run": "synthetic-food101-loader"}
if connections.isdigit():
    overlay["train"] = {"cuda_max_connections": int(connections)}
if loader:
    overlay["loader"] = loader
out = Path("configs/synthetic-food101-loader.yaml")
out.write_text(
    f"# Overlay for configs/synthetic-food101.yaml chosen on the device from {path}: feed {feed!r}\n"
    f"# (CUDA_DEVICE_MAX_CONNECTIONS {connections}) fed reduce-overhead at {ratio:.3f} of its one-batch rate.\n"
    + yaml.safe_dump(overlay, sort_keys=False))
print(out)
