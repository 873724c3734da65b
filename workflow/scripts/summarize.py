"""Summarise one run's per-mode timings: epoch times, steady-state speedup vs eager, compile
overhead, memory and a loss check, as a tidy summary.csv and a summary.md shaped like the article."""

# No `from __future__` import: Snakemake prepends code to scripts it runs.
import argparse
import json
import logging
import math
from pathlib import Path

import pandas as pd

from common import PipelineError, atomic_write, setup_cli_logging, snakemake_log

TIMING_COLUMNS = [
    "mode", "epoch", "epoch_s", "steps", "images", "images_per_s", "loss_mean", "loss_last",
]
NUMERIC_COLUMNS = TIMING_COLUMNS[1:]
META_KEYS = ["mode", "compile", "compile_s", "peak_gpu_mem_gib", "graph_breaks", "recompiles", "device"]

log = logging.getLogger(__name__)


# ---------------------------------------------------------------- reading and validation
def read_timings(path: str | Path) -> pd.DataFrame:
    """One mode's per-epoch CSV, checked: all columns, numbers, one mode, epochs 1..N."""
    path = Path(path)
    try:
        df = pd.read_csv(path)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise PipelineError(f"{path}: cannot read timings CSV: {err}") from err
    missing = [c for c in TIMING_COLUMNS if c not in df.columns]
    if missing:
        raise PipelineError(f"{path}: missing column(s) {', '.join(missing)}")
    if df.empty:
        raise PipelineError(f"{path}: no epochs recorded")
    for col in NUMERIC_COLUMNS:
        values = pd.to_numeric(df[col], errors="coerce")
        if values.isna().any():
            raise PipelineError(f"{path}: column {col} has empty or non-numeric values")
        df[col] = values
    modes = df["mode"].astype(str).unique()
    if len(modes) != 1:
        raise PipelineError(f"{path}: expected one mode, found {', '.join(modes)}")
    df["mode"] = df["mode"].astype(str)
    df = df.sort_values("epoch", kind="stable").reset_index(drop=True)
    expected = list(range(1, len(df) + 1))
    if df["epoch"].tolist() != expected:
        raise PipelineError(
            f"{path}: epochs must be 1..N without gaps or repeats, found {df['epoch'].tolist()}"
        )
    df["epoch"] = df["epoch"].astype(int)
    if (df["epoch_s"] <= 0).any():
        raise PipelineError(f"{path}: epoch_s must be positive")
    return df


def read_meta(path: str | Path) -> dict:
    """One mode's JSON of compile time, memory, graph breaks and loss curve, checked for keys."""
    path = Path(path)
    try:
        meta = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise PipelineError(f"{path}: cannot read timings JSON: {err}") from err
    if not isinstance(meta, dict):
        raise PipelineError(f"{path}: expected a JSON object")
    missing = [k for k in META_KEYS if k not in meta]
    if missing:
        raise PipelineError(f"{path}: missing key(s) {', '.join(missing)}")
    return meta


def load_runs(timing_csvs: list, timing_jsons: list) -> list[tuple[str, pd.DataFrame, dict]]:
    """(mode, timings, meta) per mode, in the order of `timing_csvs`; CSV and JSON paired by mode."""
    if not timing_csvs:
        raise PipelineError("no timing CSVs given")
    runs: dict[str, pd.DataFrame] = {}
    for path in timing_csvs:
        df = read_timings(path)
        mode = df["mode"].iloc[0]
        if mode in runs:
            raise PipelineError(f"{path}: mode {mode!r} appears in more than one timing CSV")
        runs[mode] = df
    metas: dict[str, dict] = {}
    for path in timing_jsons:
        meta = read_meta(path)
        mode = str(meta["mode"])
        if mode in metas:
            raise PipelineError(f"{path}: mode {mode!r} appears in more than one timing JSON")
        if mode not in runs:
            raise PipelineError(f"{path}: mode {mode!r} has no timing CSV")
        metas[mode] = meta
    without_json = [m for m in runs if m not in metas]
    if without_json:
        raise PipelineError(f"no timing JSON for mode(s) {', '.join(without_json)}")
    epoch_counts = {mode: len(df) for mode, df in runs.items()}
    if len(set(epoch_counts.values())) != 1:
        counts = ", ".join(f"{m}: {n}" for m, n in epoch_counts.items())
        raise PipelineError(f"modes ran different numbers of epochs ({counts}); not comparable")
    return [(mode, df, metas[mode]) for mode, df in runs.items()]


# ---------------------------------------------------------------- the summary table
def _float_or_nan(value) -> float:
    return math.nan if value is None else float(value)


