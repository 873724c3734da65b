"""Summary, plots and comparison with the article for results packed by benchmarks/h200.sh.

The GPU host's calls are limited to 10 minutes and its device time to 30 minutes a session, so
the summary is made here, with the pipeline's own scripts, from the packed timings. Modes that
did not finish on the host are marked in the summary with the reason given here (the same
partial summary the workflow writes when a training job fails under --keep-going).

    python benchmarks/h200_reference.py /tmp/unpacked docs/reference/h200/2026-12-03 \
        --run synthetic-food101 --missing "max-autotune=killed by the call's 10-minute limit"
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow" / "scripts"))

import plot  # noqa: E402
import summarize  # noqa: E402
import vs_article  # noqa: E402
from common import PipelineError  # noqa: E402

MODES = ["none", "default", "reduce-overhead", "max-autotune"]
DATASET_NOTE = ("synthetic Food-101-shaped data (101 classes x 1000 images, all split), "
                "not real Food-101")
DEVICE_NOTE = "resnet50, batch 64, fp16, cuda, loader dali"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("unpacked", help="folder where h200.sh's results.tgz was unpacked")
    parser.add_argument("out", help="reference folder to write (timings/, logs/, summary, plots/)")
    parser.add_argument("--run", default="synthetic-food101")
    parser.add_argument("--missing", action="append", default=[], metavar="MODE=REASON",
                        help="a mode without results on the host, and why (repeatable)")
    args = parser.parse_args(argv)

    src = Path(args.unpacked) / "results" / args.run
    out = Path(args.out)
    reasons = dict(item.split("=", 1) for item in args.missing)
    done = [m for m in MODES if (src / "timings" / f"{m}.csv").exists()]
    unknown = [m for m in MODES if m not in done and m not in reasons]
    if unknown:
        raise SystemExit(f"no timings for {unknown} in {src}/timings and no --missing reason given")
    for sub in ("timings", "logs"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    for mode in done:
        for ext in ("csv", "json"):
            shutil.copy2(src / "timings" / f"{mode}.{ext}", out / "timings" / f"{mode}.{ext}")
    for mode in MODES:
        log = src / "logs" / "train" / f"{mode}.log"
        if log.exists():
            shutil.copy2(log, out / "logs" / f"{mode}.log")
    csvs = [out / "timings" / f"{m}.csv" for m in done]
    jsons = [out / "timings" / f"{m}.json" for m in done]
    missing = [summarize.MissingJob(m, 1, summarize.FAILED if (out / "logs" / f"{m}.log").exists()
                                    else summarize.NOT_RUN, f"logs/{m}.log", reasons[m])
               for m in MODES if m not in done]
    article = REPO / "docs" / "article" / "epoch_times.csv"
    try:
        summarize.main(csvs, jsons, out / "summary.csv", out / "summary.md", run_name=args.run,
                       dataset_note=DATASET_NOTE, repeats_csv=out / "repeats.csv", article_csv=article,
                       missing=missing, mode_order=MODES)
        plot.main(out / "summary.csv", csvs, out / "plots", run_name=args.run, device_note=DEVICE_NOTE,
                  timing_jsons=jsons, repeats_csv=out / "repeats.csv")
        vs_article.main(out / "summary.csv", article, jsons, out / "plots", run_name=args.run,
                        device_note=DEVICE_NOTE)
    except PipelineError as err:
        raise SystemExit(f"error: {err}") from None
    print(f"wrote {out}: {', '.join(done)} done; missing: {', '.join(reasons) or 'none'}")


if __name__ == "__main__":
    main()
