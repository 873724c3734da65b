"""Pick loader.fetch for the training jobs from call 5's benchmark of `default`: the feed (batches
fetched on a thread, the default, or inline) with the higher DALI-fed / one-batch ratio (median of
paired blocks). Writes configs/synthetic-food101-fetch-<choice>.yaml and prints its path."""
import csv
import sys
from pathlib import Path

rows = {r["feed"]: float(r["images_per_s"]) for r in csv.DictReader(open(sys.argv[1])) if r["mode"] == "default"}
thread, inline = rows["dali/synthetic"], rows["dali:fetch=inline/synthetic"]
choice = "inline" if inline > thread else "thread"
out = Path(f"configs/synthetic-food101-fetch-{choice}.yaml")
out.write_text(
    f"# Overlay for configs/synthetic-food101.yaml chosen on the device from {sys.argv[1]}: default mode\n"
    f"# fed at {inline:.3f} of its one-batch rate with batches fetched inline, {thread:.3f} on a thread.\n"
    f"run: synthetic-food101-fetch-{choice}\n"
    f"loader:\n  fetch: {choice}\n")
print(out)
