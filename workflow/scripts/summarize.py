"""Summarise one run's per-mode timings: epoch times, steady-state speedup vs eager, compile
overhead, memory, a loss check, the spread over repeats and the article's numbers beside this run's,
as a tidy summary.csv (per mode), repeats.csv (per training job) and a summary.md like the article.

Given training jobs that left no timings (`missing`: a mode that failed, or was never started), it
writes a partial summary instead: numbers only from the jobs that finished, every other mode marked
with its status, log and error, and a banner in the Markdown (see the Snakefile's `onerror`)."""

# No `from __future__` import: Snakemake prepends code to scripts it runs.
import argparse
import dataclasses
import json
import logging
import math
import re
import statistics
from pathlib import Path

import pandas as pd

from common import PipelineError, atomic_write, repeat_of, setup_cli_logging, snakemake_log

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


def _job_name(mode: str, repeat: int) -> str:
    return f"mode {mode!r}" if repeat == 1 else f"mode {mode!r} repeat {repeat}"


def load_runs(timing_csvs: list, timing_jsons: list) -> list[tuple[str, int, pd.DataFrame, dict]]:
    """(mode, repeat, timings, meta) per training job, in the order of `timing_csvs`; CSV and JSON
    paired by mode (read from the files) and repeat (read from the file names)."""
    if not timing_csvs:
        raise PipelineError("no timing CSVs given")
    runs: dict[tuple[str, int], pd.DataFrame] = {}
    for path in timing_csvs:
        df = read_timings(path)
        key = (df["mode"].iloc[0], repeat_of(path))
        if key in runs:
            raise PipelineError(f"{path}: {_job_name(*key)} appears in more than one timing CSV")
        runs[key] = df
    metas: dict[tuple[str, int], dict] = {}
    for path in timing_jsons:
        meta = read_meta(path)
        key = (str(meta["mode"]), repeat_of(path))
        if key in metas:
            raise PipelineError(f"{path}: {_job_name(*key)} appears in more than one timing JSON")
        if key not in runs:
            raise PipelineError(f"{path}: {_job_name(*key)} has no timing CSV")
        metas[key] = meta
    without_json = [_job_name(*key) for key in runs if key not in metas]
    if without_json:
        raise PipelineError(f"no timing JSON for {', '.join(without_json)}")
    epoch_counts = {key: len(df) for key, df in runs.items()}
    if len(set(epoch_counts.values())) != 1:
        counts = ", ".join(f"{m}{'' if r == 1 else f' rep{r}'}: {n}" for (m, r), n in epoch_counts.items())
        raise PipelineError(f"modes ran different numbers of epochs ({counts}); not comparable")
    return [(mode, repeat, df, metas[(mode, repeat)]) for (mode, repeat), df in runs.items()]


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
    # the same compiled step on one batch kept on the device, timed after the epochs: the loader's
    # upper bound (none when the job trained on that batch itself or skipped it)
    row["one_batch_images_per_s"] = _float_or_nan(meta.get("synthetic_batch_images_per_s"))
    row["fed_vs_one_batch"] = row["steady_images_per_s"] / row["one_batch_images_per_s"]
    # the job's loader in blocks paired round by round with those one-batch blocks: the median of
    # the rounds' ratios, with the host's drift between the epochs and that measurement cancelled
    row["fed_vs_one_batch_paired"] = _float_or_nan(meta.get("fed_vs_one_batch_paired"))
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


def _epoch_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c.startswith("epoch") and c.endswith("_s")]


def build_jobs(runs, baseline: str) -> pd.DataFrame:
    """One row per training job (mode x repeat); speedup against the baseline's median steady time."""
    rows = [{**summarize_mode(mode, df, meta), "repeat": repeat} for mode, repeat, df, meta in runs]
    jobs = pd.DataFrame(rows)
    speedup_col = f"speedup_vs_{baseline}"
    base = jobs.loc[jobs["mode"] == baseline, "steady_epoch_s"]
    jobs[speedup_col] = base.median() / jobs["steady_epoch_s"] if len(base) else math.nan
    columns = [
        "mode", "repeat", "epochs", *_epoch_columns(jobs), "steady_epoch_s", "compile_overhead_s",
        "compile_s", "steady_images_per_s", "one_batch_images_per_s", "fed_vs_one_batch",
        "fed_vs_one_batch_paired", speedup_col, "peak_gpu_mem_gib", "graph_breaks", "recompiles", "loss_first_epoch", "loss_last_epoch",
    ]
    return jobs[columns + ["eager"]]


