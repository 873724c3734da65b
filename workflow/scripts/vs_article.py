"""Plot this run's steady-state speedup per mode beside the article's (RTX 3090, PyTorch 2.1.0),
each labelled with its setup; whiskers on this run's bars span its repeats (min-max)."""

# No `from __future__` import: Snakemake prepends code to scripts it runs.
import argparse
import json
import logging
import math
from pathlib import Path

import pandas as pd

import plot  # sets the Agg backend before pyplot is imported
import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402
from common import PipelineError, setup_cli_logging, snakemake_log  # noqa: E402
from summarize import article_speedups, read_article, run_setup, setup_label  # noqa: E402

OURS_COLOUR = sns.color_palette("colorblind")[0]
ARTICLE_COLOUR = (0.62, 0.62, 0.62)

log = logging.getLogger(__name__)


def comparison_table(summary: pd.DataFrame, article: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Per mode (this run's order, then the article's other modes): this run's speedup with its
    min-max, and the article's speedup; NaN where one side did not run the mode."""
    col = f"speedup_vs_{baseline}"
    ours = summary.set_index("mode")
    theirs = article_speedups(article, baseline)
    modes = list(ours.index) + [m for m in theirs.index if m not in ours.index]
    rows = []
    for mode in modes:
        row = {"mode": mode, "ours": math.nan, "ours_min": math.nan, "ours_max": math.nan,
               "article": theirs["article_speedup"].get(mode, math.nan)}
        if mode in ours.index:
            row["ours"] = ours.loc[mode, col]
            row["ours_min"] = ours.loc[mode].get(f"{col}_min", row["ours"])
            row["ours_max"] = ours.loc[mode].get(f"{col}_max", row["ours"])
        rows.append(row)
    return pd.DataFrame(rows)


def _bars(ax, x: list[float], values: list[float], colour, label: str, inside: bool = False):
    """Bars with their value written on top, or `inside` (centred) where whiskers sit on top."""
    bars = ax.bar(x, [0.0 if math.isnan(v) else v for v in values], width=0.38, color=colour,
                  label=label, edgecolor="white", linewidth=0.8, zorder=2)
    box = {"facecolor": "white", "edgecolor": "none", "pad": 0.5}
    ax.bar_label(bars, labels=["" if math.isnan(v) else f"{v:.2f}x" for v in values], padding=2,
                 fontsize=8, label_type="center" if inside else "edge", bbox=box)
    for position, value in zip(x, values):  # a mode that one side did not run: no bar
        if math.isnan(value):
            ax.annotate("n/a", xy=(position, 0), xytext=(0, 3), textcoords="offset points",
                        ha="center", va="bottom", fontsize=8, bbox=box)


def protocol_label(train: dict) -> str:
    """`resnet50, 224 px, batch 64, fp16, 3 epochs` from the keys of `train` that are known."""
    parts = [str(train["model"])] if train.get("model") else []
    for key, fmt in (("image_size", "{} px"), ("batch_size", "batch {}"), ("precision", "{}"),
                     ("epochs", "{} epochs")):
        if train.get(key) not in (None, ""):
            parts.append(fmt.format(train[key]))
    return ", ".join(parts)


def legend_label(who: str, machine: str, train: dict) -> str:
    protocol = protocol_label(train)
    return f"{who}: {machine}" + (f" — {protocol}" if protocol else "")


def figure(table: pd.DataFrame, baseline: str, ours_label: str, article_label: str, context: str):
    fig, ax = plt.subplots(figsize=(max(8.0, 2.0 * len(table) + 1.5), 5.6))
    x = list(range(len(table)))
    ours_x = [i - 0.2 for i in x]
    has_spread = (table["ours_max"] - table["ours_min"]).fillna(0).gt(0).any()
    _bars(ax, ours_x, table["ours"].astype(float).tolist(), OURS_COLOUR, ours_label,
          inside=has_spread)
    _bars(ax, [i + 0.2 for i in x], table["article"].astype(float).tolist(), ARTICLE_COLOUR,
          article_label)
    if has_spread:
        low = (table["ours"] - table["ours_min"]).fillna(0).tolist()
        high = (table["ours_max"] - table["ours"]).fillna(0).tolist()
        ax.errorbar(ours_x, table["ours"].fillna(0).tolist(), yerr=[low, high], fmt="none",
                    ecolor="0.15", elinewidth=1.2, capsize=4, zorder=3,
                    label="this run: min–max over repeats")
    ax.axhline(1.0, color="0.15", linestyle="--", linewidth=1.2, zorder=3)
    ax.annotate("eager", xy=(1.0, 1.0), xycoords=("axes fraction", "data"), xytext=(4, 0),
                textcoords="offset points", ha="left", va="center", fontsize=10, color="0.15")
    top = max([1.0, *table["ours_max"].dropna(), *table["article"].dropna()])
    ax.set_ylim(0, top * 1.2)
    ax.set_xticks(x, [plot.tick_label(m, baseline) for m in table["mode"]])
    ax.set_xlabel("torch.compile mode")
    ax.set_ylabel(f"speedup vs {baseline} (×, steady state)")
    # Below the axes: the setup labels are long and must not squeeze the bars.
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.24), frameon=False, fontsize=9)
    plot._titles(fig, ax, "Steady-state speedup: this run and the article", context,
                 f"speedup = {baseline} steady epoch time / mode's (mean of epochs 2..N); "
                 "higher is better")
    sns.despine(fig)
    fig.tight_layout()
    return fig


