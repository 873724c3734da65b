"""Summarise one run's per-mode timings: epoch times, steady-state speedup vs eager, compile
overhead, memory, a loss check, the spread over repeats and the article's numbers beside this run's,
as a tidy summary.csv (per mode), repeats.csv (per training job) and a summary.md like the article."""

# No `from __future__` import: Snakemake prepends code to scripts it runs.
import argparse
import json
import logging
import math
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
        "compile_s", "steady_images_per_s", speedup_col, "peak_gpu_mem_gib", "graph_breaks",
        "recompiles", "loss_first_epoch", "loss_last_epoch",
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
                   "steady_images_per_s", "loss_first_epoch", "loss_last_epoch"]
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
        speedup_col, f"{speedup_col}_min", f"{speedup_col}_max", "peak_gpu_mem_gib",
        "graph_breaks", "recompiles", "loss_first_epoch", "loss_last_epoch", "loss_falls", gap_col,
    ]
    return summary[columns + ["eager"]]


# ---------------------------------------------------------------- Markdown
def _seconds(value: float) -> str:
    return "n/a" if pd.isna(value) else f"{value:.1f}"


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
        text += f" ({row[f'{col}_min']:.1f}–{row[f'{col}_max']:.1f})"
    return text


def _speedup_range(row, col: str, spread: bool) -> str:
    text = _speedup(row[col])
    if spread and not pd.isna(row[f"{col}_min"]):
        text += f" ({row[f'{col}_min']:.2f}–{row[f'{col}_max']:.2f}x)"
    return text


def _markdown_table(header: list[str], align: list[str], rows: list[list[str]]) -> list[str]:
    rule = ["---:" if a == "r" else "---" for a in align]
    return ["| " + " | ".join(cells) + " |" for cells in [header, rule, *rows]]


def timing_table(summary: pd.DataFrame, baseline: str) -> list[str]:
    n_epochs = int(summary["epochs"].iloc[0])
    spread = _has_spread(summary)
    ranged = " (min–max)" if spread else ""
    header = ["mode", *(f"epoch {e}" for e in range(1, n_epochs + 1)), f"steady{ranged}",
              "compile overhead", f"speedup vs {baseline}{ranged}"]
    rows = [
        [_label(r), *(_seconds(r[f"epoch{e}_s"]) for e in range(1, n_epochs + 1)),
         _seconds_range(r, "steady_epoch_s", spread), _seconds(r["compile_overhead_s"]),
         _speedup_range(r, f"speedup_vs_{baseline}", spread)]
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
            if _has_spread(summary):
                text += " " + _range_verdict(fastest, f"speedup_vs_{baseline}")
        sentences.append(text)
        if _has_spread(summary):
            sentences.append(_noise_sentence(summary))
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
                    article_setup: dict, setup: dict) -> list[str]:
    """Markdown lines: this run's steady-state speedups beside the article's, and what differs."""
    col = f"speedup_vs_{baseline}"
    spread = _has_spread(summary)
    theirs = article_speedups(article, baseline)
    ours = summary.set_index("mode")
    here = setup_label(setup["hardware"], setup["torch"])
    there = setup_label(article_setup.get("gpu", "unknown GPU"), article_setup.get("torch", "unknown"))
    lines = ["## Compared with the article", "",
             f"Steady-state speedup vs {baseline} (mean of epochs 2..N) in this run ({here}) and in "
             f"the article ({there}; docs/article/epoch_times.csv).", ""]
    modes = list(ours.index) + [m for m in theirs.index if m not in ours.index]
    rows = []
    for mode in modes:
        label = f"{mode} (eager)" if mode == baseline else mode
        ours_text = _speedup_range(ours.loc[mode], col, spread) if mode in ours.index else "not run"
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
                    comparison: list[str] | None = None) -> str:
    title = f"# torch.compile benchmark: {run_name}"
    if dataset_note:
        title += f" — {dataset_note}"
    lines = [title, "", "Epoch times in seconds; epoch 1 includes compilation; steady = mean of "
             "epochs 2..N; compile overhead = epoch 1 − steady; speedup = "
             f"{baseline} steady / mode steady.", ""]
    if _has_spread(summary):
        lines += [f"Each mode ran {int(summary['repeats'].max())} times (train.repeats): every number "
                  "is the median over its repeats; ranges in brackets are min–max over repeats, for "
                  f"speedups over every pair of a {baseline} repeat and a mode repeat.", ""]
    if baseline not in summary["mode"].values:
        lines += [f"**The baseline mode {baseline!r} is not in this run: no speedups are given.**", ""]
    if summary["steady_epoch_s"].isna().all():
        lines += ["**Only one epoch was run: there is no steady state, so steady time, compile "
                  "overhead and speedup are n/a.**", ""]
    lines += timing_table(summary, baseline) + [""]
    lines += detail_table(summary, baseline) + [""]
    lines += [" ".join(findings(summary, baseline)), ""]
    lines += comparison or []
    return "\n".join(lines)


# ---------------------------------------------------------------- entry
def main(timing_csvs: list, timing_jsons: list, summary_csv, summary_md, *, baseline: str = "none",
         run_name: str, dataset_note: str = "", repeats_csv=None, article_csv=None) -> pd.DataFrame:
    runs = load_runs(list(timing_csvs), list(timing_jsons))
    jobs = build_jobs(runs, baseline)
    summary = build_summary(jobs, baseline)
    if baseline not in summary["mode"].values:
        log.warning("baseline mode %r not in this run; speedup columns left empty", baseline)
    if summary["steady_epoch_s"].isna().all():
        log.warning("only one epoch per mode: no steady state, steady_epoch_s is NaN")
    comparison = None
    if article_csv is not None:
        article, article_setup = read_article(article_csv)
        setup = run_setup([meta for _, _, _, meta in runs])
        comparison = article_section(summary, baseline, article, article_setup, setup)
    table = summary.drop(columns="eager")
    if repeats_csv is not None:
        with atomic_write(repeats_csv, newline="") as handle:
            jobs.drop(columns="eager").to_csv(handle, index=False)
    with atomic_write(summary_csv, newline="") as handle:
        table.to_csv(handle, index=False)
    with atomic_write(summary_md, encoding="utf-8") as handle:
        handle.write(render_markdown(summary, baseline, run_name, dataset_note, comparison))
    log.info("summarised %d training jobs of %d modes into %s and %s", len(jobs), len(table),
             summary_csv, summary_md)
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