def build_summary(jobs: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """One row per mode: medians over its repeats, min-max of steady time and speedup.

    A speedup's range pairs every repeat of the baseline with every repeat of the mode (lowest:
    fastest baseline / slowest mode), so it holds the noise of both. With one repeat every median
    is the value itself and each range collapses onto it.
    """
    speedup_col, gap_col = f"speedup_vs_{baseline}", f"loss_gap_vs_{baseline}"
    epoch_cols = _epoch_columns(jobs)
    median_cols = [*epoch_cols, "steady_epoch_s", "compile_overhead_s", "compile_s",
                   "steady_images_per_s", "one_batch_images_per_s", "fed_vs_one_batch", "fed_vs_one_batch_paired",
                   "loss_first_epoch", "loss_last_epoch"]
    grouped = jobs.groupby("mode", sort=False)
    summary = grouped[median_cols].median()
    summary.insert(0, "repeats", grouped.size())
    summary.insert(0, "epochs", grouped["epochs"].first())
    summary["steady_epoch_s_min"] = grouped["steady_epoch_s"].min()
    summary["steady_epoch_s_max"] = grouped["steady_epoch_s"].max()
    summary["peak_gpu_mem_gib"] = grouped["peak_gpu_mem_gib"].max()
    summary["graph_breaks"] = grouped["graph_breaks"].max()
    summary["recompiles"] = grouped["recompiles"].max()
    summary["eager"] = grouped["eager"].first()
    summary = summary.reset_index()
    # Empty, not False, with one epoch: there is nothing to compare.
    summary["loss_falls"] = [
        bool(last < first) if epochs > 1 else None
        for first, last, epochs in zip(summary["loss_first_epoch"], summary["loss_last_epoch"],
                                       summary["epochs"])
    ]
    if baseline in summary["mode"].values:
        base = summary.set_index("mode").loc[baseline]
        summary[speedup_col] = base["steady_epoch_s"] / summary["steady_epoch_s"]
        summary[f"{speedup_col}_min"] = base["steady_epoch_s_min"] / summary["steady_epoch_s_max"]
        summary[f"{speedup_col}_max"] = base["steady_epoch_s_max"] / summary["steady_epoch_s_min"]
        summary[gap_col] = (summary["loss_last_epoch"] - base["loss_last_epoch"]) / base[
            "loss_last_epoch"
        ]
    else:
        for col in (speedup_col, f"{speedup_col}_min", f"{speedup_col}_max", gap_col):
            summary[col] = math.nan
    columns = [
        "mode", "epochs", "repeats", *epoch_cols, "steady_epoch_s", "steady_epoch_s_min",
        "steady_epoch_s_max", "compile_overhead_s", "compile_s", "steady_images_per_s",
        "one_batch_images_per_s", "fed_vs_one_batch", "fed_vs_one_batch_paired", speedup_col, f"{speedup_col}_min", f"{speedup_col}_max", "peak_gpu_mem_gib",
        "graph_breaks", "recompiles", "loss_first_epoch", "loss_last_epoch", "loss_falls", gap_col,
    ]
    return summary[columns + ["eager"]]


# ---------------------------------------------------------------- Markdown
def _seconds(value: float) -> str:
    """Seconds with two decimals below 100 s: differences of a few percent between modes or
    repeats must stay visible (18.87 vs 19.09 s, not 18.9 vs 19.1)."""
    if pd.isna(value):
        return "n/a"
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.2f}"


def _speedup(value: float) -> str:
    return "n/a" if pd.isna(value) else f"{value:.2f}x"


def _label(row) -> str:
    return f"{row['mode']} (eager)" if row["eager"] else str(row["mode"])


def _has_spread(summary: pd.DataFrame) -> bool:
    """True when some mode ran more than once: then ranges over repeats are shown."""
    return "repeats" in summary and summary["repeats"].max() > 1


def _seconds_range(row, col: str, spread: bool) -> str:
    text = _seconds(row[col])
    if spread and not pd.isna(row[f"{col}_min"]):
        text += f" ({_seconds(row[f'{col}_min'])}–{_seconds(row[f'{col}_max'])})"
    return text


def _speedup_range(row, col: str, spread: bool) -> str:
    text = _speedup(row[col])
    if spread and not pd.isna(row[f"{col}_min"]):
        text += f" ({row[f'{col}_min']:.2f}–{row[f'{col}_max']:.2f}x)"
    return text


def _markdown_table(header: list[str], align: list[str], rows: list[list[str]]) -> list[str]:
    rule = ["---:" if a == "r" else "---" for a in align]
    return ["| " + " | ".join(cells) + " |" for cells in [header, rule, *rows]]


