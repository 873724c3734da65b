"""The whole pipeline run by Snakemake in a temporary folder, and what it reruns after a change.

The README's quick start (data generated) trains all four modes on the CPU with real torch.compile;
another run fetches its archive from a real HTTP server on 127.0.0.1. Both runs are session
fixtures (conftest.py): the quick start's run is also raised to two repeats and cited by
test_report.py, the downloaded run is also killed mid-epoch by test_robustness.py.
"""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from snakemake_runs import AFTER_TRAINING, MODES, REPO, SNAKEMAKE, job_stats, planned_jobs, read_csv, snakemake

pytestmark = pytest.mark.slow
PLOTS = ["epoch_times", "speedup", "loss", "vs_article"]


def test_quick_start_smoke_config(smoke_run):
    """The README's quick start: the embedded smoke config, data generated, no download; every mode
    trains, is summarised and plotted, and a second run has nothing to do."""
    results = smoke_run.results
    for mode in MODES:
        rows = smoke_run.epochs[mode]
        assert [int(r["epoch"]) for r in rows] == [1, 2]
        assert all(int(r["images"]) == 64 for r in rows)  # 64 images, batch 8: no partial batch
        assert "epoch 2" in smoke_run.logs[mode]
        assert smoke_run.facts[mode]["dataset_images"] == 64 and smoke_run.facts[mode]["device"] == "cpu"
    assert [r["mode"] for r in smoke_run.summary] == MODES
    assert float(smoke_run.summary[0]["speedup_vs_none"]) == pytest.approx(1.0)
    assert "not real Food-101" in smoke_run.summary_md and "reduce-overhead" in smoke_run.summary_md
    for plot in PLOTS:
        for ext in ["png", "svg"]:
            assert smoke_run.plot_sizes[f"{plot}.{ext}"] > 1000
    assert [r["repeat"] for r in smoke_run.repeats] == ["1"] * 4
    assert (results / "provenance.json").exists() and (results / "config.yaml").exists()
    assert smoke_run.plan_after == {}


def test_compiled_modes_compile_once_into_a_cold_cache_and_learn(smoke_run):
    """Each compiled mode's training job (real torch.compile of the model and its backward on the
    CPU): one graph, no graph break, no recompile (the upper-bound steps on one synthetic batch
    included), epoch 1 holding the compile, loss falling; each into a new cache that is gone after."""
    for mode in MODES:
        facts, rows = smoke_run.facts[mode], smoke_run.epochs[mode]
        cache = facts["compile_cache"]
        assert cache["policy"] == "cold" and cache["was_empty"] is True  # the default
        assert not Path(cache["dir"]).exists(), f"{mode}: the cold cache was not removed"
        assert facts["graph_breaks"] == 0 and facts["recompiles"] == 0
        assert facts["synthetic_batch_images_per_s"] > 0
        # training progresses under torch.compile as in eager mode (fixed seeds: the same data)
        assert float(rows[1]["loss_mean"]) < float(rows[0]["loss_mean"]), mode
        # and close to it: the smoke's learning rate keeps 16 steps from diverging (1.3% apart on
        # a 2-core VM; at config.yaml's 0.05 the compiled modes ended 56-89% below eager)
        assert abs(float(smoke_run.summary[MODES.index(mode)]["loss_gap_vs_none"])) < 0.10, mode
        if mode == "none":
            assert facts["compile"] is None and facts["graphs_compiled"] == 0
            continue
        assert facts["compile"] == {"backend": "inductor", "fullgraph": False, "mode": mode}
        assert facts["graphs_compiled"] >= 1
        # epoch 1 holds the compilation, so it is far slower than the steady state
        assert float(rows[0]["epoch_s"]) > 3 * float(rows[1]["epoch_s"]), mode