def summarize_mode(mode: str, df: pd.DataFrame, meta: dict) -> dict:
    """One flat row: per-epoch seconds, steady state (epochs 2..N), compile cost, memory, loss."""
    row = {"mode": mode, "epochs": len(df)}
    for epoch, seconds in zip(df["epoch"], df["epoch_s"]):
        row[f"epoch{epoch}_s"] = float(seconds)
    steady = df[df["epoch"] >= 2]
    if steady.empty:
        row["steady_epoch_s"] = math.nan
        row["steady_images_per_s"] = math.nan
    else:
        row["steady_epoch_s"] = float(steady["epoch_s"].mean())
        # Throughput over the whole steady state, not a mean of per-epoch rates.
        row["steady_images_per_s"] = float(steady["images"].sum() / steady["epoch_s"].sum())
    row["compile_overhead_s"] = row["epoch1_s"] - row["steady_epoch_s"]
    row["compile_s"] = _float_or_nan(meta["compile_s"])
    row["peak_gpu_mem_gib"] = _float_or_nan(meta["peak_gpu_mem_gib"])
    row["graph_breaks"] = int(meta["graph_breaks"])
    row["recompiles"] = int(meta["recompiles"])
    row["loss_first_epoch"] = float(df["loss_mean"].iloc[0])
    row["loss_last_epoch"] = float(df["loss_mean"].iloc[-1])
    # Empty, not False, with one epoch: there is nothing to compare.
    row["loss_falls"] = bool(row["loss_last_epoch"] < row["loss_first_epoch"]) if len(df) > 1 else None
    row["eager"] = meta["compile"] is None
    return row


def build_summary(runs, baseline: str) -> pd.DataFrame:
    rows = [summarize_mode(mode, df, meta) for mode, df, meta in runs]
    summary = pd.DataFrame(rows)
    speedup_col, gap_col = f"speedup_vs_{baseline}", f"loss_gap_vs_{baseline}"
    if baseline in summary["mode"].values:
        base = summary.set_index("mode").loc[baseline]
        summary[speedup_col] = base["steady_epoch_s"] / summary["steady_epoch_s"]
        summary[gap_col] = (summary["loss_last_epoch"] - base["loss_last_epoch"]) / base[
            "loss_last_epoch"
        ]
    else:
        summary[speedup_col] = math.nan
        summary[gap_col] = math.nan
    epoch_cols = [c for c in summary.columns if c.startswith("epoch") and c.endswith("_s")]
    columns = [
        "mode", "epochs", *epoch_cols, "steady_epoch_s", "compile_overhead_s", "compile_s",
        "steady_images_per_s", speedup_col, "peak_gpu_mem_gib", "graph_breaks", "recompiles",
        "loss_first_epoch", "loss_last_epoch", "loss_falls", gap_col,
    ]
    return summary[columns + ["eager"]]


# ---------------------------------------------------------------- Markdown
def _seconds(value: float) -> str:
    return "n/a" if pd.isna(value) else f"{value:.1f}"


def _speedup(value: float) -> str:
    return "n/a" if pd.isna(value) else f"{value:.2f}x"


def _label(row) -> str:
    return f"{row['mode']} (eager)" if row["eager"] else str(row["mode"])


def _markdown_table(header: list[str], align: list[str], rows: list[list[str]]) -> list[str]:
    rule = ["---:" if a == "r" else "---" for a in align]
    return ["| " + " | ".join(cells) + " |" for cells in [header, rule, *rows]]


def timing_table(summary: pd.DataFrame, baseline: str) -> list[str]:
    n_epochs = int(summary["epochs"].iloc[0])
    header = ["mode", *(f"epoch {e}" for e in range(1, n_epochs + 1)), "steady", "compile overhead",
              f"speedup vs {baseline}"]
    rows = [
        [_label(r), *(_seconds(r[f"epoch{e}_s"]) for e in range(1, n_epochs + 1)),
         _seconds(r["steady_epoch_s"]), _seconds(r["compile_overhead_s"]),
         _speedup(r[f"speedup_vs_{baseline}"])]
        for _, r in summary.iterrows()
    ]
    return _markdown_table(header, ["l"] + ["r"] * (len(header) - 1), rows)


def detail_table(summary: pd.DataFrame, baseline: str) -> list[str]:
    header = ["mode", "compile (s)", "peak GPU memory (GiB)", "graph breaks", "recompiles",
              "loss first → last epoch", f"last loss vs {baseline}"]
    rows = []
    for _, r in summary.iterrows():
        mem = "n/a (CPU)" if pd.isna(r["peak_gpu_mem_gib"]) else f"{r['peak_gpu_mem_gib']:.2f}"
        gap = r[f"loss_gap_vs_{baseline}"]
        rows.append([
            _label(r), _seconds(r["compile_s"]), mem, str(r["graph_breaks"]), str(r["recompiles"]),
            f"{r['loss_first_epoch']:.3f} → {r['loss_last_epoch']:.3f}",
            "n/a" if pd.isna(gap) else f"{gap:+.1%}",
        ])
    return _markdown_table(header, ["l"] + ["r"] * (len(header) - 1), rows)


