"""Plot one run: epoch times per compile mode, steady-state speedup vs eager, and training loss
curves, each as PNG and SVG, written atomically."""

# No `from __future__` import: Snakemake prepends code to scripts it runs.
import argparse
import json
import logging
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # before pyplot: no display on cluster nodes
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from common import PipelineError, atomic_path, repeat_of, setup_cli_logging, snakemake_log  # noqa: E402

# The files main() writes in out_dir; a Snakemake rule lists exactly these as its outputs.
OUTPUT_NAMES = [
    f"{plot}.{ext}" for plot in ("epoch_times", "speedup", "loss") for ext in ("png", "svg")
]
PNG_DPI = 150

log = logging.getLogger(__name__)


# ---------------------------------------------------------------- inputs
def read_epoch_times(timing_csvs: list) -> tuple[pd.DataFrame, list[str]]:
    """Long table (mode, repeat, epoch, epoch_s, steps) and the modes in the order the CSVs were given."""
    frames, order = [], []
    for path in timing_csvs:
        df = pd.read_csv(path)
        missing = [c for c in ("mode", "epoch", "epoch_s", "steps") if c not in df.columns]
        if missing:
            raise PipelineError(f"{path}: missing column(s) {', '.join(missing)}")
        order.extend(m for m in df["mode"].astype(str).unique() if m not in order)
        df = df[["mode", "epoch", "epoch_s", "steps"]].astype({"mode": str, "epoch": int})
        frames.append(df.assign(repeat=repeat_of(path)))
    times = pd.concat(frames, ignore_index=True)
    return times.sort_values(["mode", "repeat", "epoch"], kind="stable"), order


def read_loss_curves(timing_jsons: list | None) -> tuple[pd.DataFrame, list[str]]:
    """Long table (mode, repeat, step, loss) from the JSONs' loss_curve, and the devices they ran on."""
    rows, devices = [], []
    for path in timing_jsons or []:
        try:
            meta = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as err:
            raise PipelineError(f"{path}: cannot read timing JSON: {err}") from err
        mode = str(meta.get("mode", Path(path).stem))
        if meta.get("device") and meta["device"] not in devices:
            devices.append(str(meta["device"]))
        curve = meta.get("loss_curve") or {}
        steps, losses = curve.get("step") or [], curve.get("loss") or []
        if len(steps) != len(losses):
            raise PipelineError(f"{path}: loss_curve has {len(steps)} steps but {len(losses)} losses")
        repeat = repeat_of(path)
        rows.extend({"mode": mode, "repeat": repeat, "step": s, "loss": v} for s, v in zip(steps, losses))
    return pd.DataFrame(rows, columns=["mode", "repeat", "step", "loss"]), devices


BASELINE_COLOUR = (0.35, 0.35, 0.35)


def mode_palette(modes: list[str], baseline: str) -> dict[str, tuple]:
    """The same colour per mode in every plot of the run; the eager baseline in grey."""
    others = [m for m in modes if m != baseline]
    palette = dict(zip(others, sns.color_palette("colorblind", n_colors=max(len(others), 1))))
    palette[baseline] = BASELINE_COLOUR
    return palette


def tick_label(mode: str, baseline: str) -> str:
    return f"{mode}\n(eager)" if mode == baseline else mode


# ---------------------------------------------------------------- figures
def _titles(fig, ax, title: str, context: str, subtitle: str) -> None:
    """Bold title; below it the run and device, then how to read the plot."""
    fig.suptitle(title, fontsize=13, fontweight="bold", y=0.98)
    ax.set_title(f"{context}\n{subtitle}", fontsize=10, color="0.3", linespacing=1.5)


def _context(run_name: str, device_note: str) -> str:
    return f"run {run_name} · {device_note}" if device_note else f"run {run_name}"


def _empty(ax, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, fontsize=11,
            color="0.3", wrap=True)
    ax.axis("off")