def _rows_with_gaps(summary: pd.DataFrame, gaps: pd.DataFrame | None, row_cells, width: int):
    """Table rows of `summary` by `row_cells(row, label)`; with `gaps`, in the configured order, each
    mode without results as a row of dashes and an incomplete mode's label saying so."""
    if gaps is None:
        return [row_cells(r, _label(r)) for _, r in summary.iterrows()]
    notes = gaps.set_index("mode")
    rows = {}
    for _, r in summary.iterrows():
        note = f" ({notes.loc[r['mode'], 'jobs']})" if r["mode"] in notes.index else ""
        rows[r["mode"]] = row_cells(r, _label(r) + note)
    for mode, gap in notes.iterrows():
        rows.setdefault(mode, [f"{mode} ({gap['status']})"] + ["—"] * (width - 1))
    return [rows[mode] for mode in gaps.attrs["order"] if mode in rows]


def timing_table(summary: pd.DataFrame, baseline: str, gaps: pd.DataFrame | None = None) -> list[str]:
    n_epochs = int(summary["epochs"].iloc[0])
    spread = _has_spread(summary)
    ranged = " (min–max)" if spread else ""
    header = ["mode", *(f"epoch {e}" for e in range(1, n_epochs + 1)), f"steady{ranged}",
              "compile overhead", f"speedup vs {baseline}{ranged}"]

    def cells(r, label):
        return [label, *(_seconds(r[f"epoch{e}_s"]) for e in range(1, n_epochs + 1)),
                _seconds_range(r, "steady_epoch_s", spread), _seconds(r["compile_overhead_s"]),
                _speedup_range(r, f"speedup_vs_{baseline}", spread)]

    rows = _rows_with_gaps(summary, gaps, cells, len(header))
    return _markdown_table(header, ["l"] + ["r"] * (len(header) - 1), rows)


