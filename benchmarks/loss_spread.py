"""Compiled modes' last-epoch loss against eager's, run by run, over many runs of one protocol.

One run per mode cannot tell a compiled mode's numerical difference from the drift of one training
trajectory: every mode starts from the same weights on the same batches, but different kernels
round differently, and over thousands of steps two trajectories drift apart. Many runs can: a
numerical difference moves a mode's loss the same way run after run, a drift either way. Per run
(a folder with `timings/<mode>.csv`, as results/<run>/ and docs/reference/*/<date>/ have) this
prints the last epoch's mean loss of each mode and its difference from eager's in the same run and
repeat (the summary's "last loss vs none"); then per mode over the runs the median and range of
that difference, the runs where it is above eager's, and the two-sided sign test of "above as often
as below"; and eager's own last-epoch loss across the runs.

    python benchmarks/loss_spread.py docs/reference/h200/2026-* docs/reference/h100/2026-*
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from choose_loader import sign_test, two_sided  # noqa: E402
from common import atomic_write, repeat_of  # noqa: E402
from summarize import LOSS_CLOSE  # noqa: E402  (the summary's own line between close and drift)

BASELINE = "none"
MODES = ("none", "default", "reduce-overhead", "max-autotune")


def last_epoch_losses(run: Path) -> dict[tuple[str, int], float]:
    """{(mode, repeat): the last epoch's mean loss} of a run folder's timings/*.csv."""
    losses = {}
    for path in sorted((run / "timings").glob("*.csv")):
        try:
            with open(path, newline="") as handle:
                rows = list(csv.DictReader(handle))
            last = max(rows, key=lambda row: int(row["epoch"]))
            losses[(last["mode"], repeat_of(path))] = float(last["loss_mean"])
        except (OSError, KeyError, ValueError) as err:
            raise SystemExit(f"error: {path}: not a timing CSV of the pipeline (mode, epoch, loss_mean): "
                             f"{err!r}") from None
    return losses


def gaps(runs: list[Path]) -> list[dict]:
    """One row per compiled mode's job that has an eager job of the same run and repeat."""
    rows = []
    for run in runs:
        losses = last_epoch_losses(run)
        order = sorted(losses, key=lambda key: (MODES.index(key[0]) if key[0] in MODES else len(MODES), key))
        for mode, repeat in order:
            loss = losses[(mode, repeat)]
            base = losses.get((BASELINE, repeat))
            if base is None:
                continue
            rows.append({"run": str(run), "mode": mode, "repeat": repeat, "loss_last_epoch": loss,
                         "eager_loss_last_epoch": base, "gap_vs_eager": loss / base - 1})
    return rows


def report(rows: list[dict]) -> list[str]:
    out = ["run  mode  repeat  last-epoch loss  vs eager"]
    out += [f"{r['run']}  {r['mode']}  {r['repeat']}  {r['loss_last_epoch']:.4f}  {r['gap_vs_eager']:+.1%}"
            for r in rows if r["mode"] != BASELINE]
    eager = [r["loss_last_epoch"] for r in rows if r["mode"] == BASELINE]
    out.append(f"eager over {len(eager)} jobs: last-epoch loss {statistics.median(eager):.4f} median, "
               f"{min(eager):.4f}-{max(eager):.4f}")
    compiled = [r for r in rows if r["mode"] != BASELINE]
    for mode in [m for m in MODES if m != BASELINE] + ["all compiled"]:
        values = [r["gap_vs_eager"] for r in compiled if mode == "all compiled" or r["mode"] == mode]
        if not values:
            continue
        above, runs, one_sided = sign_test(values, [0.0] * len(values))
        far = sum(abs(value) > LOSS_CLOSE for value in values)
        out.append(f"{mode} over {len(values)} runs: vs eager {statistics.median(values):+.1%} median "
                   f"({min(values):+.1%} to {max(values):+.1%}); above eager in {above} of {runs} "
                   f"(two-sided sign test p = {two_sided(above, runs, one_sided):.3g}); "
                   f"beyond {LOSS_CLOSE:.0%} in {far}")
    return out


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run folders, each with timings/<mode>.csv")
    parser.add_argument("--out", type=Path, help="also write the per-job rows as a CSV")
    args = parser.parse_args(argv)
    rows = gaps(args.runs)
    if not any(r["mode"] != BASELINE for r in rows):
        raise SystemExit(f"error: no run among {len(args.runs)} has eager's timings ({BASELINE}.csv) beside a "
                         "compiled mode's")
    print("\n".join(report(rows)))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(args.out, newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows({**r, "gap_vs_eager": round(r["gap_vs_eager"], 5)} for r in rows)
    return rows


if __name__ == "__main__":
    main()
