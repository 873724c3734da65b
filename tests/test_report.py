"""What a paper cites, made by Snakemake from one smoke run with two repeats per mode in a temporary
folder (not a git checkout): the spread over repeats, provenance, the comparison with the article,
the Snakemake report and the archive, re-checked with coreutils and rerun from its own config.

The run is the README's quick start raised to two repeats (`repeats_run` in conftest.py, shared with
test_workflow.py): the repeat-2 jobs are separate training jobs, as on a GPU host.
"""

import json
import os
import subprocess
import tarfile
import zipfile

import pytest
import torch
import yaml
from PIL import Image

from snakemake_runs import MODES, SNAKEMAKE, planned_jobs, read_csv, snakemake

pytestmark = pytest.mark.slow
RUN = "smoke"


@pytest.fixture(scope="module")
def workdir(repeats_run):
    return repeats_run.workdir


@pytest.fixture(scope="module")
def configs(repeats_run):
    return repeats_run.configs


@pytest.fixture(scope="module")
def archived(workdir, configs, tmp_path_factory):
    """`snakemake --cores 1 archive` (which builds the report first), unpacked."""
    snakemake(workdir, "archive", "--configfile", *configs)
    out = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(workdir / "results" / f"{RUN}.tar.gz") as tar:
        names = tar.getnames()
        tar.extractall(out, filter="data")
    return out / RUN, names


def test_repeats_are_separate_jobs_summarised_with_their_spread(workdir):
    results = workdir / "results" / RUN
    for mode in MODES:
        assert (results / "timings" / f"{mode}.csv").exists()  # repeat 1 keeps today's name
        assert (results / "timings" / f"{mode}.rep2.json").exists()
    summary = read_csv(results / "summary.csv")
    assert [r["mode"] for r in summary] == MODES and {r["repeats"] for r in summary} == {"2"}
    for row in summary:
        low, mid, high = (float(row[f"steady_epoch_s{s}"]) for s in ("_min", "", "_max"))
        assert low <= mid <= high
    assert len(read_csv(results / "repeats.csv")) == 2 * len(MODES)
    md = (results / "summary.md").read_text()
    assert "Each mode ran 2 times" in md and "speedup vs none (min–max)" in md
    assert "## Compared with the article" in md
    assert "not expected to match: this run trained on the CPU" in md
    with Image.open(results / "plots" / "vs_article.png") as img:
        img.verify()


def test_provenance_of_the_run(workdir):
    results = workdir / "results" / RUN
    prov = json.loads((results / "provenance.json").read_text())
    assert prov["workflow"]["git_commit"] == "unknown" and prov["workflow"]["git_dirty"] == "unknown"
    assert prov["workflow"]["snakemake"]
    assert prov["software"]["torch"] == torch.__version__
    assert prov["hardware"]["device"] == "cpu"
    assert prov["hardware"]["cpu_cores"] == os.cpu_count()
    assert len(prov["training_jobs"]) == 2 * len(MODES)
    # importlib.metadata's version has no local "+cu130" part
    assert prov["python_packages"]["packages"]["torch"] == torch.__version__.split("+")[0]
    assert prov["config"]["train"]["repeats"] == 2
    assert yaml.safe_load((results / "config.yaml").read_text()) == prov["config"]
    assert f"# Provenance of run {RUN}" in (results / "provenance.md").read_text()


@pytest.mark.parametrize("name", ["report.zip", "report.html"])
def test_snakemake_report_builds(workdir, configs, name):
    # as a user types it: no --cores
    target = f"results/{RUN}/{name}"
    done = subprocess.run([*SNAKEMAKE, "--report", target, "--configfile", *configs], cwd=workdir,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    path = workdir / target
    if name.endswith(".zip"):
        with zipfile.ZipFile(path) as report:
            files = {n.rsplit("/", 1)[-1] for n in report.namelist()}
            html = report.read("report/report.html").decode()
        assert {"summary.md", "summary.csv", "repeats.csv", "speedup.png", "vs_article.png",
                "epoch_times.svg", "loss.png", "provenance.md", "none.rep2.csv"} <= files
    else:
        html = path.read_text()
    for text in ["Protocol of this run", "Article comparison", "Timings per job", "Provenance",
                 "Each mode ran 2 times: every number is the median"]:
        assert text in html, text


def test_archive_rechecks_and_reruns(workdir, configs, archived):
    unpacked, names = archived
    assert names[0] == f"{RUN}/SHA256SUMS" and names[1:] == sorted(names[1:])
    for member in ["report.zip", "provenance.json", "provenance.md", "config.yaml", "summary.md",
                   "repeats.csv", "timings/default.rep2.csv", "plots/vs_article.svg",
                   "envs/train.yaml", "envs/requirements.txt", "article/epoch_times.csv",
                   "data/filelists_report.json", "logs/train/default.rep2.log"]:
        assert (unpacked / member).is_file(), member
    check = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=unpacked, capture_output=True, text=True)
    assert check.returncode == 0 and "FAILED" not in check.stdout, check.stdout + check.stderr
    assert subprocess.run(["sha256sum", "-c", f"{RUN}.tar.gz.sha256"], cwd=workdir / "results").returncode == 0
    # the archived config reproduces the run: nothing to redo, and forcing one mode reruns only it
    assert planned_jobs(workdir, str(unpacked / "config.yaml")) == {}
    assert planned_jobs(workdir, str(unpacked / "config.yaml"), "--forcerun",
                        f"results/{RUN}/timings/default.csv") == {
        "train": 1, "summary": 1, "plots": 1, "vs_article": 1, "provenance": 1, "all": 1}
    # a second archive run has nothing to do
    again = snakemake(workdir, "-n", "archive", "--configfile", *configs)
    assert "Nothing to be done" in again.stdout + again.stderr
