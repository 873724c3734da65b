"""Two DALI feeds of benchmarks/loader_overhead.py compared round by round, per CSV and pooled.

Each of the feed's rounds is divided by the other feed's same round (both ratios are against the
same one-batch block, so the reference cancels): prints per CSV and mode the median and mean of
that per-round ratio, the rounds where the feed was ahead, and the sign test's chance of at least
that many (one-sided) and of a split at least as uneven either way (two-sided); then the same over
all the rounds together.

    python benchmarks/paired_feeds.py docs/reference/h100/2026-12-05/loader_*.csv \\
        --feed dali:reader.dont_use_mmap=true --against dali
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from choose_loader import candidates, sign_test, two_sided  # noqa: E402


def modes_in(path: str) -> list[str]:
    try:
        with open(path, newline="") as handle:
            return sorted({row["mode"] for row in csv.DictReader(handle) if row.get("mode", "-") != "-"})
    except (OSError, KeyError) as err:
        raise SystemExit(f"error: cannot read {path} as a CSV of benchmarks/loader_overhead.py: {err}") from None


def line(label: str, ratios: list[float], wins: int, rounds: int, one_sided: float) -> str:
    return (f"{label}: per round {statistics.median(ratios):.4f} median, {statistics.mean(ratios):.4f} mean; "
            f"ahead in {wins} of {rounds} rounds (sign test p = {one_sided:.3f} one-sided, "
            f"{two_sided(wins, rounds, one_sided):.3f} two-sided)")


def compare(paths: list[str], feed: str, against: str) -> list[str]:
    out, pooled = [], []
    for path in paths:
        for mode in modes_in(path):
            rows = {row["feed"]: row for row in candidates([path], mode)}
            if feed not in rows or against not in rows:
                continue
            a, b = rows[feed]["paired"], rows[against]["paired"]
            if not a or len(a) != len(b):
                raise SystemExit(f"error: {path}, mode {mode}: no per-round ratios of both feeds to pair")
            pairs = list(zip(a, b))
            pooled += pairs
            out.append(line(f"{path} {mode}", [x / y for x, y in pairs], *sign_test(a, b)))
    if not pooled:
        raise SystemExit(f"error: no CSV holds both {feed!r} and {against!r} with per-round ratios")
    a, b = zip(*pooled)
    out.append(line(f"all {len(out)}", [x / y for x, y in pooled], *sign_test(list(a), list(b))))
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csvs", nargs="+", help="CSVs of benchmarks/loader_overhead.py")
    parser.add_argument("--feed", required=True, help="a DALI feed as the CSV names it, e.g. dali:threads=2")
    parser.add_argument("--against", default="dali", help="the DALI feed it is compared with (default: dali)")
    args = parser.parse_args(argv)
    print(f"{args.feed} over {args.against}, round by round")
    for text in compare(args.csvs, args.feed, args.against):
        print(text)


if __name__ == "__main__":
    main()