def epoch_times_figure(times: pd.DataFrame, order: list[str], baseline: str, context: str):
    n_epochs = times["epoch"].nunique()
    repeated = times.groupby(["mode", "epoch"])["epoch_s"].size().max() > 1
    fig, ax = plt.subplots(figsize=(max(7.0, 1.0 + 0.7 * n_epochs * len(order)), 5.0))
    # Several repeats: the bar is their median and the whisker their full range (percentile 100).
    sns.barplot(data=times, x="mode", y="epoch_s", hue="epoch", order=order,
                palette=sns.color_palette("Blues_d", n_colors=n_epochs), ax=ax, estimator="median",
                errorbar=("pi", 100) if repeated else None, err_kws={"linewidth": 1.2}, capsize=0.15)
    for container in ax.containers:
        # With whiskers on the bars, the value goes inside the bar, where no whisker crosses it.
        ax.bar_label(container, fmt="%.1f", padding=2, fontsize=8,
                     label_type="center" if repeated else "edge",
                     bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
    ax.set_xticks(range(len(order)), [tick_label(m, baseline) for m in order])
    ax.set_xlabel("torch.compile mode")
    ax.set_ylabel("epoch time (s)")
    ax.margins(y=0.12)
    ax.legend(title="epoch", loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    spread = "\nbars: median of repeats, whiskers: min–max over repeats" if repeated else ""
    _titles(fig, ax, "Epoch time per torch.compile mode", context,
            f"epoch 1 includes compilation; epochs 2..N are the steady state; lower is better{spread}")
    sns.despine(fig)
    fig.tight_layout()
    return fig


def _speedup_spread(ax, data: pd.DataFrame, jobs: pd.DataFrame | None, order: list[str], col: str) -> bool:
    """Whiskers from the summary's min-max and a dot per repeat; False (nothing drawn) with one repeat."""
    if f"{col}_min" not in data or not (data[f"{col}_max"] - data[f"{col}_min"]).fillna(0).gt(0).any():
        return False
    x = list(range(len(order)))
    ax.errorbar(x, data[col], yerr=[data[col] - data[f"{col}_min"], data[f"{col}_max"] - data[col]],
                fmt="none", ecolor="0.15", elinewidth=1.2, capsize=5, zorder=4)
    if jobs is not None and col in jobs:
        position = {mode: i for i, mode in enumerate(order)}
        dots = jobs[jobs["mode"].isin(position)]
        ax.scatter([position[m] + 0.12 for m in dots["mode"]], dots[col], s=14, color="0.15",
                   zorder=5, label="one repeat")
    return True


def speedup_figure(summary: pd.DataFrame, order: list[str], baseline: str, context: str,
                   jobs: pd.DataFrame | None = None):
    col = f"speedup_vs_{baseline}"
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(order) + 2), 4.8))
    data = summary.set_index("mode").reindex(order).reset_index()
    subtitle = f"steady state = mean of epochs 2..N; speedup = {baseline} time / mode time"
    if col not in data or data[col].isna().all():
        why = (f"the baseline mode '{baseline}' is not in this run" if baseline not in order
               else "only one epoch was run (no steady state)")
        _empty(ax, f"No speedup to show because {why}.")
    else:
        palette = mode_palette(order, baseline)
        sns.barplot(data=data, x="mode", y=col, order=order, hue="mode", hue_order=order,
                    palette=palette, legend=False, ax=ax)
        bars = list(ax.containers)
        spread = _speedup_spread(ax, data, jobs, order, col)
        for container in bars:
            # With whiskers on top, the value goes inside the bar.
            ax.bar_label(container, labels=[f"{v:.2f}x" for v in container.datavalues],
                         padding=2, fontsize=9, label_type="center" if spread else "edge",
                         bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
        ax.axhline(1.0, color="0.15", linestyle="--", linewidth=1.2, zorder=3)
        # Beside the axes, so it never sits on a bar.
        ax.annotate("eager", xy=(1.0, 1.0), xycoords=("axes fraction", "data"), xytext=(4, 0),
                    textcoords="offset points", ha="left", va="center", fontsize=10, color="0.15")
        if spread:
            subtitle += ("\nbars: ratio of median times; whiskers: every pair of repeats; "
                         "dots: each repeat")
        top = data[f"{col}_max"].max() if f"{col}_max" in data else data[col].max()
        ax.set_ylim(0, max(1.0, top) * 1.15)
        ax.set_xticks(range(len(order)), [tick_label(m, baseline) for m in order])
        ax.set_xlabel("torch.compile mode")
        ax.set_ylabel(f"speedup vs {baseline} (×, steady state)")
    _titles(fig, ax, "Steady-state speedup vs eager", context, subtitle + "; higher is better")
    sns.despine(fig)
    fig.tight_layout()
    return fig


def loss_figure(curves: pd.DataFrame, epoch_steps: list[int], order: list[str], baseline: str,
                context: str):
    fig, ax = plt.subplots(figsize=(8.5, 4.8))
    subtitle = "mean loss over windows of steps; compiled modes should track eager (dashed)"
    if curves.empty:
        _empty(ax, "No loss curve was recorded in the timing JSONs.")
    else:
        present = [m for m in order if m in set(curves["mode"])]
        present += [m for m in curves["mode"].unique() if m not in present]
        palette = mode_palette(present, baseline)
        widths = loss_line_widths(present, baseline)
        # Eager last and dashed, so the reference stays visible on top of curves that match it.
        # Compiled modes often compute the same losses; each is drawn thinner than the one before,
        # so curves that coincide show as nested bands of every mode's colour instead of the last
        # one hiding the others. Every repeat of a mode is drawn in the mode's colour.
        for mode in sorted(present, key=lambda m: m == baseline):
            is_base = mode == baseline
            for _, curve in curves[curves["mode"] == mode].groupby("repeat"):
                curve = curve.sort_values("step")
                ax.plot(curve["step"], curve["loss"], color=palette[mode],
                        linestyle=(0, (5, 3)) if is_base else "-", linewidth=widths[mode],
                        label=f"{mode} (eager)" if is_base else mode, zorder=3 if is_base else 2,
                        solid_capstyle="butt")
        if sum(m != baseline for m in present) > 1:
            subtitle += "\nwider lines are drawn first: coinciding curves show as nested bands"
        _epoch_boundaries(ax, epoch_steps, curves["step"].max())
        handles, labels = ax.get_legend_handles_labels()
        by_label = dict(zip(labels, handles))
        names = [f"{m} (eager)" if m == baseline else m for m in present]
        ax.legend([by_label[n] for n in names], names, title="mode", frameon=False)
        ax.set_xlabel("training step (batches)")
        ax.set_ylabel("training loss")
    _titles(fig, ax, "Training loss per torch.compile mode", context, subtitle)
    sns.despine(fig)
    fig.tight_layout()
    return fig


def loss_line_widths(modes: list[str], baseline: str) -> dict[str, float]:
    """Line width per mode on the loss plot: compiled modes from widest to narrowest in drawing
    order (so coinciding curves stay visible as nested bands), eager a fixed dashed 2.0."""
    others = [m for m in modes if m != baseline]
    widest, narrowest = 5.0, 1.5
    step = (widest - narrowest) / max(len(others) - 1, 1)
    widths = {mode: widest - i * step if len(others) > 1 else 1.8 for i, mode in enumerate(others)}
    widths[baseline] = 2.0
    return widths


def _epoch_boundaries(ax, epoch_steps: list[int], last_step: float) -> None:
    """Dotted lines where epochs 2..N start, when the curve counts steps across epochs."""
    boundary = 0
    for epoch, steps in enumerate(epoch_steps[:-1], start=2):
        boundary += steps
        if boundary >= last_step:
            break
        ax.axvline(boundary, color="0.6", linestyle=":", linewidth=1, zorder=1)
        ax.annotate(f"epoch {epoch}", xy=(boundary, 1.0), xycoords=("data", "axes fraction"),
                    xytext=(3, -3), textcoords="offset points", ha="left", va="top",
                    fontsize=9, color="0.4")


def save(fig, out_dir: Path, name: str) -> list[Path]:
    """PNG and SVG, each written to a temporary name in out_dir and renamed: no partial plot."""
    written = []
    try:
        for ext in ("png", "svg"):
            target = out_dir / f"{name}.{ext}"
            with atomic_path(target) as tmp:
                fig.savefig(tmp, format=ext, dpi=PNG_DPI if ext == "png" else None,
                            bbox_inches="tight", metadata={"Date": None} if ext == "svg" else None)
            written.append(target)
    finally:
        plt.close(fig)
    return written


# ---------------------------------------------------------------- entry
def main(summary_csv, timing_csvs: list, out_dir, *, run_name: str, baseline: str = "none",
         device_note: str = "", timing_jsons: list | None = None, repeats_csv=None) -> list[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = pd.read_csv(summary_csv).astype({"mode": str})
    jobs = pd.read_csv(repeats_csv).astype({"mode": str}) if repeats_csv is not None else None
    times, order = read_epoch_times(list(timing_csvs))
    curves, devices = read_loss_curves(timing_jsons)
    # The first job's step counts per epoch mark epoch starts on the loss plot.
    first = times[(times["mode"] == order[0]) & (times["repeat"] == times["repeat"].min())]
    epoch_steps = first["steps"].astype(int).tolist()
    context = _context(run_name, device_note or "/".join(devices))
    sns.set_theme(style="whitegrid", context="notebook")
    plt.rcParams["svg.hashsalt"] = "torch-compile-bench"  # stable SVG ids across runs
    written = []
    written += save(epoch_times_figure(times, order, baseline, context), out_dir, "epoch_times")
    written += save(speedup_figure(summary, order, baseline, context, jobs), out_dir, "speedup")
    written += save(loss_figure(curves, epoch_steps, order, baseline, context), out_dir, "loss")
    log.info("wrote %s", ", ".join(str(p) for p in written))
    return written


def _check_snakemake_outputs(outputs: list) -> Path:
    """The rule's outputs must be the fixed names main writes, all in one folder."""
    out_dir = Path(outputs[0]).parent
    expected = {out_dir / name for name in OUTPUT_NAMES}
    if {Path(p) for p in outputs} != expected:
        raise PipelineError(
            f"plot rule outputs must be {sorted(map(str, expected))}, got {sorted(map(str, outputs))}"
        )
    return out_dir


def _cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--summary", required=True, help="results/<run>/summary.csv")
    parser.add_argument("--csv", nargs="+", required=True, help="timing CSVs, in plot order")
    parser.add_argument("--json", nargs="*", default=None, help="timing JSONs (loss curves)")
    parser.add_argument("--repeats", default=None, help="results/<run>/repeats.csv (spread)")
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--baseline", default="none")
    parser.add_argument("--device-note", default="")
    args = parser.parse_args()
    try:
        main(args.summary, args.csv, args.out_dir, run_name=args.run, baseline=args.baseline,
             device_note=args.device_note, timing_jsons=args.json, repeats_csv=args.repeats)
    except PipelineError as err:
        raise SystemExit(f"error: {err}") from None


if __name__ == "__main__":
    if "snakemake" in globals():
        with snakemake_log(snakemake):  # noqa: F821
            main(
                snakemake.input.summary,  # noqa: F821
                list(snakemake.input.csv),  # noqa: F821
                _check_snakemake_outputs(list(snakemake.output)),  # noqa: F821
                run_name=snakemake.params.run,  # noqa: F821
                baseline=snakemake.params.baseline,  # noqa: F821
                device_note=getattr(snakemake.params, "device_note", ""),  # noqa: F821
                timing_jsons=list(snakemake.input.json),  # noqa: F821
                repeats_csv=snakemake.input.repeats,  # noqa: F821
            )
    else:
        setup_cli_logging()
        _cli()