def findings(summary: pd.DataFrame, baseline: str) -> list[str]:
    """Two to four plain sentences read off the numbers."""
    sentences = []
    has_baseline = baseline in summary["mode"].values
    if summary["steady_epoch_s"].isna().all():
        sentences.append(
            "With a single epoch there is no steady state (epochs 2..N), so steady time, compile "
            "overhead and speedup are not defined; run at least 2 epochs to measure them."
        )
    else:
        fastest = summary.loc[summary["steady_epoch_s"].idxmin()]
        text = (f"In steady state (mean of epochs 2..N) {fastest['mode']} is fastest at "
                f"{fastest['steady_epoch_s']:.1f} s per epoch")
        if not has_baseline:
            text += f"; no speedup is given because the baseline mode {baseline!r} is not in this run."
        elif fastest["mode"] == baseline:
            text += f", so no compiled mode beats {baseline}."
        else:
            base = summary[summary["mode"] == baseline].iloc[0]
            kind = "eager, " if base["eager"] else ""
            text += (f", {fastest[f'speedup_vs_{baseline}']:.2f}x the speed of {baseline} "
                     f"({kind}{base['steady_epoch_s']:.1f} s).")
        sentences.append(text)
        costly = summary.loc[summary["compile_overhead_s"].idxmax()]
        sentences.append(
            f"{costly['mode']} has the largest compile overhead: its first epoch took "
            f"{costly['compile_overhead_s']:.1f} s longer than its steady epochs."
        )
    not_falling = summary.loc[summary["loss_falls"].eq(False), "mode"].tolist()
    if summary["epochs"].iloc[0] < 2:
        sentences.append("With one epoch, whether the training loss falls across epochs is not measured.")
    elif not_falling:
        sentences.append(
            "Training loss did not fall from the first to the last epoch in: "
            f"{', '.join(not_falling)}."
        )
    else:
        sentences.append("Training loss fell from the first to the last epoch in every mode.")
    gaps = summary.loc[summary["mode"] != baseline, f"loss_gap_vs_{baseline}"].dropna()
    if len(gaps):
        sentences.append(
            f"Last-epoch loss of the other modes is within {gaps.abs().max():.1%} of {baseline}'s."
        )
    return sentences


def render_markdown(summary: pd.DataFrame, baseline: str, run_name: str, dataset_note: str) -> str:
    title = f"# torch.compile benchmark: {run_name}"
    if dataset_note:
        title += f" — {dataset_note}"
    lines = [title, "", "Epoch times in seconds; epoch 1 includes compilation; steady = mean of "
             "epochs 2..N; compile overhead = epoch 1 − steady; speedup = "
             f"{baseline} steady / mode steady.", ""]
    if baseline not in summary["mode"].values:
        lines += [f"**The baseline mode {baseline!r} is not in this run: no speedups are given.**", ""]
    if summary["steady_epoch_s"].isna().all():
        lines += ["**Only one epoch was run: there is no steady state, so steady time, compile "
                  "overhead and speedup are n/a.**", ""]
    lines += timing_table(summary, baseline) + [""]
    lines += detail_table(summary, baseline) + [""]
    lines += [" ".join(findings(summary, baseline)), ""]
    return "\n".join(lines)


# ---------------------------------------------------------------- entry
def main(timing_csvs: list, timing_jsons: list, summary_csv, summary_md, *, baseline: str = "none",
         run_name: str, dataset_note: str = "") -> pd.DataFrame:
    runs = load_runs(list(timing_csvs), list(timing_jsons))
    summary = build_summary(runs, baseline)
    if baseline not in summary["mode"].values:
        log.warning("baseline mode %r not in this run; speedup columns left empty", baseline)
    if summary["steady_epoch_s"].isna().all():
        log.warning("only one epoch per mode: no steady state, steady_epoch_s is NaN")
    table = summary.drop(columns="eager")
    with atomic_write(summary_csv, newline="") as handle:
        table.to_csv(handle, index=False)
    with atomic_write(summary_md, encoding="utf-8") as handle:
        handle.write(render_markdown(summary, baseline, run_name, dataset_note))
    log.info("summarised %d modes into %s and %s", len(table), summary_csv, summary_md)
    return table


def _cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--csv", nargs="+", required=True, help="results/<run>/timings/<mode>.csv")
    parser.add_argument("--json", nargs="+", required=True, help="results/<run>/timings/<mode>.json")
    parser.add_argument("--out-csv", required=True)
    parser.add_argument("--out-md", required=True)
    parser.add_argument("--baseline", default="none")
    parser.add_argument("--run", required=True, help="run name for the title")
    parser.add_argument("--dataset-note", default="")
    args = parser.parse_args()
    try:
        main(args.csv, args.json, args.out_csv, args.out_md, baseline=args.baseline,
             run_name=args.run, dataset_note=args.dataset_note)
    except PipelineError as err:
        raise SystemExit(f"error: {err}") from None


if __name__ == "__main__":
    if "snakemake" in globals():
        with snakemake_log(snakemake):  # noqa: F821
            main(
                list(snakemake.input.csv),  # noqa: F821
                list(snakemake.input.json),  # noqa: F821
                snakemake.output.csv,  # noqa: F821
                snakemake.output.md,  # noqa: F821
                baseline=snakemake.params.baseline,  # noqa: F821
                run_name=snakemake.params.run,  # noqa: F821
                dataset_note=snakemake.params.dataset_note,  # noqa: F821
            )
    else:
        setup_cli_logging()
        _cli()
