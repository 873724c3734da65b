"""Write a config overlay with the loader setting benchmarks/loader_overhead.py measured best.

Among the DALI feeds one mode ran under (its CSVs, one per benchmark process), takes the feed with
the highest DALI-fed / one-batch ratio (the median of paired blocks). A feed that only varies the
configuration's loader is kept only if it beat the configuration's own (`dali`, same process) in
clearly more of their rounds than chance gives (one-sided sign test, 5%); else the configuration's
loader is kept: on a noisy host the highest of several medians is often luck. It writes the
chosen feed's settings as the config keys the training jobs read: the feed's loader settings (`loader.*`, `decoder.NAME` ->
`loader.decoder_options.NAME`, `reader.NAME` -> `loader.reader_options.NAME`, `stream` -> `train.cuda_stream`) and its process's CUDA settings
(`train.cuda_max_connections`, `train.cuda_sync`). Settings a feed leaves alone stay the config's.

    python benchmarks/choose_loader.py results/loader_default.csv --mode default \\
        --run synthetic-food101-chosen --out configs/synthetic-food101-chosen.yaml

Then train with it listed after the preset it was measured with:
    snakemake --configfile configs/synthetic-food101.yaml configs/synthetic-food101-chosen.yaml
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from loader_overhead import BURN_KEYS, parse_feed, split_overrides  # noqa: E402
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
            if set(parse_feed(feed)[1]) & BURN_KEYS:  # the benchmark's own CPU load: no loader setting
                continue
            rows.append({"feed": feed, "against": first, "ratio": float(row["images_per_s"]),
                         "low": row.get("images_per_s_min", ""), "high": row.get("images_per_s_max", ""),
                         "paired": [float(value) for value in (row.get("paired") or "").split()],
                         "connections": row.get("cuda_max_connections", ""),
                         "sync": row.get("cuda_sync", ""), "file": path})
    return rows


def sign_test(best: list[float], base: list[float]) -> tuple[int, int, float]:
    """Rounds where `best` beat `base`, rounds compared (ties left out), and the chance of at
    least that many wins if neither were better (one-sided sign test)."""
    wins = sum(a > b for a, b in zip(best, base))
    rounds = wins + sum(a < b for a, b in zip(best, base))
    return wins, rounds, sum(math.comb(rounds, k) for k in range(wins, rounds + 1)) / 2 ** rounds


def two_sided(wins: int, rounds: int, one_sided: float) -> float:
    """sign_test's one-sided chance made two-sided: `wins` of `rounds` or a split as lopsided the
    other way, were neither better."""
    at_most = 1 - one_sided + math.comb(rounds, wins) / 2**rounds  # chance of `wins` or fewer
    return min(1.0, 2 * min(one_sided, at_most))


def settled(usable: list[tuple[dict, dict]], level: float = 0.05) -> tuple[tuple[dict, dict], str]:
    """The choice among `usable` (best median first) and why: the best, unless the configuration's
    own loader (`dali`, same file and reference) did as well within chance, round by round."""
    best = usable[0]
    base = next((item for item in usable if item[0]["feed"] == "dali" and item[0]["file"] == best[0]["file"]
                 and item[0]["against"] == best[0]["against"]), None)
    if best[0]["feed"] == "dali" or base is None:
        return best, f"the highest of {len(usable)}"
    if not best[0]["paired"] or len(best[0]["paired"]) != len(base[0]["paired"]):
        return best, f"the highest of {len(usable)} (no per-round ratios in the CSV to test it against dali)"
    wins, rounds, p = sign_test(best[0]["paired"], base[0]["paired"])
    if p <= level:
        return best, f"the highest of {len(usable)}, above dali in {wins} of {rounds} rounds (sign test p={p:.3f})"
    return base, (f"the configuration's own loader: the highest, {best[0]['feed']!r} at {best[0]['ratio']:.3f}, "
                  f"was above it in only {wins} of {rounds} rounds (sign test p={p:.2f}, chance)")


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
    (choice, overlay), why = settled(usable)
    header = (f"# Chosen by benchmarks/choose_loader.py from {', '.join(args.csvs)}: under mode "
              f"{args.mode}, feed {choice['feed']!r}\n# (CUDA connections {choice['connections'] or '-'}, "
              f"sync {choice['sync'] or '-'}) was fed at {choice['ratio']:.3f} of the one-batch rate "
              f"(median of paired blocks, {choice['low']}-{choice['high']}):\n# {why}.\n")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(header + yaml.safe_dump(overlay, sort_keys=False))
    tmp.replace(out)
    print(f"chose {choice['feed']} ({choice['ratio']:.3f}): {why}; wrote {out}")


if __name__ == "__main__":
    main()