def main(summary_csv, article_csv, timing_jsons: list, out_dir, *, run_name: str,
         baseline: str = "none", device_note: str = "") -> list[Path]:
    summary = pd.read_csv(summary_csv).astype({"mode": str})
    if f"speedup_vs_{baseline}" not in summary:
        raise PipelineError(f"{summary_csv}: no speedup_vs_{baseline} column")
    article, article_setup = read_article(article_csv)
    metas = []
    for path in timing_jsons:
        try:
            metas.append(json.loads(Path(path).read_text()))
        except (OSError, json.JSONDecodeError) as err:
            raise PipelineError(f"{path}: cannot read timing JSON: {err}") from err
    setup = run_setup(metas)
    table = comparison_table(summary, article, baseline)
    sns.set_theme(style="whitegrid", context="notebook")
    plt.rcParams["svg.hashsalt"] = "torch-compile-bench"  # stable SVG ids across runs
    # Each legend entry names its machine, PyTorch and protocol: the two setups side by side.
    ours = legend_label("this run", setup_label(setup["hardware"], setup["torch"]), setup["train"])
    theirs = legend_label(
        "article",
        setup_label(article_setup.get("gpu", "unknown GPU"), article_setup.get("torch", "unknown")),
        article_setup)
    fig = figure(table, baseline, ours, theirs, plot._context(run_name, device_note))
    written = plot.save(fig, Path(out_dir), "vs_article")
    log.info("wrote %s", ", ".join(str(p) for p in written))
    return written


def _cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--summary", required=True, help="results/<run>/summary.csv")
    parser.add_argument("--article", required=True, help="docs/article/epoch_times.csv")
    parser.add_argument("--json", nargs="+", required=True, help="timing JSONs (this run's setup)")
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--baseline", default="none")
    parser.add_argument("--device-note", default="")
    args = parser.parse_args()
    try:
        main(args.summary, args.article, args.json, args.out_dir, run_name=args.run,
             baseline=args.baseline, device_note=args.device_note)
    except PipelineError as err:
        raise SystemExit(f"error: {err}") from None


if __name__ == "__main__":
    if "snakemake" in globals():
        with snakemake_log(snakemake):  # noqa: F821
            out_dir = Path(snakemake.output.png).parent  # noqa: F821
            if Path(snakemake.output.svg) != out_dir / "vs_article.svg" or Path(  # noqa: F821
                    snakemake.output.png).name != "vs_article.png":  # noqa: F821
                raise PipelineError("vs_article outputs must be <dir>/vs_article.png and .svg")
            main(
                snakemake.input.summary,  # noqa: F821
                snakemake.input.article,  # noqa: F821
                list(snakemake.input.json),  # noqa: F821
                out_dir,
                run_name=snakemake.params.run,  # noqa: F821
                baseline=snakemake.params.baseline,  # noqa: F821
                device_note=snakemake.params.device_note,  # noqa: F821
            )
    else:
        setup_cli_logging()
        _cli()
