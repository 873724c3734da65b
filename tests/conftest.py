"""Makes the pipeline's scripts importable by tests, as Snakemake makes them importable by each other;
and the pipeline runs that several test modules share (each trains real models, so each is made
once per session)."""

import hashlib
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "workflow" / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

import make_synthetic  # noqa: E402
from snakemake_runs import MODES, copy_workflow, fingerprint, planned_jobs, read_csv, served, snakemake  # noqa: E402

# The smoke run with a second repeat of every mode (test_report.py, test_workflow.py).
REPEATS_CONFIGS = ("configs/smoke.yaml", "repeats.yaml")


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory):
    """The README's quick start, as a user types it: the embedded smoke config, data generated, all
    four modes trained with real torch.compile on the CPU (cold compile cache, the default).

    `repeats_run` later adds a second repeat to this very run, which rewrites the summary: what the
    quick start itself left is read here, at once, for the tests of the quick start.
    """
    workdir = copy_workflow(tmp_path_factory.mktemp("smoke"))
    done = snakemake(workdir, "--configfile", "configs/smoke.yaml")
    results = workdir / "results" / "smoke"
    timings = results / "timings"
    return SimpleNamespace(
        workdir=workdir,
        results=results,
        output=done.stdout + done.stderr,
        summary=read_csv(results / "summary.csv"),
        summary_md=(results / "summary.md").read_text(),
        repeats=read_csv(results / "repeats.csv"),
        plot_sizes={p.name: p.stat().st_size for p in (results / "plots").iterdir()},
        epochs={mode: read_csv(timings / f"{mode}.csv") for mode in MODES},
        facts={mode: json.loads((timings / f"{mode}.json").read_text()) for mode in MODES},
        logs={mode: (results / "logs" / "train" / f"{mode}.log").read_text() for mode in MODES},
        plan_after=planned_jobs(workdir, "configs/smoke.yaml"),
    )


@pytest.fixture(scope="session")
def repeats_run(smoke_run):
    """The quick start's run raised to two repeats per mode (`train: {repeats: 2}`), as a user raises
    it: only the four repeat-2 jobs train; repeat 1's files are kept. Everything a paper cites is
    made from it (test_report.py)."""
    workdir, timings = smoke_run.workdir, smoke_run.results / "timings"
    (workdir / "repeats.yaml").write_text(yaml.safe_dump({"train": {"repeats": 2}}))
    repeat1 = sorted(timings.iterdir())
    before = fingerprint(repeat1)
    plan = snakemake(workdir, "-n", "--configfile", *REPEATS_CONFIGS)
    snakemake(workdir, "--configfile", *REPEATS_CONFIGS)
    return SimpleNamespace(workdir=workdir, results=smoke_run.results, configs=REPEATS_CONFIGS,
                           plan=plan.stdout + plan.stderr, repeat1_before=before,
                           repeat1_after=fingerprint(repeat1))


@pytest.fixture(scope="session")
def archive_server(tmp_path_factory):
    """A Food-101-shaped archive served over HTTP on 127.0.0.1: (url, sha256)."""
    root = tmp_path_factory.mktemp("www")
    make_synthetic.main(root / "food-101.tar.gz", classes=4, train_per_class=12, test_per_class=4,
                        max_side=96, seed=1, workers=2)
    digest = hashlib.sha256((root / "food-101.tar.gz").read_bytes()).hexdigest()
    with served(root) as base:
        yield f"{base}/food-101.tar.gz", digest


@pytest.fixture(scope="session")
def downloaded_run(tmp_path_factory, archive_server):
    """The smoke pipeline with its archive downloaded instead of generated (run `http`).

    Only eager mode trains: the data path (download, extract, file lists, DALI) is what differs from
    the quick start, and it is the same for every compile mode; the four modes are trained by
    `smoke_run`. The copy's config.yaml is cut to `none` (presets add modes, never remove any).
    """
    url, digest = archive_server
    workdir = copy_workflow(tmp_path_factory.mktemp("pipeline"))
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config["modes"] = {"none": {}}
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    (workdir / "http.yaml").write_text(yaml.safe_dump(
        {"run": "http", "dataset": {"source": "food101", "url": url, "sha256": digest}}))
    snakemake(workdir, "--configfile", "configs/smoke.yaml", "http.yaml")
    return workdir
