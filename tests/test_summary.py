"""summarize.py and plot.py on fake timings in the training job's exact formats, using the
article's published epoch times so the expected speedups are known."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "workflow" / "scripts"
ARTICLE_CSV = REPO / "docs" / "article" / "epoch_times.csv"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

import plot  # noqa: E402
import summarize  # noqa: E402
import vs_article  # noqa: E402
from common import PipelineError  # noqa: E402

# ../shared/ARTICLE.md, epoch times in seconds, in the config's mode order.
ARTICLE = {
    "none": [139, 141, 141],
    "default": [167, 129, 128],
    "reduce-overhead": [150, 116, 117],
    "max-autotune": [182, 121, 121],
}
STEPS, BATCH = 1578, 64  # 101,000 images // 64, last partial batch dropped
LOSS_BY_EPOCH = [4.20, 3.60, 3.25]


def write_run(folder: Path, times: dict[str, list[float]], losses: dict[str, list[float]] | None = None):
    """timings/<mode>.csv and .json as the training job writes them; returns (csvs, jsons)."""
    timings = folder / "timings"
    timings.mkdir(parents=True, exist_ok=True)
    csvs, jsons = [], []
    for i, (mode, epoch_s) in enumerate(times.items()):
        loss = (losses or {}).get(mode) or [v + 0.01 * i for v in LOSS_BY_EPOCH[: len(epoch_s)]]
        rows = [
            {"mode": mode, "epoch": e, "epoch_s": s, "steps": STEPS, "images": STEPS * BATCH,
             "images_per_s": STEPS * BATCH / s, "loss_mean": loss[e - 1], "loss_last": loss[e - 1] - 0.1}
            for e, s in enumerate(epoch_s, start=1)
        ]
        csv = timings / f"{mode}.csv"
        pd.DataFrame(rows).to_csv(csv, index=False)
        window = 100
        curve_steps = list(range(window, STEPS * len(epoch_s) + 1, window))
        curve_loss = [4.65 - 1.5 * (s / curve_steps[-1]) ** 0.5 + 0.01 * i for s in curve_steps]
        meta = {
            "mode": mode,
            "compile": None if mode == "none" else {"mode": mode, "backend": "inductor",
                                                   "dynamic": None, "fullgraph": False},
            "compile_s": 0.4 if mode == "none" else epoch_s[0] - epoch_s[-1] + 2.0,
            "first_step_s": 0.4 if mode == "none" else epoch_s[0] - epoch_s[-1] + 2.0,
            "peak_gpu_mem_gib": 11.5 - 0.5 * i,
            "graph_breaks": 0,
            "recompiles": 1 if mode == "reduce-overhead" else 0,
            "device": "cuda",
            "loss_curve": {"step": curve_steps, "loss": curve_loss},
            # eager's loader out of the way (98%), the others' 2% short of it
            "synthetic_batch_images_per_s": STEPS * BATCH / epoch_s[-1] / (0.98 if i == 0 else 0.96),
            # paired blocks after the epochs (max-autotune's job predates them: no key)
            **({} if mode == "max-autotune" else {"fed_vs_one_batch_paired": 0.995 - 0.01 * i}),
            "versions": {"torch": "2.1.0", "python": "3.10.12"},
            "host": {"gpu": "NVIDIA GeForce RTX 3090", "cpu": "AMD Ryzen 7 3700X"},
        }
        js = timings / f"{mode}.json"
        js.write_text(json.dumps(meta, indent=1))
        csvs.append(csv)
        jsons.append(js)
    return csvs, jsons


def run_summary(tmp_path: Path, times=ARTICLE, losses=None, baseline="none"):
    csvs, jsons = write_run(tmp_path, times, losses)
    out_csv, out_md = tmp_path / "summary.csv", tmp_path / "summary.md"
    summarize.main(csvs, jsons, out_csv, out_md, baseline=baseline, run_name="article",
                   dataset_note="Food-101, 101,000 images")
    return pd.read_csv(out_csv).set_index("mode"), out_md.read_text(), csvs, jsons


def test_summary_numbers_match_the_article(tmp_path):
    summary, _, _, _ = run_summary(tmp_path)
    assert list(summary.index) == list(ARTICLE)
    assert list(summary.columns) == [
        "epochs", "repeats", "epoch1_s", "epoch2_s", "epoch3_s", "steady_epoch_s",
        "steady_epoch_s_min", "steady_epoch_s_max", "compile_overhead_s", "compile_s",
        "steady_images_per_s", "one_batch_images_per_s", "fed_vs_one_batch", "fed_vs_one_batch_paired",
        "speedup_vs_none",
        "speedup_vs_none_min", "speedup_vs_none_max", "peak_gpu_mem_gib", "graph_breaks", "recompiles", "loss_first_epoch", "loss_last_epoch",
        "loss_falls", "loss_gap_vs_none",
    ]
    assert summary["repeats"].eq(1).all()
    # one repeat: every range collapses onto its value
    assert (summary["steady_epoch_s_min"] == summary["steady_epoch_s"]).all()
    assert (summary["speedup_vs_none_max"] == summary["speedup_vs_none"]).all()
    expected = {  # mode: (steady, overhead, speedup)
        "none": (141.0, -2.0, 1.0),
        "default": (128.5, 38.5, 141 / 128.5),
        "reduce-overhead": (116.5, 33.5, 141 / 116.5),
        "max-autotune": (121.0, 61.0, 141 / 121),
    }
    for mode, (steady, overhead, speedup) in expected.items():
        row = summary.loc[mode]
        assert row["steady_epoch_s"] == pytest.approx(steady)
        assert row["compile_overhead_s"] == pytest.approx(overhead)
        assert row["speedup_vs_none"] == pytest.approx(speedup)
        assert row["steady_images_per_s"] == pytest.approx(STEPS * BATCH / steady)
        # steady images/s over the one-batch rate the job's JSON gives
        assert row["fed_vs_one_batch"] == pytest.approx(row["steady_images_per_s"] / row["one_batch_images_per_s"])
    last = {mode: epochs[-1] for mode, epochs in ARTICLE.items()}
    assert summary.loc["none", "fed_vs_one_batch"] == pytest.approx(0.98 * last["none"] / 141.0)
    assert summary.loc["default", "fed_vs_one_batch"] == pytest.approx(0.96 * last["default"] / 128.5)
    assert summary.loc["default", "speedup_vs_none"] == pytest.approx(1.097, abs=1e-3)
    # the job's paired measurement as it wrote it; none (an older job) stays empty
    assert summary.loc["default", "fed_vs_one_batch_paired"] == pytest.approx(0.985)
    assert pd.isna(summary.loc["max-autotune", "fed_vs_one_batch_paired"])
    assert summary["loss_falls"].all()
    assert summary.loc["none", "loss_gap_vs_none"] == 0
    assert summary.loc["max-autotune", "loss_gap_vs_none"] == pytest.approx(0.03 / 3.25)
    assert summary.loc["reduce-overhead", "recompiles"] == 1
    assert summary["epochs"].eq(3).all()


def test_markdown_table_and_findings(tmp_path):
    _, md, _, _ = run_summary(tmp_path)
    assert md.startswith("# torch.compile benchmark: article — Food-101, 101,000 images\n")
    assert "| mode | epoch 1 | epoch 2 | epoch 3 | steady | compile overhead | speedup vs none |" in md
    assert "| none (eager) | 139.0 | 141.0 | 141.0 | 141.0 | -2.00 | 1.00x |" in md
    assert "| default | 167.0 | 129.0 | 128.0 | 128.5 | 38.50 | 1.10x |" in md
    assert "| reduce-overhead | 150.0 | 116.0 | 117.0 | 116.5 | 33.50 | 1.21x |" in md
    assert "| max-autotune | 182.0 | 121.0 | 121.0 | 121.0 | 61.00 | 1.17x |" in md
    assert "peak GPU memory (GiB)" in md and "4.220 → 3.270" in md
    assert "| last loss vs none | fed / one-batch | fed / one-batch, paired |" in md
    assert "| +0.0% | 98.0% | 99.5% |" in md and "| 96.0% | n/a |" in md  # max-autotune: no pairs
    assert ("Blocks fed by the loader after the epochs, each paired with a one-batch block next to it, "
            "ran at 97.5% (reduce-overhead) to 99.5% (none) of it") in md
    assert ("the steady epochs ran at 95.6% (default) to 98.0% (none) of the same compiled "
            "step's rate on one batch") in md
    assert "reduce-overhead is fastest at 116.5 s per epoch, 1.21x the speed of none (eager, 141.0 s)" in md
    assert "max-autotune has the largest compile overhead" in md
    assert "fell from the first to the last epoch in every mode" in md
    assert "Loss curves close to none's: every mode's last-epoch mean loss is within 10% of none's" in md


def test_host_work_per_step_is_tabled_for_jobs_that_recorded_it(tmp_path):
    csvs, jsons = write_run(tmp_path, ARTICLE)
    host = {"one": {"main_cpu_ms": 13.18, "autograd_cpu_ms": 14.05, "fetch_cpu_ms": 0.0, "other_cpu_ms": 0.03,
                    "main_voluntary_switches": 1.0, "machine_busy_ms": 27.3, "machine_steal_ms": 0.0,
                    "machine_tlb_shootdowns": 0.5},
            "fed": {"main_cpu_ms": 14.44, "autograd_cpu_ms": 14.05, "fetch_cpu_ms": 0.5, "other_cpu_ms": 8.17,
                    "main_voluntary_switches": 2.76, "machine_busy_ms": 37.4, "machine_steal_ms": 0.4,
                    "machine_tlb_shootdowns": 130.25}}
    for path, extra in ((jsons[1], {"paired_blocks_host_per_step": host, "train": {"batch_size": 64},
                                    "synthetic_batch_block_images_per_s": [2000.0, 3200.0, 2560.0],
                                    "fed_block_images_per_s": [2000.0, 2400.0, 2200.0, 1600.0]}),
                        # an older job: no block rates, no steal, no interrupt counts
                        (jsons[0], {"paired_blocks_host_per_step": {
                            kind: {k: v for k, v in values.items() if k not in ("machine_steal_ms",
                                                                                "machine_tlb_shootdowns")}
                            for kind, values in host.items()}})):
        meta = json.loads(path.read_text())
        path.write_text(json.dumps({**meta, **extra}))
    md_path = tmp_path / "summary.md"
    summarize.main(csvs, jsons, tmp_path / "summary.csv", md_path, run_name="article")
    md = md_path.read_text()
    assert "## The host's work per step in the paired blocks" in md
    assert ("| mode | step (ms) | main thread CPU | autograd thread CPU | loader's threads CPU | "
            "main thread's waits | machine's steal | TLB shootdowns |") in md
    # step: 64 images over the median rates (2560 and 2100 images/s); fetch + other added up
    assert ("| default | 25.0 → 30.5 | 13.18 → 14.44 | 14.05 → 14.05 | 0.03 → 8.67 | 1.00 → 2.76 | 0.00 → 0.40 "
            "| 0.50 → 130.25 |") in md
    assert "| none (eager) | n/a | 13.18 → 14.44 | 14.05 → 14.05 | 0.03 → 8.67 | 1.00 → 2.76 | n/a | n/a |" in md
    assert "| reduce-overhead |" not in md.split("## The host's work")[1]  # nothing recorded
    # without any job's host work there is no such section
    _, plain, _, _ = run_summary(tmp_path / "plain")
    assert "The host's work" not in plain


def test_seconds_keep_two_decimals_below_100_s():
    assert summarize._seconds(18.8732) == "18.87" and summarize._seconds(456.24) == "456.2"
    assert summarize._seconds(float("nan")) == "n/a"


def test_loss_far_from_eager_is_called_out(tmp_path):
    losses = {"none": [4.2, 3.6, 3.25], "default": [4.2, 4.0, 4.1]}  # default ends 26.2% above
    _, md, _, _ = run_summary(tmp_path, times={m: ARTICLE[m] for m in losses}, losses=losses)
    assert "Loss curves not close to none's: the last-epoch mean loss of default differs" in md
    assert "by more than 25% (largest: default, +26.2%)" in md
    assert "Loss curves close" not in md and "within the drift" not in md


def test_loss_within_a_runs_drift_is_told_apart_from_close_and_far(tmp_path):
    losses = {"none": [4.2, 3.6, 3.25], "default": [4.2, 3.9, 3.8],  # default ends 16.9% above
              "reduce-overhead": [4.2, 3.5, 3.0]}  # 7.7% below
    _, md, _, _ = run_summary(tmp_path, times={m: ARTICLE[m] for m in losses}, losses=losses)
    assert ("Loss curves within the drift of a single run: the last-epoch mean loss of "
            "default differs from none's by more than 10% but less than 25% (largest: default, +16.9%)") in md
    assert "benchmarks/loss_spread.py" in md
    assert "not close" not in md and "Loss curves close" not in md


def test_plots_are_valid_png_and_svg(tmp_path):
    _, _, csvs, jsons = run_summary(tmp_path)
    out = tmp_path / "plots"
    written = plot.main(tmp_path / "summary.csv", csvs, out, run_name="article",
                        device_note="RTX 3090", timing_jsons=jsons)
    names = sorted(p.name for p in written)
    assert names == sorted(plot.OUTPUT_NAMES)
    for name in names:
        path = out / name
        if name.endswith(".png"):
            with Image.open(path) as img:
                img.verify()
                assert img.format == "PNG"
        else:
            assert ET.parse(path).getroot().tag.endswith("svg")
    assert sorted(p.name for p in out.iterdir()) == names  # no temporary files left behind


def test_missing_column_names_the_file(tmp_path):
    csvs, jsons = write_run(tmp_path, ARTICLE)
    pd.read_csv(csvs[1]).drop(columns=["images_per_s", "loss_mean"]).to_csv(csvs[1], index=False)
    with pytest.raises(PipelineError, match=r"default\.csv.*images_per_s, loss_mean"):
        summarize.main(csvs, jsons, tmp_path / "s.csv", tmp_path / "s.md", run_name="x")
    assert not (tmp_path / "s.csv").exists() and not (tmp_path / "s.md").exists()


def test_missing_json_key_names_the_file(tmp_path):
    csvs, jsons = write_run(tmp_path, ARTICLE)
    meta = json.loads(jsons[2].read_text())
    del meta["compile_s"]
    jsons[2].write_text(json.dumps(meta))
    with pytest.raises(PipelineError, match=r"reduce-overhead\.json.*compile_s"):
        summarize.main(csvs, jsons, tmp_path / "s.csv", tmp_path / "s.md", run_name="x")


def test_mismatched_epoch_counts_fail(tmp_path):
    times = {**ARTICLE, "default": [167, 129]}
    csvs, jsons = write_run(tmp_path, times)
    with pytest.raises(PipelineError, match="different numbers of epochs"):
        summarize.main(csvs, jsons, tmp_path / "s.csv", tmp_path / "s.md", run_name="x")


def test_epoch_gap_fails(tmp_path):
    csvs, jsons = write_run(tmp_path, ARTICLE)
    df = pd.read_csv(csvs[0])
    df.loc[2, "epoch"] = 4
    df.to_csv(csvs[0], index=False)
    with pytest.raises(PipelineError, match=r"none\.csv.*1\.\.N"):
        summarize.main(csvs, jsons, tmp_path / "s.csv", tmp_path / "s.md", run_name="x")


def test_missing_baseline_leaves_speedups_empty(tmp_path):
    times = {m: t for m, t in ARTICLE.items() if m != "none"}
    summary, md, csvs, jsons = run_summary(tmp_path, times)
    assert summary["speedup_vs_none"].isna().all()
    assert summary["loss_gap_vs_none"].isna().all()
    assert summary.loc["default", "steady_epoch_s"] == pytest.approx(128.5)
    assert "baseline mode 'none' is not in this run" in md
    assert "| default | 167.0 | 129.0 | 128.0 | 128.5 | 38.50 | n/a |" in md
    written = plot.main(tmp_path / "summary.csv", csvs, tmp_path / "plots", run_name="x",
                        timing_jsons=jsons)
    assert len(written) == 6


def test_single_epoch_has_no_steady_state(tmp_path):
    times = {m: t[:1] for m, t in ARTICLE.items()}
    summary, md, csvs, jsons = run_summary(tmp_path, times)
    assert list(summary.columns[:4]) == ["epochs", "repeats", "epoch1_s", "steady_epoch_s"]
    for col in ("steady_epoch_s", "compile_overhead_s", "speedup_vs_none", "steady_images_per_s"):
        assert summary[col].isna().all(), col
    assert summary["loss_falls"].isna().all()  # nothing to compare, not "did not fall"
    assert "Only one epoch was run" in md and "no steady state" in md
    written = plot.main(tmp_path / "summary.csv", csvs, tmp_path / "plots", run_name="x")
    assert len(written) == 6


def test_loss_that_does_not_fall_is_named(tmp_path):
    summary, md, _, _ = run_summary(tmp_path, losses={"max-autotune": [4.2, 4.3, 4.4]})
    assert not summary.loc["max-autotune", "loss_falls"]
    assert summary.loc[["none", "default", "reduce-overhead"], "loss_falls"].all()
    assert "did not fall from the first to the last epoch in: max-autotune." in md


def test_summarize_command_line(tmp_path):
    csvs, jsons = write_run(tmp_path, ARTICLE)
    out_csv = tmp_path / "cli.csv"
    subprocess.run(
        [sys.executable, str(SCRIPTS / "summarize.py"), "--csv", *map(str, csvs), "--json",
         *map(str, jsons), "--out-csv", str(out_csv), "--out-md", str(tmp_path / "cli.md"),
         "--run", "cli"],
        check=True, cwd=SCRIPTS,
    )
    assert math.isclose(pd.read_csv(out_csv).set_index("mode").at["default", "speedup_vs_none"],
                        141 / 128.5)


def test_snakemake_outputs_must_be_the_fixed_names(tmp_path):
    outputs = [str(tmp_path / "plots" / name) for name in plot.OUTPUT_NAMES]
    assert plot._check_snakemake_outputs(outputs) == tmp_path / "plots"
    outputs[-1] = str(tmp_path / "plots" / "training_loss.svg")
    with pytest.raises(PipelineError, match="training_loss.svg"):
        plot._check_snakemake_outputs(outputs)


def test_real_snakemake_rules(tmp_path):
    """The repo's summary.smk rules run the scripts through Snakemake's `script:` directive."""
    pytest.importorskip("snakemake")
    modes = list(ARTICLE)
    write_run(tmp_path / "results" / "r", ARTICLE)
    shutil.copytree(REPO / "docs" / "article", tmp_path / "docs" / "article")
    rules = SCRIPTS.parent / "rules" / "summary.smk"
    (tmp_path / "Snakefile").write_text(
        'RUN = "r"\nRESULTS = "results/r"\nPLOTS = ["epoch_times", "speedup", "loss"]\n'
        + f"def timing_outputs(kind):\n    return expand(RESULTS + '/timings/{{mode}}.' + kind, mode={modes!r})\n"
        + "def dataset_note():\n    return 'Food-101 (all split)'\n"
        + "def device_note():\n    return 'resnet50, batch 64, fp16, cuda'\n"
        + f'include: "{rules}"\n'
        + "rule all:\n    input: 'results/r/summary.md', 'results/r/plots/loss.svg', "
        + "'results/r/plots/vs_article.svg'\n"
    )
    subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "--quiet", "all"],
                   cwd=tmp_path, check=True)
    md = (tmp_path / "results" / "r" / "summary.md").read_text()
    assert "| reduce-overhead | 150.0 | 116.0 | 117.0 | 116.5 | 33.50 | 1.21x |" in md
    assert "| reduce-overhead | 1.21x | 1.21x |" in md  # the article's own numbers, both sides
    assert sorted(p.name for p in (tmp_path / "results" / "r" / "plots").iterdir()) == sorted(
        plot.OUTPUT_NAMES + ["vs_article.png", "vs_article.svg"]
    )


# ---------------------------------------------------------------- repeats and the article
# A second repeat of the article's run: eager 2 s slower, reduce-overhead 3 s faster (steady state).
REPEAT_2 = {
    "none": [140, 143, 143],
    "default": [160, 129, 128],
    "reduce-overhead": [148, 113, 114],
    "max-autotune": [170, 121, 121],
}


def write_repeat(folder: Path, times: dict[str, list[float]], repeat: int):
    """timings/<mode>.rep<N>.csv and .json, named as the train_repeat rule names them."""
    csvs, jsons = write_run(folder / f"rep{repeat}", times)
    renamed = []
    for path in [*csvs, *jsons]:
        target = folder / "timings" / f"{path.stem}.rep{repeat}{path.suffix}"
        path.replace(target)
        renamed.append(target)
    return renamed[: len(csvs)], renamed[len(csvs):]


def run_repeats(tmp_path: Path):
    csvs, jsons = write_run(tmp_path, ARTICLE)
    csvs2, jsons2 = write_repeat(tmp_path, REPEAT_2, 2)
    paths = {"csv": tmp_path / "summary.csv", "md": tmp_path / "summary.md",
             "repeats": tmp_path / "repeats.csv"}
    summarize.main(csvs + csvs2, jsons + jsons2, paths["csv"], paths["md"], run_name="article",
                   repeats_csv=paths["repeats"])
    return paths, csvs + csvs2, jsons + jsons2


def test_repeats_give_medians_and_ranges(tmp_path):
    paths, _, _ = run_repeats(tmp_path)
    summary = pd.read_csv(paths["csv"]).set_index("mode")
    assert summary["repeats"].eq(2).all()
    ro = summary.loc["reduce-overhead"]
    assert ro["epoch1_s"] == pytest.approx(149.0)
    assert (ro["steady_epoch_s"], ro["steady_epoch_s_min"], ro["steady_epoch_s_max"]) == (
        pytest.approx(115.0), pytest.approx(113.5), pytest.approx(116.5))
    assert ro["compile_overhead_s"] == pytest.approx(34.0)  # median of 33.5 and 34.5
    # ratio of medians; the range pairs every eager repeat (141, 143) with every mode repeat
    assert ro["speedup_vs_none"] == pytest.approx(142 / 115)
    assert ro["speedup_vs_none_min"] == pytest.approx(141 / 116.5)
    assert ro["speedup_vs_none_max"] == pytest.approx(143 / 113.5)
    assert summary.loc["none", "speedup_vs_none_min"] == pytest.approx(141 / 143)

    jobs = pd.read_csv(paths["repeats"])
    assert list(jobs.columns[:3]) == ["mode", "repeat", "epochs"]
    assert sorted(zip(jobs["mode"], jobs["repeat"])) == sorted((m, r) for m in ARTICLE for r in (1, 2))
    row = jobs[(jobs["mode"] == "reduce-overhead") & (jobs["repeat"] == 2)].iloc[0]
    assert row["steady_epoch_s"] == pytest.approx(113.5)
    assert row["speedup_vs_none"] == pytest.approx(142 / 113.5)  # against the eager median


def test_repeats_in_markdown(tmp_path):
    paths, _, _ = run_repeats(tmp_path)
    md = paths["md"].read_text()
    assert "Each mode ran 2 times (train.repeats)" in md
    assert "| mode | epoch 1 | epoch 2 | epoch 3 | steady (min–max) | compile overhead | " \
           "speedup vs none (min–max) |" in md
    assert "| reduce-overhead | 149.0 | 114.5 | 115.5 | 115.0 (113.5–116.5) | 34.00 | " \
           "1.23x (1.21–1.26x) |" in md
    assert "its speedup ranges 1.21–1.26x, which lies above 1.00x" in md
    assert "Repeats of one mode differ by up to 2.6% in steady epoch time (reduce-overhead" in md


def test_a_range_that_includes_one_is_called_noise():
    row = {"s": 1.02, "s_min": 0.97, "s_max": 1.07}
    assert "includes 1.00x, so this difference is within the noise" in summarize._range_verdict(row, "s")


def test_mismatched_repeat_files_fail(tmp_path):
    csvs, jsons = write_run(tmp_path, ARTICLE)
    csvs2, _ = write_repeat(tmp_path, REPEAT_2, 2)
    with pytest.raises(PipelineError, match="no timing JSON for mode 'none' repeat 2"):
        summarize.main(csvs + csvs2, jsons, tmp_path / "s.csv", tmp_path / "s.md", run_name="x")


def test_read_article():
    times, setup = summarize.read_article(ARTICLE_CSV)
    assert len(times) == 12 and set(times["mode"]) == set(ARTICLE)
    assert (setup["gpu"], setup["torch"], setup["batch_size"]) == ("GeForce RTX 3090", "2.1.0", "64")
    speedups = summarize.article_speedups(times, "none")
    assert speedups.loc["default", "article_speedup"] == pytest.approx(141 / 128.5)
    assert speedups.loc["max-autotune", "article_steady_epoch_s"] == pytest.approx(121)


def test_article_comparison_in_markdown(tmp_path):
    csvs, jsons = write_run(tmp_path, ARTICLE)
    summarize.main(csvs, jsons, tmp_path / "s.csv", tmp_path / "s.md", run_name="x",
                   article_csv=ARTICLE_CSV)
    md = (tmp_path / "s.md").read_text()
    assert "## Compared with the article" in md
    assert "in this run (a CUDA GPU, PyTorch 2.1.0) and in the article (GeForce RTX 3090, PyTorch 2.1.0" in md
    assert "| default | 1.10x | 1.10x |" in md
    table = md.split("## Compared with the article")[1].split("\n\n")[2].splitlines()[2:]
    assert [row.split(" | ")[0] for row in table] == [
        "| none (eager)", "| default", "| reduce-overhead", "| max-autotune"]  # each mode once
    assert "the fastest here is reduce-overhead (1.21x) and in the article reduce-overhead (1.21x), " \
           "the same mode" in md
    assert "default +0.00x, reduce-overhead +0.00x, max-autotune +0.00x" in md
    assert "not expected to match" not in md


def test_article_comparison_names_what_differs(tmp_path):
    times = {**ARTICLE, "max-autotune-no-cudagraphs": [150, 120, 120]}
    csvs, jsons = write_run(tmp_path, times)
    for path in jsons:
        meta = json.loads(path.read_text())
        meta.update(device="cpu", versions={"torch": "2.14.1", "cpu": "Xeon"},
                    train={"model": "resnet18", "image_size": 224, "batch_size": 8, "epochs": 3})
        path.write_text(json.dumps(meta))
    summarize.main(csvs, jsons, tmp_path / "s.csv", tmp_path / "s.md", run_name="x",
                   article_csv=ARTICLE_CSV)
    md = (tmp_path / "s.md").read_text()
    assert "in this run (CPU (Xeon), PyTorch 2.14.1)" in md
    assert "| max-autotune-no-cudagraphs | 1.18x | not measured |" in md
    assert ("not expected to match: this run trained on the CPU, the article on a GPU, and the "
            "protocol differs (model resnet18 vs resnet50; batch_size 8 vs 64)") in md


def _valid_plot_files(paths):
    for path in paths:
        if path.suffix == ".png":
            with Image.open(path) as img:
                img.verify()
        else:
            assert ET.parse(path).getroot().tag.endswith("svg")


@pytest.mark.parametrize("repeats", [1, 2])
def test_vs_article_plot(tmp_path, repeats):
    if repeats == 1:
        _, _, _, jsons = run_summary(tmp_path)
    else:
        _, _, jsons = run_repeats(tmp_path)
    written = vs_article.main(tmp_path / "summary.csv", ARTICLE_CSV, jsons, tmp_path / "plots",
                              run_name="article")
    assert sorted(p.name for p in written) == ["vs_article.png", "vs_article.svg"]
    _valid_plot_files(written)
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == sorted(p.name for p in written)
    table = vs_article.comparison_table(pd.read_csv(tmp_path / "summary.csv"),
                                        summarize.read_article(ARTICLE_CSV)[0], "none")
    assert table.set_index("mode").loc["default", "article"] == pytest.approx(141 / 128.5)


def test_plots_show_the_spread_of_repeats(tmp_path):
    paths, csvs, jsons = run_repeats(tmp_path)
    written = plot.main(paths["csv"], csvs, tmp_path / "plots", run_name="article",
                        timing_jsons=jsons, repeats_csv=paths["repeats"])
    assert sorted(p.name for p in written) == sorted(plot.OUTPUT_NAMES)
    _valid_plot_files(written)
    svg = (tmp_path / "plots" / "speedup.svg").read_text()
    assert "whiskers: every pair of repeats" in svg


# --- a partial summary: some training jobs failed or were not run (the Snakefile's onerror hook) ---

OOM_LOG = ("2026-05-01 10:00:00,123 INFO mode max-autotune: torch.compile(...)\n"
           "2026-05-01 10:00:09,456 ERROR mode max-autotune: out of GPU memory at train.batch_size 256 "
           "(peak 131.2 GiB allocated by PyTorch of 139.8 GiB): lower train.batch_size, or drop this "
           "mode; with --keep-going the other modes still run\n")
TRACEBACK_LOG = ("2026-05-01 10:00:00,123 INFO start\n"
                 "2026-05-01 10:00:01,000 ERROR job failed\n"
                 "Traceback (most recent call last):\n"
                 '  File "train.py", line 554, in main\n'
                 "    model = torch.compile(model, **kwargs)\n"
                 "torch._dynamo.exc.InvalidBackend: Invalid backend: 'nope' | see list_backends()\n")


def run_partial(tmp_path: Path, finished: list[str], missing: list, times=ARTICLE):
    csvs, jsons = write_run(tmp_path, {mode: times[mode] for mode in finished})
    out_csv, out_md = tmp_path / "summary.csv", tmp_path / "summary.md"
    summarize.main(csvs, jsons, out_csv, out_md, run_name="article", article_csv=ARTICLE_CSV,
                   missing=missing, mode_order=list(times))
    return pd.read_csv(out_csv).astype({"mode": str}).set_index("mode"), out_md.read_text()


def test_failure_reason_is_read_from_the_job_log(tmp_path):
    oom, trace, empty = tmp_path / "oom.log", tmp_path / "trace.log", tmp_path / "empty.log"
    oom.write_text(OOM_LOG)
    trace.write_text(TRACEBACK_LOG)
    empty.write_text("")
    assert summarize.failure_reason(oom).startswith("mode max-autotune: out of GPU memory at "
                                                    "train.batch_size 256 (peak 131.2 GiB")
    assert summarize.failure_reason(trace) == ("torch._dynamo.exc.InvalidBackend: Invalid backend: "
                                               "'nope' | see list_backends()")
    assert summarize.failure_reason(empty) == "the log is empty"
    assert summarize.failure_reason(tmp_path / "none.log") == f"no log at {tmp_path / 'none.log'}"
    assert len(summarize.failure_reason(oom, limit=40)) == 40


def test_partial_summary_marks_failed_and_not_run_modes(tmp_path):
    log = tmp_path / "logs" / "max-autotune.log"
    log.parent.mkdir()
    log.write_text(OOM_LOG)
    missing = [summarize.MissingJob("max-autotune", 1, summarize.FAILED, str(log)),
               summarize.MissingJob("reduce-overhead", 1, summarize.NOT_RUN, "")]
    summary, md = run_partial(tmp_path, ["none", "default"], missing)

    assert list(summary.index) == list(ARTICLE)  # every configured mode, in order
    assert summary["status"].to_dict() == {"none": "ok", "default": "ok", "reduce-overhead": "not run",
                                           "max-autotune": "failed"}
    assert summary.loc["max-autotune", "log"] == str(log)
    assert summary.loc["max-autotune", "reason"].startswith("mode max-autotune: out of GPU memory")
    assert "--keep-going" in summary.loc["reduce-overhead", "reason"]
    numbers = summary.columns.drop(["status", "log", "reason"])
    assert summary.loc[["max-autotune", "reduce-overhead"], numbers].isna().all().all()  # no numbers
    assert summary.loc["default", "speedup_vs_none"] == pytest.approx(141 / 128.5)  # as in a full run
    assert summary.loc["none", "epochs"] == 3 and summary.loc["none", "repeats"] == 1
    assert not (tmp_path / "repeats.csv").exists()

    assert md.startswith("# torch.compile benchmark: article\n\n**Incomplete summary — failed: "
                         "max-autotune; not run: reduce-overhead.**")
    assert "| max-autotune (failed) | — | — | — | — | — | — |" in md
    assert "| reduce-overhead (not run) | — | — | — | — | — | — |" in md
    assert "| default | 167.0 | 129.0 | 128.0 | 128.5 | 38.50 | 1.10x |" in md
    section = md.split("## Training jobs without results", 1)[1].split("## Compared", 1)[0]
    assert "| max-autotune | failed | mode max-autotune: out of GPU memory" in section
    assert f"| `{log}` |" in section
    assert "| reduce-overhead | not run | not started" in section
    assert "| max-autotune | failed | 1.17x |" in md  # beside the article: failed, not "not run"


def test_partial_summary_without_the_baseline(tmp_path):
    log = tmp_path / "none.log"
    log.write_text(TRACEBACK_LOG)
    summary, md = run_partial(tmp_path, ["default", "max-autotune"],
                              [summarize.MissingJob("none", 1, summarize.FAILED, str(log))])
    assert summary.loc["none", "status"] == "failed"
    assert summary["speedup_vs_none"].isna().all()
    assert "**The baseline mode 'none' failed: no speedups are given.**" in md
    assert "| none (failed) |" in md and "InvalidBackend: Invalid backend: 'nope' \\| see" in md


def test_partial_summary_with_a_failed_repeat(tmp_path):
    csvs, jsons = write_run(tmp_path, ARTICLE)
    csvs2, jsons2 = write_repeat(tmp_path, {"none": REPEAT_2["none"]}, 2)
    log = tmp_path / "default.rep2.log"
    log.write_text(OOM_LOG)
    missing = [summarize.MissingJob(mode, 2, summarize.FAILED if mode == "default" else summarize.NOT_RUN,
                                    str(log) if mode == "default" else "")
               for mode in ["default", "reduce-overhead", "max-autotune"]]
    summarize.main(csvs + csvs2, jsons + jsons2, tmp_path / "s.csv", tmp_path / "s.md", run_name="x",
                   missing=missing, mode_order=list(ARTICLE))
    summary = pd.read_csv(tmp_path / "s.csv").set_index("mode")
    assert summary["status"].to_dict() == {"none": "ok", "default": "incomplete",
                                           "reduce-overhead": "incomplete", "max-autotune": "incomplete"}
    assert summary["repeats"].to_dict() == {"none": 2, "default": 1, "reduce-overhead": 1, "max-autotune": 1}
    assert summary.loc["default", "reason"].startswith("default repeat 2: mode max-autotune: out of GPU")
    assert summary.loc["default", "steady_epoch_s"] == pytest.approx(128.5)  # repeat 1 only
    md = (tmp_path / "s.md").read_text()
    assert "**Incomplete summary — incomplete: default, reduce-overhead, max-autotune.**" in md
    assert "An incomplete mode's numbers cover only its repeats that finished." in md
    assert "| default (incomplete: 1 of 2 repeats) | 167.0 |" in md
    assert "| default repeat 2 | failed |" in md and "| max-autotune repeat 2 | not run |" in md