def detail_table(summary: pd.DataFrame, baseline: str, gaps: pd.DataFrame | None = None) -> list[str]:
    header = ["mode", "compile (s)", "peak GPU memory (GiB)", "graph breaks", "recompiles",
              "loss first → last epoch", f"last loss vs {baseline}", "fed / one-batch",
              "fed / one-batch, paired"]

    def cells(r, label):
        mem = "n/a (CPU)" if pd.isna(r["peak_gpu_mem_gib"]) else f"{r['peak_gpu_mem_gib']:.2f}"
        gap, fed, paired = r[f"loss_gap_vs_{baseline}"], r["fed_vs_one_batch"], r["fed_vs_one_batch_paired"]
        return [
            label, _seconds(r["compile_s"]), mem, str(r["graph_breaks"]), str(r["recompiles"]),
            f"{r['loss_first_epoch']:.3f} → {r['loss_last_epoch']:.3f}",
            "n/a" if pd.isna(gap) else f"{gap:+.1%}",
            "n/a" if pd.isna(fed) else f"{fed:.1%}",
            "n/a" if pd.isna(paired) else f"{paired:.1%}",
        ]

    rows = _rows_with_gaps(summary, gaps, cells, len(header))
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
                f"{_seconds(fastest['steady_epoch_s'])} s per epoch")
        if not has_baseline:
            text += f"; no speedup is given because the baseline mode {baseline!r} is not in this run."
        elif fastest["mode"] == baseline:
            text += f", so no compiled mode beats {baseline}."
        else:
            base = summary[summary["mode"] == baseline].iloc[0]
            kind = "eager, " if base["eager"] else ""
            text += (f", {fastest[f'speedup_vs_{baseline}']:.2f}x the speed of {baseline} "
                     f"({kind}{_seconds(base['steady_epoch_s'])} s).")
            if _has_spread(summary):
                text += " " + _range_verdict(fastest, f"speedup_vs_{baseline}")
        sentences.append(text)
        if _has_spread(summary):
            sentences.append(_noise_sentence(summary))
        costly = summary.loc[summary["compile_overhead_s"].idxmax()]
        sentences.append(
            f"{costly['mode']} has the largest compile overhead: its first epoch took "
            f"{_seconds(costly['compile_overhead_s'])} s longer than its steady epochs."
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
        worst = summary.loc[gaps.abs().idxmax(), "mode"]
        largest = f"{worst}, {gaps[gaps.abs().idxmax()]:+.1%}"
        far, drift = gaps.abs() > LOSS_DRIFT, gaps.abs() > LOSS_CLOSE
        if far.any():
            names = ", ".join(summary.loc[gaps[far].index, "mode"])
            sentences.append(
                f"Loss curves not close to {baseline}'s: the last-epoch mean loss of {names} differs "
                f"from {baseline}'s by more than {LOSS_DRIFT:.0%} (largest: {largest}), more than "
                "rounding alone moved any same-seed run of the full synthetic Food-101 protocol (at most "
                "22%, benchmarks/loss_spread.py), though in a short or unstable run it can move further; "
                "compare the loss plot before trusting the timings."
            )
        elif drift.any():
            names = ", ".join(summary.loc[gaps[drift].index, "mode"])
            sentences.append(
                f"Loss curves within the drift of a single run: the last-epoch mean loss "
                f"of {names} differs from {baseline}'s by more than {LOSS_CLOSE:.0%} but less than "
                f"{LOSS_DRIFT:.0%} (largest: {largest}); same-seed runs drift that far apart through "
                "rounding alone, so only repeats or many runs (benchmarks/loss_spread.py) can tell a "
                "numerical difference of the compiled kernels from that drift."
            )
        else:
            sentences.append(
                f"Loss curves close to {baseline}'s: every mode's last-epoch mean loss is within "
                f"{LOSS_CLOSE:.0%} of {baseline}'s (largest difference: {largest})."
            )
    span = _percent_span(summary, "fed_vs_one_batch")
    if span:
        sentences.append(
            f"Fed by the loader, the steady epochs ran at {span} of the same compiled step's rate on "
            "one batch kept on the device (fed / one-batch, timed after the epochs): the closer to "
            "100%, the less the loader costs."
        )
    span = _percent_span(summary, "fed_vs_one_batch_paired")
    if span:
        sentences.append(
            f"Blocks fed by the loader after the epochs, each paired with a one-batch block next to "
            f"it, ran at {span} of it (fed / one-batch, paired: the median of the rounds' ratios, "
            "the host's drift cancelled)."
        )
    return sentences


def _percent_span(summary: pd.DataFrame, col: str) -> str:
    """'lowest% (mode) to highest% (mode)' of a column, one value alone, or '' when all empty."""
    values = summary[col].dropna()
    if not len(values):
        return ""
    low, high = summary.loc[values.idxmin(), "mode"], summary.loc[values.idxmax(), "mode"]
    if len(values) == 1:
        return f"{values.min():.1%} ({low})"
    return f"{values.min():.1%} ({low}) to {values.max():.1%} ({high})"


# Same seed, same data order: a compiled mode's last-epoch mean loss differs from eager's only
# through its kernels' rounding, which the thousands of steps of a run amplify into a drift of the
# whole trajectory. Within LOSS_CLOSE the curves are close; up to LOSS_DRIFT that drift alone
# explains it: over 36 compiled jobs of 14 reference runs of configs/synthetic-food101.yaml
# (docs/reference, benchmarks/loss_spread.py) the gap ranged -15.3% to +22.2% (sd 7%), with no
# mode above eager's more often than below, and 7 of the 36 beyond 10%. Beyond LOSS_DRIFT the
# mode trained differently.
LOSS_CLOSE = 0.10
LOSS_DRIFT = 0.25


def _range_verdict(row, col: str) -> str:
    low, high = row[f"{col}_min"], row[f"{col}_max"]
    where = ("lies above 1.00x" if low > 1 else "lies below 1.00x" if high < 1
             else "includes 1.00x, so this difference is within the noise")
    return f"Over all pairs of repeats its speedup ranges {low:.2f}–{high:.2f}x, which {where}."


def _noise_sentence(summary: pd.DataFrame) -> str:
    spread = summary["steady_epoch_s_max"] / summary["steady_epoch_s_min"] - 1
    noisiest = summary.loc[spread.idxmax()]
    return (f"Repeats of one mode differ by up to {spread.max():.1%} in steady epoch time "
            f"({noisiest['mode']}, max/min over {int(noisiest['repeats'])} repeats).")


# ---------------------------------------------------------------- the article's numbers
def read_article(path: str | Path) -> tuple[pd.DataFrame, dict]:
    """The article's published epoch times (mode, epoch, epoch_s) and the `# key: value` lines
    above them that name its setup (gpu, torch, model, batch_size, ...)."""
    path = Path(path)
    setup = {}
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if not line.startswith("#"):
                    break
                key, sep, value = line[1:].partition(":")
                if sep and key.strip().isidentifier():
                    setup[key.strip()] = value.strip()
        times = pd.read_csv(path, comment="#")
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise PipelineError(f"{path}: cannot read the article's epoch times: {err}") from err
    missing = [c for c in ("mode", "epoch", "epoch_s") if c not in times.columns]
    if missing or times.empty:
        raise PipelineError(f"{path}: expected rows of mode, epoch, epoch_s (missing: {missing})")
    return times.astype({"mode": str}), setup


def article_speedups(times: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Per article mode: steady epoch time (mean of epochs 2..N) and speedup vs its baseline."""
    steady = times[times["epoch"] >= 2].groupby("mode", sort=False)["epoch_s"].mean()
    out = pd.DataFrame({"article_steady_epoch_s": steady})
    out["article_speedup"] = steady[baseline] / steady if baseline in steady.index else math.nan
    return out


def run_setup(metas: list[dict]) -> dict:
    """What this run trained on, from its training jobs' JSONs: device kind, GPU or CPU, torch."""
    hardware, torch_versions, kinds = [], [], []
    for meta in metas:
        versions = meta.get("versions") or {}
        if meta.get("device") == "cuda":
            name = versions.get("gpu") or "a CUDA GPU"
        else:
            name = f"CPU ({versions['cpu']})" if versions.get("cpu") else "CPU"
        for values, value in ((hardware, name), (torch_versions, versions.get("torch") or "unknown"),
                              (kinds, meta.get("device") or "unknown")):
            if value not in values:
                values.append(value)
    return {"hardware": " / ".join(hardware), "torch": " / ".join(torch_versions),
            "device": " / ".join(kinds), "train": (metas[0].get("train") or {}) if metas else {}}


def setup_label(hardware: str, torch_version: str) -> str:
    return f"{hardware}, PyTorch {torch_version}"


PROTOCOL_KEYS = ["model", "image_size", "batch_size", "precision", "epochs"]


def protocol_differences(train: dict, article_setup: dict) -> list[str]:
    """`key: this run vs article` for the protocol settings the article names that differ."""
    return [
        f"{key} {train[key]} vs {article_setup[key]}"
        for key in PROTOCOL_KEYS
        if key in train and key in article_setup and str(train[key]) != str(article_setup[key])
    ]


def article_section(summary: pd.DataFrame, baseline: str, article: pd.DataFrame,
                    article_setup: dict, setup: dict, statuses: dict | None = None,
                    order: list[str] | None = None) -> list[str]:
    """Markdown lines: this run's steady-state speedups beside the article's, and what differs.
    `statuses`: what to say for a mode of this run without results (failed, not run), the modes
    of this run in `order`."""
    col = f"speedup_vs_{baseline}"
    spread = _has_spread(summary)
    theirs = article_speedups(article, baseline)
    ours = summary.set_index("mode")
    here = setup_label(setup["hardware"], setup["torch"])
    there = setup_label(article_setup.get("gpu", "unknown GPU"), article_setup.get("torch", "unknown"))
    lines = ["## Compared with the article", "",
             f"Steady-state speedup vs {baseline} (mean of epochs 2..N) in this run ({here}) and in "
             f"the article ({there}; docs/article/epoch_times.csv).", ""]
    statuses = statuses or {}
    # each mode once: this run's in the configured order, then the article's others
    first = [m for m in order or [] if m in ours.index or m in statuses]
    modes = list(dict.fromkeys([*first, *ours.index, *statuses, *theirs.index]))
    rows = []
    for mode in modes:
        label = f"{mode} (eager)" if mode == baseline else mode
        ours_text = (_speedup_range(ours.loc[mode], col, spread) if mode in ours.index
                     else statuses.get(mode, "not run"))
        theirs_text = (_speedup(theirs.loc[mode, "article_speedup"]) if mode in theirs.index
                       else "not measured")
        rows.append([label, ours_text, theirs_text])
    lines += _markdown_table(["mode", "this run", "article"], ["l", "r", "r"], rows) + [""]
    lines += [" ".join(article_findings(ours, theirs, col, setup, article_setup)), ""]
    return lines


def article_findings(ours: pd.DataFrame, theirs: pd.DataFrame, col: str, setup: dict,
                     article_setup: dict) -> list[str]:
    both = [m for m in ours.index if m in theirs.index
            and not pd.isna(ours.loc[m, col]) and not pd.isna(theirs.loc[m, "article_speedup"])]
    if len(both) < 2:
        return ["This run and the article have fewer than two modes with a speedup in common, "
                "so there is nothing to compare."]
    ours_best = max(both, key=lambda m: ours.loc[m, col])
    theirs_best = max(both, key=lambda m: theirs.loc[m, "article_speedup"])
    sentences = [
        f"Among the modes both ran, the fastest here is {ours_best} ({ours.loc[ours_best, col]:.2f}x) "
        f"and in the article {theirs_best} ({theirs.loc[theirs_best, 'article_speedup']:.2f}x)"
        + (", the same mode." if ours_best == theirs_best else ".")
    ]
    differences = ", ".join(
        f"{m} {ours.loc[m, col] - theirs.loc[m, 'article_speedup']:+.2f}x"
        for m in both if not ours.loc[m, "eager"]
    )
    if differences:
        sentences.append(f"This run's speedup minus the article's: {differences}.")
    caveats = []
    if "cuda" not in setup["device"]:
        caveats.append(f"this run trained on the {setup['device'].upper()}, the article on a GPU")
    protocol = protocol_differences(setup["train"], article_setup)
    if protocol:
        caveats.append("the protocol differs (" + "; ".join(protocol) + ")")
    if caveats:
        sentences.append("The numbers are not expected to match: " + ", and ".join(caveats) + ".")
    return sentences


def render_markdown(summary: pd.DataFrame, baseline: str, run_name: str, dataset_note: str,
                    comparison: list[str] | None = None, gaps: pd.DataFrame | None = None,
                    missing: list | None = None, host: list[str] | None = None) -> str:
    title = f"# torch.compile benchmark: {run_name}"
    if dataset_note:
        title += f" — {dataset_note}"
    lines = [title, ""]
    if gaps is not None:
        lines += [incomplete_banner(gaps), ""]
    lines += ["Epoch times in seconds; epoch 1 includes compilation; steady = mean of "
              "epochs 2..N; compile overhead = epoch 1 − steady; speedup = "
              f"{baseline} steady / mode steady.", ""]
    if _has_spread(summary):
        lines += [f"Each mode ran {int(summary['repeats'].max())} times (train.repeats): every number "
                  "is the median over its repeats; ranges in brackets are min–max over repeats, for "
                  f"speedups over every pair of a {baseline} repeat and a mode repeat.", ""]
    if gaps is not None and baseline in gaps["mode"].values and baseline not in summary["mode"].values:
        status = gaps.set_index("mode").loc[baseline, "status"]
        lines += [f"**The baseline mode {baseline!r} {'failed' if status == FAILED else 'was not run'}: "
                  "no speedups are given.**", ""]
    elif baseline not in summary["mode"].values:
        lines += [f"**The baseline mode {baseline!r} is not in this run: no speedups are given.**", ""]
    if summary["steady_epoch_s"].isna().all():
        lines += ["**Only one epoch was run: there is no steady state, so steady time, compile "
                  "overhead and speedup are n/a.**", ""]
    lines += timing_table(summary, baseline, gaps) + [""]
    lines += detail_table(summary, baseline, gaps) + [""]
    lines += [" ".join(findings(summary, baseline)), ""]
    lines += host or []
    if missing:
        lines += missing_section(missing)
    lines += comparison or []
    return "\n".join(lines)


# ---------------------------------------------------------------- the host's work in the paired blocks
# (JSON field(s) of paired_blocks_host_per_step, column); several fields are added up
HOST_COLUMNS = [
    (("main_cpu_ms",), "main thread CPU"),
    (("autograd_cpu_ms",), "autograd thread CPU"),
    (("fetch_cpu_ms", "other_cpu_ms"), "loader's threads CPU"),
    (("main_voluntary_switches",), "main thread's waits"),
    (("machine_steal_ms",), "machine's steal"),
    (("machine_tlb_shootdowns",), "TLB shootdowns"),
]


def host_section(runs) -> list[str]:
    """Where a fed step's extra time goes, per job that recorded it (its JSON's
    paired_blocks_host_per_step): one-batch -> fed blocks, per step. Empty when no job did."""
    rows = []
    for mode, repeat, _, meta in runs:
        host = meta.get("paired_blocks_host_per_step") or {}
        one, fed = host.get("one"), host.get("fed")
        if not one or not fed:
            continue
        batch = (meta.get("train") or {}).get("batch_size")
        one_rates, fed_rates = meta.get("synthetic_batch_block_images_per_s"), meta.get("fed_block_images_per_s")
        step = "n/a"
        if batch and one_rates and fed_rates:
            one_ms, fed_ms = (1000 * batch / statistics.median(rates) for rates in (one_rates, fed_rates))
            step = f"{one_ms:.1f} → {fed_ms:.1f}"
        cells = [_job_label(mode, repeat) + (" (eager)" if meta.get("compile") is None else ""), step]
        for fields, _ in HOST_COLUMNS:
            if all(field in one and field in fed for field in fields):
                cells.append(f"{sum(one[f] for f in fields):.2f} → {sum(fed[f] for f in fields):.2f}")
            else:
                cells.append("n/a")
        rows.append(cells)
    if not rows:
        return []
    header = ["mode", "step (ms)", *(label for _, label in HOST_COLUMNS)]
    return ["## The host's work per step in the paired blocks", "",
            "One-batch → fed blocks, medians over each kind of block: ms per step, but the main "
            "thread's waits (its voluntary context switches per step: for the GIL, a lock, the GPU). "
            "The loader's threads are DALI's and CUDA's, and a fetch thread's where there is one "
            "(the sum of their medians); the machine's steal (time the hypervisor ran something "
            "else while a virtual CPU wanted to run) is summed over all its CPUs and counted in 10 "
            "ms ticks (/proc/stat), so it is coarse. TLB shootdowns: how many times a CPU told "
            "another to flush its TLB, per step, all CPUs together (x86's /proc/interrupts); DALI "
            "mapping the files it reads (its default; the loader reads them instead unless "
            "loader.reader_options sets dont_use_mmap false) sends them: an unmapping can interrupt "
            "every other CPU running a thread of the process, the training thread's included. "
            "Step = batch over the blocks' median rate.", "",
            *_markdown_table(header, ["l"] + ["r"] * (len(header) - 1), rows), ""]


# ---------------------------------------------------------------- training jobs without results
FAILED, NOT_RUN, INCOMPLETE = "failed", "not run", "incomplete"
NOT_RUN_REASON = ("not started: Snakemake stopped after another job failed (with --keep-going it "
                  "trains every mode it can)")
# A line of a job's log as common.snakemake_log writes it: "<date> <time> ERROR <message>"
_LOG_ERROR = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ ERROR (.*)$")


@dataclasses.dataclass(frozen=True)
class MissingJob:
    """A training job that left no timings: it failed, or was not started in this run."""

    mode: str
    repeat: int
    status: str  # FAILED or NOT_RUN
    log: str = ""  # the job's log file
    reason: str = ""  # why it has no results, when known better than its log says


def failure_reason(log_path, limit: int = 300) -> str:
    """What a failed job's log says went wrong: the PipelineError's message, or the last line of the
    traceback of another error (its type and message)."""
    try:
        lines = [line.rstrip() for line in Path(log_path).read_text(errors="replace").splitlines()]
    except OSError:
        return f"no log at {log_path}"
    lines = [line for line in lines if line.strip()]
    reason = ""
    for i in range(len(lines) - 1, -1, -1):
        match = _LOG_ERROR.match(lines[i])
        if match:
            reason = match.group(1).strip()
            if reason == "job failed" and i + 1 < len(lines):  # logging.exception: traceback follows
                reason = lines[-1].strip()
            break
    if not reason:
        reason = lines[-1].strip() if lines else "the log is empty"
    return reason if len(reason) <= limit else reason[: limit - 1] + "…"


def _job_label(mode: str, repeat: int) -> str:
    return mode if repeat == 1 else f"{mode} repeat {repeat}"


def _reason(job: MissingJob) -> str:
    if job.reason:
        return job.reason
    return failure_reason(job.log) if job.status == FAILED else NOT_RUN_REASON


def build_gaps(summary: pd.DataFrame, missing: list[MissingJob], order: list[str]) -> pd.DataFrame:
    """One row per mode with a missing job: its status (failed or not run when no job of it finished,
    else incomplete), `jobs` (how many finished), the failed jobs' logs and the first reason."""
    ran = dict(zip(summary["mode"], summary["repeats"]))
    rows = []
    for mode in dict.fromkeys(job.mode for job in missing):
        jobs = [job for job in missing if job.mode == mode]
        failed = [job for job in jobs if job.status == FAILED]
        finished = int(ran.get(mode, 0))
        total = finished + len(jobs)
        if finished:
            status = INCOMPLETE
        else:
            status = FAILED if failed else NOT_RUN
        first = (failed or jobs)[0]
        reason = _reason(first)
        if total > 1:
            reason = f"{_job_label(first.mode, first.repeat)}: {reason}"
        rows.append({
            "mode": mode, "status": status,
            "jobs": f"{status}: {finished} of {total} repeats" if finished else status,
            "log": "; ".join(job.log for job in failed), "reason": reason,
        })
    gaps = pd.DataFrame(rows, columns=["mode", "status", "jobs", "log", "reason"])
    known = list(order) + [m for m in [*summary["mode"], *gaps["mode"]] if m not in order]
    gaps.attrs["order"] = list(dict.fromkeys(known))
    return gaps


def incomplete_banner(gaps: pd.DataFrame) -> str:
    parts = []
    for status, verb in ((FAILED, "failed"), (NOT_RUN, "not run"), (INCOMPLETE, "incomplete")):
        modes = gaps.loc[gaps["status"] == status, "mode"].tolist()
        if modes:
            parts.append(f"{verb}: {', '.join(modes)}")
    text = f"**Incomplete summary — {'; '.join(parts)}.**"
    if gaps["status"].isin([FAILED, NOT_RUN]).any():
        text += " A mode that failed or was not run has no numbers: its rows show —."
    if gaps["status"].eq(INCOMPLETE).any():
        text += " An incomplete mode's numbers cover only its repeats that finished."
    return text + (
        " Why, and each log: *Training jobs without results* below. Fix the cause and run Snakemake "
        "again: only the missing jobs and the summary run, and this file is replaced by a complete "
        "summary (plots and repeats.csv are made only then)."
    )


def missing_section(missing: list[MissingJob]) -> list[str]:
    rows = [
        [_job_label(job.mode, job.repeat), job.status,
         _reason(job).replace("|", "\\|"), f"`{job.log}`" if job.status == FAILED and job.log else "—"]
        for job in missing
    ]
    return ["## Training jobs without results", ""] + _markdown_table(
        ["job", "status", "reason", "log"], ["l", "l", "l", "l"], rows) + [""]


def gaps_table(table: pd.DataFrame, gaps: pd.DataFrame) -> pd.DataFrame:
    """summary.csv's rows with a status, log and reason per mode; a row without numbers per mode that
    has no results, in the configured order."""
    table = table.assign(status="ok", log="", reason="")
    notes = gaps.set_index("mode")
    for col in ("status", "log", "reason"):
        table[col] = [notes.loc[m, col] if m in notes.index else table.loc[i, col]
                      for i, m in zip(table.index, table["mode"])]
    empty = gaps.loc[~gaps["mode"].isin(table["mode"]), ["mode", "status", "log", "reason"]]
    table = pd.concat([table, empty], ignore_index=True) if len(empty) else table
    position = {mode: i for i, mode in enumerate(gaps.attrs["order"])}
    table = table.sort_values("mode", key=lambda s: s.map(position), kind="stable")
    counts = ["epochs", "repeats", "graph_breaks", "recompiles"]
    return table.astype({col: "Int64" for col in counts}).reset_index(drop=True)


# ---------------------------------------------------------------- entry
def main(timing_csvs: list, timing_jsons: list, summary_csv, summary_md, *, baseline: str = "none",
         run_name: str, dataset_note: str = "", repeats_csv=None, article_csv=None,
         missing: list[MissingJob] | None = None, mode_order: list[str] | None = None) -> pd.DataFrame:
    """The summary of the finished training jobs; with `missing`, a partial one that marks them."""
    position = {mode: i for i, mode in enumerate(mode_order or [])}
    missing = sorted(missing or [], key=lambda job: (position.get(job.mode, len(position)), job.repeat))
    runs = load_runs(list(timing_csvs), list(timing_jsons))
    jobs = build_jobs(runs, baseline)
    summary = build_summary(jobs, baseline)
    gaps = build_gaps(summary, missing, mode_order or []) if missing else None
    if baseline not in summary["mode"].values:
        log.warning("baseline mode %r not in this run; speedup columns left empty", baseline)
    if summary["steady_epoch_s"].isna().all():
        log.warning("only one epoch per mode: no steady state, steady_epoch_s is NaN")
    comparison = None
    if article_csv is not None:
        article, article_setup = read_article(article_csv)
        setup = run_setup([meta for _, _, _, meta in runs])
        statuses = None if gaps is None else dict(zip(gaps["mode"], gaps["status"]))
        comparison = article_section(summary, baseline, article, article_setup, setup, statuses,
                                     None if gaps is None else gaps.attrs["order"])
    table = summary.drop(columns="eager")
    if gaps is not None:
        table = gaps_table(table, gaps)
    if repeats_csv is not None:
        with atomic_write(repeats_csv, newline="") as handle:
            jobs.drop(columns="eager").to_csv(handle, index=False)
    with atomic_write(summary_csv, newline="") as handle:
        table.to_csv(handle, index=False)
    with atomic_write(summary_md, encoding="utf-8") as handle:
        handle.write(render_markdown(summary, baseline, run_name, dataset_note, comparison, gaps, missing,
                                     host_section(runs)))
    log.info("summarised %d training jobs of %d modes into %s and %s", len(jobs), len(summary),
             summary_csv, summary_md)
    if gaps is not None:
        log.info("partial summary: %d training jobs have no results (%s)", len(missing),
                    ", ".join(f"{_job_name(j.mode, j.repeat)} {j.status}" for j in missing))
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
    parser.add_argument("--out-repeats", default=None, help="per-job table (mode x repeat)")
    parser.add_argument("--article", default=None, help="docs/article/epoch_times.csv")
    args = parser.parse_args()
    try:
        main(args.csv, args.json, args.out_csv, args.out_md, baseline=args.baseline,
             run_name=args.run, dataset_note=args.dataset_note, repeats_csv=args.out_repeats,
             article_csv=args.article)
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
                repeats_csv=snakemake.output.repeats,  # noqa: F821
                article_csv=snakemake.input.article,  # noqa: F821
            )
    else:
        setup_cli_logging()
        _cli()
