"""The whole pipeline run by Snakemake in a temporary folder, and what it reruns after a change.

One run fetches its archive from a real HTTP server on 127.0.0.1; another generates it (the README's
quick start). Both train all four modes on the CPU with real torch.compile.
"""

import csv
import functools
import hashlib
import http.server
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

import make_synthetic

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
COPIED = ["Snakefile", "config.yaml", "configs", "workflow", "envs", "profiles", "docs", "requirements.txt"]
MODES = ["none", "default", "reduce-overhead", "max-autotune"]

pytestmark = pytest.mark.slow
# What any change to the training jobs reruns after them.
AFTER_TRAINING = {"summary": 1, "plots": 1, "vs_article": 1, "provenance": 1, "all": 1}


def copy_workflow(dest: Path) -> Path:
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, dest / name)
    return dest


def snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([*SNAKEMAKE, "--cores", "2", *args], cwd=workdir, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"snakemake {args} failed:\n{done.stdout[-5000:]}\n{done.stderr[-5000:]}")
    return done


def planned_jobs(workdir: Path, *configfiles: str) -> dict[str, int]:
    """{rule: count} Snakemake would run now (a dry run's job stats)."""
    done = snakemake(workdir, "-n", "--configfile", *configfiles)
    text = done.stdout + done.stderr
    if "Nothing to be done" in text:
        return {}
    stats = text.split("Job stats:", 1)[1]
    return {rule: int(n) for rule, n in re.findall(r"^(\w+)\s+(\d+)\s*$", stats, re.M) if rule != "total"}


@pytest.fixture(scope="module")
def archive_server(tmp_path_factory):
    """A Food-101-shaped archive served over HTTP on 127.0.0.1."""
    root = tmp_path_factory.mktemp("www")
    make_synthetic.main(root / "food-101.tar.gz", classes=4, train_per_class=12, test_per_class=4,
                        max_side=96, seed=1, workers=2)
    digest = hashlib.sha256((root / "food-101.tar.gz").read_bytes()).hexdigest()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/food-101.tar.gz", digest
    server.shutdown()


@pytest.fixture(scope="module")
def downloaded_run(tmp_path_factory, archive_server):
    """The smoke pipeline with its archive downloaded instead of generated."""
    url, digest = archive_server
    workdir = copy_workflow(tmp_path_factory.mktemp("pipeline"))
    (workdir / "http.yaml").write_text(yaml.safe_dump(
        {"run": "http", "dataset": {"source": "food101", "url": url, "sha256": digest}}))
    snakemake(workdir, "--configfile", "configs/smoke.yaml", "http.yaml")
    return workdir


def read_csv(path: Path) -> list[dict]:
    with open(path) as handle:
        return list(csv.DictReader(handle))


def test_downloaded_archive_runs_end_to_end(downloaded_run):
    results = downloaded_run / "results" / "http"
    assert (downloaded_run / "resources" / "food101" / "food-101.tar.gz").exists()
    lists = downloaded_run / "resources" / "food101" / "filelists"
    assert len((lists / "all.txt").read_text().splitlines()) == 4 * 16
    for mode in MODES:
        rows = read_csv(results / "timings" / f"{mode}.csv")
        assert [int(r["epoch"]) for r in rows] == [1, 2]
        assert all(int(r["images"]) == 64 for r in rows)  # 64 images, batch 8: no partial batch
        assert (results / "timings" / f"{mode}.json").exists()
        assert "epoch 2" in (results / "logs" / "train" / f"{mode}.log").read_text()
    summary = read_csv(results / "summary.csv")
    assert [r["mode"] for r in summary] == MODES
    assert float(summary[0]["speedup_vs_none"]) == pytest.approx(1.0)
    assert "reduce-overhead" in (results / "summary.md").read_text()
    for plot in ["epoch_times", "speedup", "loss", "vs_article"]:
        for ext in ["png", "svg"]:
            assert (results / "plots" / f"{plot}.{ext}").stat().st_size > 1000
    assert [r["repeat"] for r in read_csv(results / "repeats.csv")] == ["1"] * 4
    assert (results / "provenance.json").exists() and (results / "config.yaml").exists()


def test_nothing_reruns_when_nothing_changed(downloaded_run):
    assert planned_jobs(downloaded_run, "configs/smoke.yaml", "http.yaml") == {}


def test_adding_a_mode_runs_only_that_mode(downloaded_run):
    config = yaml.safe_load((downloaded_run / "http.yaml").read_text())
    config["modes"] = {"max-autotune-no-cudagraphs": {}}
    (downloaded_run / "more.yaml").write_text(yaml.safe_dump(config))
    # the mode lists are merged: the four defaults stay, one is added
    jobs = planned_jobs(downloaded_run, "configs/smoke.yaml", "more.yaml")
    assert jobs == {"train": 1, **AFTER_TRAINING}


def test_changing_one_mode_reruns_only_that_mode(downloaded_run):
    config = yaml.safe_load((downloaded_run / "http.yaml").read_text())
    config["modes"] = {"default": {"mode": "default", "fullgraph": True}}
    (downloaded_run / "changed.yaml").write_text(yaml.safe_dump(config))
    done = snakemake(downloaded_run, "-n", "--configfile", "configs/smoke.yaml", "changed.yaml")
    # as a job's output: every mode's file is also listed as the summary's input
    assert "output: results/http/timings/default.csv" in done.stdout
    assert "output: results/http/timings/none.csv" not in done.stdout
    assert planned_jobs(downloaded_run, "configs/smoke.yaml", "changed.yaml") == {
        "train": 1, **AFTER_TRAINING}


def test_changing_a_training_setting_reruns_every_mode(downloaded_run):
    config = yaml.safe_load((downloaded_run / "http.yaml").read_text())
    config["train"] = {"epochs": 3}
    (downloaded_run / "epochs.yaml").write_text(yaml.safe_dump(config))
    jobs = planned_jobs(downloaded_run, "configs/smoke.yaml", "epochs.yaml")
    assert jobs == {"train": 4, **AFTER_TRAINING}


def test_more_repeats_run_only_the_new_repeats(downloaded_run):
    """Repeat 1 keeps its names and is not rerun: `repeats` is not part of a training job's params."""
    config = yaml.safe_load((downloaded_run / "http.yaml").read_text())
    config["train"] = {"repeats": 3}
    (downloaded_run / "repeats.yaml").write_text(yaml.safe_dump(config))
    done = snakemake(downloaded_run, "-n", "--configfile", "configs/smoke.yaml", "repeats.yaml")
    assert "timings/default.rep3.csv" in done.stdout
    jobs = planned_jobs(downloaded_run, "configs/smoke.yaml", "repeats.yaml")
    assert jobs == {"train_repeat": 8, **AFTER_TRAINING}


def test_quick_start_smoke_config(tmp_path):
    """The README's quick start: the embedded smoke config, data generated, no download."""
    workdir = copy_workflow(tmp_path)
    snakemake(workdir, "--configfile", "configs/smoke.yaml")
    results = workdir / "results" / "smoke"
    assert [r["mode"] for r in read_csv(results / "summary.csv")] == MODES
    assert "not real Food-101" in (results / "summary.md").read_text()
    assert planned_jobs(workdir, "configs/smoke.yaml") == {}


def test_lint_and_format_are_clean():
    lint = subprocess.run([*SNAKEMAKE, "--lint"], cwd=REPO, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "."], cwd=REPO,
                         capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
