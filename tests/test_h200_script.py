"""benchmarks/h200.sh, the driver of the lent GPU host's calls, run here on the CPU with the smoke
preset: a broken driver would waste a device session, so its stages are run for real."""

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from snakemake_runs import copy_workflow, read_csv

REPO = Path(__file__).resolve().parents[1]
DATA = "resources/synthetic-c4-12+4-px96-seed0"


def h200(workdir: Path, out: Path, budget: int, *stages: str, **env) -> subprocess.CompletedProcess:
    bin_dir = workdir / "bin"  # `python3` is this interpreter, as on the host after the bundle
    bin_dir.mkdir(exist_ok=True)
    if not (bin_dir / "python3").exists():  # a script, not a link: a venv's python finds its venv by its path
        (bin_dir / "python3").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        (bin_dir / "python3").chmod(0o755)
    environment = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "OUT": str(out),
                   "H200_CONFIGS": "configs/smoke.yaml", **env}
    return subprocess.run(["bash", "benchmarks/h200.sh", str(budget), *stages], cwd=workdir, env=environment,
                          capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def driven(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("h200"))
    shutil.copytree(REPO / "benchmarks", workdir / "benchmarks", ignore=shutil.ignore_patterns("__pycache__"))
    out = workdir / "out"
    # the training job detached (as a cold max-autotune's is, to outlive its call), then waited for
    done = h200(workdir, out, 600, "data", "dali-stages", "loader:none", "detach:train:none", "wait", "summary",
                H200_BLOCKS="2", H200_STEPS="2", H200_ALONE_THREADS="1",
                H200_FEEDS="synthetic dali synthetic:burn=1,burn_duty=0.2")
    return workdir, out, done


def test_stages_run_in_order(driven):
    workdir, out, done = driven
    log = (out / "h200.log").read_text()
    assert done.returncode == 0, done.stdout + done.stderr + log
    for stage in ("data", "dali-stages", "loader:none", "detach:train:none", "wait"):
        assert f"{stage}: exit 0" in log, log
    assert "Finished job" in (workdir / "results" / "detached.log").read_text()  # waited until it ended
    assert "summary: not all four modes trained yet" in log  # it would start the other modes' jobs
    assert (workdir / DATA / "filelists" / "all.txt").is_file()  # the preset's own dataset folder
    stages = read_csv(workdir / "results" / "dali_stages.csv")
    assert [row["stage"] for row in stages] == ["read", "decode", "resize", "normalize", "loader"]
    feeds = {row["feed"] for row in read_csv(workdir / "results" / "loader_none.csv")}
    assert {"synthetic", "dali", "synthetic:burn=1,burn_duty=0.2", "dali/synthetic"} <= feeds
    assert (workdir / "results" / "smoke" / "timings" / "none.csv").is_file()


def test_everything_measured_is_packed_for_the_trip_back(driven):
    workdir, out, _ = driven
    with tarfile.open(out / "results.tgz") as packed:
        names = set(packed.getnames())
    for name in ("results/dali_stages.csv", "results/loader_none.csv", "results/smoke/timings/none.csv",
                 "results/smoke/timings/none.json", f"{DATA}/filelists/all.txt"):
        assert name in names, sorted(names)[:20]
    assert (out / "dali_stages.csv").is_file() and (out / "loader_none.csv").is_file()


def test_an_unknown_stage_stops_the_call_before_anything_runs(driven):
    workdir, _, _ = driven
    out = workdir / "out-typo"
    done = h200(workdir, out, 100, "train:default", "loader:eager")
    assert done.returncode == 2 and "unknown stage loader:eager" in done.stderr
    done = h200(workdir, out, 100, "vs-timm-1p:reduce-overhead", "vs-timm-1p:eager")
    assert done.returncode == 2 and "unknown stage vs-timm-1p:eager" in done.stderr
    done = h200(workdir, out, 100, "detach:vs-timm-1p:max-autotune", "detach:vs-timm:none")
    assert done.returncode == 2 and "unknown stage detach:vs-timm:none" in done.stderr
    assert not out.exists() and not (workdir / "results" / "smoke" / "timings" / "default.csv").exists()


def test_done_stages_are_skipped_and_a_stage_that_would_not_fit_is_not_started(driven):
    workdir, _, _ = driven
    out = workdir / "out-again"
    done = h200(workdir, out, 100, "data", "dali-stages", "train:none", "train:default")
    log = (out / "h200.log").read_text()
    assert done.returncode == 0, done.stdout + done.stderr + log
    for stage in ("data", "dali-stages", "train:none"):
        assert f"{stage}: done before" in log
    assert "train:default: not started" in log and "needs ~270 s" in log
    assert not (workdir / "results" / "smoke" / "timings" / "default.csv").exists()


def test_a_tagged_loader_stage_and_our_step_against_itself_under_other_process_settings(driven):
    """H200_TAG repeats a done stage under other conditions; vs-timm alternates arms' processes."""
    workdir, _, _ = driven
    out = workdir / "out-tagged"
    done = h200(workdir, out, 600, "loader:none", "vs-timm:none", H200_TAG="again", H200_BLOCKS="1",
                H200_STEPS="2", H200_ALONE_THREADS="1", H200_FEEDS="synthetic dali:reader.dont_use_mmap=true",
                H200_VS_TIMM_ARMS="ours ours+cuda-defaults", H200_VS_TIMM_ROUNDS="2", H200_VS_TIMM_STEPS="2")
    log = (out / "h200.log").read_text()
    assert done.returncode == 0, done.stdout + done.stderr + log
    assert "loader:none: exit 0" in log and "vs-timm:none: exit 0" in log  # not "done before"
    feeds = {row["feed"] for row in read_csv(workdir / "results" / "loader_none-again.csv")}
    assert "dali:reader.dont_use_mmap=true/synthetic" in feeds
    rows = read_csv(workdir / "results" / "vs_timm_none.csv")
    assert [(row["round"], row["arm"]) for row in rows] == [
        ("1", "ours"), ("1", "ours+cuda-defaults"), ("2", "ours"), ("2", "ours+cuda-defaults"),
        ("median", "ours"), ("median", "ours+cuda-defaults")]
    assert all(float(row["images_per_s"]) > 0 for row in rows) and rows[-1]["rounds"] == "2"
    assert (out / "vs_timm_none.csv").is_file() and (out / "loader_none-again.csv").is_file()


@pytest.mark.skipif(not (REPO / ".gpu-extra" / "timm_benchmark.py").is_file()
                    or not list((REPO / ".gpu-extra").glob("timm-*.whl")),
                    reason="needs timm's benchmark.py and wheel in .gpu-extra (README, Comparing with timm)")
def test_the_one_process_comparison_with_timm_needs_neither_bundle_nor_data(tmp_path):
    pytest.importorskip("timm")  # the wheel's version installed here, so the driver installs nothing
    workdir = copy_workflow(tmp_path)
    shutil.copytree(REPO / "benchmarks", workdir / "benchmarks", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / ".gpu-extra", workdir / ".gpu-extra")
    hide = tmp_path / "hidden"  # no bundle: Snakemake cannot be imported, and there are no parts to unpack
    hide.mkdir()
    (hide / "snakemake.py").write_text("raise ImportError('not on this host')\n")
    out = workdir / "out"
    done = h200(workdir, out, 300, "vs-timm-1p:none", PYTHONPATH=str(hide), H200_VS_TIMM_1P_ROUNDS="2",
                H200_VS_TIMM_STEPS="2", H200_CLASSES="5", H200_VS_TIMM_1P_PROFILE="2",
                H200_VS_TIMM_1P_ALSO="ours:no-scaler")
    log = (out / "h200.log").read_text()
    assert done.returncode == 0 and "vs-timm-1p:none: exit 0" in log, done.stdout + done.stderr + log
    assert "bundle missing" not in log and "5 classes" in log
    rows = read_csv(out / "vs_timm_1p_none.csv")  # with the arm H200_VS_TIMM_1P_ALSO adds
    assert [row["arm"] for row in rows if row["round"] == "median"] == ["timm", "ours", "ours:no-scaler"]
    # then each arm under the profiler (H200_VS_TIMM_1P_PROFILE steps): its numbers come back, its
    # traces stay on the host
    assert [row["arm"] for row in read_csv(out / "vs_timm_1p_none-profile.csv")] == [
        "timm", "ours", "ours:no-scaler"]
    assert "profile ours:" in log and "USDT" not in log
    assert not (workdir / DATA).exists()
    # detached (a cold max-autotune outlasts a call): the stage runs in a process of its own,
    # which this call (and a later one) waits for; then the stage counts as done
    out = workdir / "out-detached"
    done = h200(workdir, out, 300, "detach:vs-timm-1p:default", "wait", "vs-timm-1p:default",
                PYTHONPATH=str(hide), H200_VS_TIMM_1P_ROUNDS="2", H200_VS_TIMM_STEPS="2", H200_CLASSES="5")
    log = (out / "h200.log").read_text()
    assert done.returncode == 0, done.stdout + done.stderr + log
    assert "detach:vs-timm-1p:default: exit 0" in log and "wait: exit 0" in log
    assert "vs-timm-1p:default: done before" in log and "bundle missing" not in log
    detached = (workdir / "results" / "detached.log").read_text()
    assert "vs-timm-1p:default: exit 0" in detached, detached
    rows = read_csv(workdir / "results" / "vs_timm_1p_default.csv")
    assert [row["arm"] for row in rows if row["round"] == "median"] == ["timm", "ours"]
    with tarfile.open(out / "results.tgz") as packed:
        assert "results/vs_timm_1p_default.csv" in packed.getnames()


def test_the_scalers_host_cost_needs_neither_bundle_nor_data(tmp_path):
    """scaler-cost: benchmarks/scaler_host_cost.py on the preset, its output in the call's log and
    kept (written once complete), so that a later call skips it."""
    workdir = copy_workflow(tmp_path)
    shutil.copytree(REPO / "benchmarks", workdir / "benchmarks", ignore=shutil.ignore_patterns("__pycache__"))
    hide = tmp_path / "hidden"  # no bundle: Snakemake cannot be imported, and there are no parts to unpack
    hide.mkdir()
    (hide / "snakemake.py").write_text("raise ImportError('not on this host')\n")
    out = workdir / "out"
    done = h200(workdir, out, 100, "scaler-cost", PYTHONPATH=str(hide), H200_SCALER_STEPS="5")
    log = (out / "h200.log").read_text()
    assert done.returncode == 0 and "scaler-cost: exit 0" in log, done.stdout + done.stderr + log
    assert "bundle missing" not in log and "resnet18 on cpu" in log and "torch.amp.GradScaler's host cost:" in log
    assert "torch.amp.GradScaler's host cost:" in (workdir / "results" / "scaler_host_cost.log").read_text()
    assert not (workdir / "results" / "scaler_host_cost.log.tmp").exists() and not (workdir / DATA).exists()
    done = h200(workdir, workdir / "out2", 100, "scaler-cost", PYTHONPATH=str(hide))
    assert "scaler-cost: done before" in (workdir / "out2" / "h200.log").read_text()