def test_downloaded_archive_runs_end_to_end(downloaded_run):
    results = downloaded_run / "results" / "http"
    assert (downloaded_run / "resources" / "food101" / "food-101.tar.gz").exists()
    lists = downloaded_run / "resources" / "food101" / "filelists"
    assert len((lists / "all.txt").read_text().splitlines()) == 4 * 16
    rows = read_csv(results / "timings" / "none.csv")
    assert [int(r["epoch"]) for r in rows] == [1, 2]
    assert all(int(r["images"]) == 64 for r in rows)  # 64 images, batch 8: no partial batch
    assert (results / "timings" / "none.json").exists()
    assert "epoch 2" in (results / "logs" / "train" / "none.log").read_text()
    summary = read_csv(results / "summary.csv")
    assert [r["mode"] for r in summary] == ["none"]
    assert float(summary[0]["speedup_vs_none"]) == pytest.approx(1.0)
    assert "| none (eager) |" in (results / "summary.md").read_text()
    assert "not real Food-101" not in (results / "summary.md").read_text()
    for plot in PLOTS:
        for ext in ["png", "svg"]:
            assert (results / "plots" / f"{plot}.{ext}").stat().st_size > 1000
    assert [r["repeat"] for r in read_csv(results / "repeats.csv")] == ["1"]
    assert (results / "provenance.json").exists() and (results / "config.yaml").exists()


# --- what a change reruns: dry runs over the quick start's run with two repeats per mode --------


def with_repeats(repeats_run, name: str, **changes) -> str:
    """A config file over configs/smoke.yaml: the run's two repeats, and `changes`."""
    config = {"train": {"repeats": 2}}
    for key, value in changes.items():
        config[key] = {**config.get(key, {}), **value}
    (repeats_run.workdir / name).write_text(yaml.safe_dump(config))
    return name


def test_nothing_reruns_when_nothing_changed(repeats_run, downloaded_run):
    assert planned_jobs(repeats_run.workdir, *repeats_run.configs) == {}
    assert planned_jobs(downloaded_run, "configs/smoke.yaml", "http.yaml") == {}


def test_adding_a_mode_runs_only_that_mode(repeats_run):
    more = with_repeats(repeats_run, "more.yaml", modes={"max-autotune-no-cudagraphs": {}})
    # the mode lists are merged: the four defaults stay, one is added (both of its repeats)
    jobs = planned_jobs(repeats_run.workdir, "configs/smoke.yaml", more)
    assert jobs == {"train": 1, "train_repeat": 1, **AFTER_TRAINING}


def test_changing_one_mode_reruns_only_that_mode(repeats_run):
    changed = with_repeats(repeats_run, "changed.yaml", modes={"default": {"mode": "default", "fullgraph": True}})
    done = snakemake(repeats_run.workdir, "-n", "--configfile", "configs/smoke.yaml", changed)
    # as a job's output: every mode's file is also listed as the summary's input
    assert "output: results/smoke/timings/default.csv" in done.stdout
    assert "output: results/smoke/timings/default.rep2.csv" in done.stdout
    assert "output: results/smoke/timings/none.csv" not in done.stdout
    assert "output: results/smoke/timings/none.rep2.csv" not in done.stdout
    assert job_stats(done.stdout + done.stderr) == {"train": 1, "train_repeat": 1, **AFTER_TRAINING}


def test_changing_a_training_setting_reruns_every_mode(repeats_run):
    epochs = with_repeats(repeats_run, "epochs.yaml", train={"epochs": 3})
    jobs = planned_jobs(repeats_run.workdir, "configs/smoke.yaml", epochs)
    assert jobs == {"train": 4, "train_repeat": 4, **AFTER_TRAINING}


def test_more_repeats_run_only_the_new_repeats(repeats_run):
    """Repeat 1 keeps its names and is not rerun: `repeats` is not part of a training job's params.
    Run for real from 1 to 2 repeats (repeats_run), planned from 2 to 3."""
    assert "timings/default.rep2.csv" in repeats_run.plan
    assert job_stats(repeats_run.plan) == {"train_repeat": 4, **AFTER_TRAINING}
    assert repeats_run.repeat1_after == repeats_run.repeat1_before  # neither rewritten nor touched
    three = with_repeats(repeats_run, "repeats3.yaml", train={"repeats": 3})
    done = snakemake(repeats_run.workdir, "-n", "--configfile", "configs/smoke.yaml", three)
    assert "timings/default.rep3.csv" in done.stdout
    assert job_stats(done.stdout + done.stderr) == {"train_repeat": 4, **AFTER_TRAINING}


def test_lint_and_format_are_clean():
    lint = subprocess.run([*SNAKEMAKE, "--lint"], cwd=REPO, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "."], cwd=REPO,
                         capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
