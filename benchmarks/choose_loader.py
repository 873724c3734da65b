"""Write a config overlay with the loader setting benchmarks/loader_overhead.py measured best.

Among the DALI feeds one mode ran under (its CSVs, one per benchmark process), takes the feed with
the highest DALI-fed / one-batch ratio (the median of paired blocks) and writes its settings as the
config keys the training jobs read: the feed's loader settings (`loader.*`, `decoder.NAME` ->
`loader.decoder_options.NAME`, `stream` -> `train.cuda_stream`) and its process's CUDA settings
(`train.cuda_max_connections`, `train.cuda_sync`). Settings a feed leaves alone stay the config's.

    python benchmarks/choose_loader.py results/loader_default.csv --mode default \\
        --run synthetic-food101-chosen --out configs/synthetic-food101-chosen.yaml

Then train with it listed after the preset it was measured with:
    snakemake --configfile configs/synthetic-food101.yaml configs/synthetic-food101-chosen.yaml
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from loader_overhead import parse_feed, split_overrides  # noqa: E402
from train import CUDA_SYNC_FLAGS  # noqa: E402

def candidates(paths: list[str], mode: str) -> list[dict]:
    """The DALI feeds' ratio rows of `mode` in the CSVs: feed, ratio (with its range), the
    process's CUDA settings and the file."""
    rows = []
    for path in paths:
        try:
            with open(path, newline="") as handle:
                table = list(csv.DictReader(handle))
        except OSError as err:
            raise SystemExit(f"error: cannot read the benchmark's CSV {path}: {err.strerror}") from None
        if table and not {"mode", "feed", "images_per_s"} <= set(table[0]):
            raise SystemExit(f"error: {path} is not a CSV of benchmarks/loader_overhead.py")
        for row in table:
            feed, _, first = row["feed"].rpartition("/")
            if row["mode"] != mode or not feed or parse_feed(feed)[0] != "dali":
                continue
            rows.append({"feed": feed, "against": first, "ratio": float(row["images_per_s"]),
                         "low": row.get("images_per_s_min", ""), "high": row.get("images_per_s_max", ""),
                         "connections": row.get("cuda_max_connections", ""),
                         "sync": row.get("cuda_sync", ""), "file": path})
    return rows


def overlay_for(choice: dict, run: str) -> dict:
    """The config keys that reproduce the chosen feed in a training job."""
    loader, options, pipeline, stream = split_overrides(parse_feed(choice["feed"])[1])
    if pipeline:  # a DALI Pipeline argument the benchmark takes (set_affinity, exec_dynamic)
        raise ValueError(f"feed {choice['feed']!r}: {', '.join(pipeline)} is not a setting of the training jobs")
    train = {"cuda_stream": stream} if stream is not None else {}
    if options:
        loader["decoder_options"] = options  # merged over the config's by Snakemake, as by the benchmark
    connections, sync = choice["connections"], choice["sync"]
    if connections.isdigit():
        train["cuda_max_connections"] = int(connections)
    elif connections.startswith("8 (CUDA's default)"):
        train["cuda_max_connections"] = None  # the environment's, else CUDA's 8
    if sync in CUDA_SYNC_FLAGS:
        train["cuda_sync"] = sync
    elif sync.startswith("not set"):
        train["cuda_sync"] = None
    overlay = {"run": run}
    if train:
        overlay["train"] = train
    if loader:
        overlay["loader"] = loader
    return overlay


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csvs", nargs="+", help="benchmarks/loader_overhead.py's CSVs (one per process)")
    parser.add_argument("--mode", required=True, help="the compile mode whose ratio decides (e.g. default)")
    parser.add_argument("--run", required=True, help="run name for the overlay (results/<run>/)")
    parser.add_argument("--out", required=True, help="the overlay to write (YAML)")
    args = parser.parse_args(argv)

    rows = candidates(args.csvs, args.mode)
    usable = []
    for row in sorted(rows, key=lambda r: -r["ratio"]):
        try:
            usable.append((row, overlay_for(row, args.run)))
        except ValueError as err:
            print(f"skipped: {err}")
    if not usable:
        raise SystemExit(f"error: no DALI feed of mode {args.mode!r} in {', '.join(args.csvs)} that a "
                         "training job can reproduce; nothing written")
    for row, _ in usable:
        print(f"{row['ratio']:.3f} ({row['low']}-{row['high']})  {row['feed']}  "
              f"[connections {row['connections'] or '-'}, sync {row['sync'] or '-'}; {row['file']}]")
    choice, overlay = usable[0]
    header = (f"# Chosen by benchmarks/choose_loader.py from {', '.join(args.csvs)}: under mode "
              f"{args.mode}, feed {choice['feed']!r}\n# (CUDA connections {choice['connections'] or '-'}, "
              f"sync {choice['sync'] or '-'}) was fed at {choice['ratio']:.3f} of the one-batch rate "
              f"(median of paired blocks, {choice['low']}-{choice['high']}), the highest of {len(usable)}.\n")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(header + yaml.safe_dump(overlay, sort_keys=False))
    tmp.replace(out)
    print(f"chose {choice['feed']} ({choice['ratio']:.3f}); wrote {out}")


if __name__ == "__main__":
    main()
