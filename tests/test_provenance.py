"""provenance.py, archive.py and sysinfo's git and package facts on real files: a real git
repository, real training-job JSONs' format, a real tar.gz checked with coreutils' sha256sum."""

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

import archive
import provenance
import sysinfo
from common import PipelineError

VERSIONS = {"python": "3.11.7", "torch": "2.14.1", "torchvision": "0.29.1", "dali": "2.4.0",
            "cuda": "13.0", "cudnn": 91000, "gpu": "NVIDIA H200", "gpu_count": 1,
            "driver": "580.1", "cpu": "AMD EPYC", "cpu_cores": 16, "os": "Linux", "hostname": "gpu1"}
CONFIG = {"run": "r", "dataset": {"source": "synthetic", "split": "all", "synthetic": {"classes": 4}},
          "train": {"model": "resnet50", "repeats": 2, "optimizer": {"lr": 5.0e-5}},
          "modes": {"none": {}, "default": {}}}


def write_jsons(folder: Path, names=("none.json", "default.json", "none.rep2.json")) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        mode = name.split(".")[0]
        (folder / name).write_text(json.dumps({"mode": mode, "device": "cuda", "versions": VERSIONS}))
        paths.append(folder / name)
    return paths


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], cwd=repo,
                   check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "Snakefile").write_text("rule all:\n")
    git(repo, "add", "Snakefile")
    git(repo, "commit", "-q", "-m", "first")
    return repo


def test_git_state_of_a_checkout(repo):
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    assert sysinfo.git_state(repo) == {"commit": head, "dirty": False, "changed_files": []}
    (repo / "Snakefile").write_text("rule all:\n    input: 'x'\n")
    (repo / "new.py").write_text("")
    state = sysinfo.git_state(repo)
    assert state["commit"] == head and state["dirty"] is True
    assert state["changed_files"] == ["Snakefile", "new.py"]


def test_git_state_outside_a_checkout(tmp_path):
    assert sysinfo.git_state(tmp_path) == {"commit": "unknown", "dirty": "unknown", "changed_files": []}


def test_installed_packages_are_this_interpreters():
    packages = sysinfo.installed_packages()
    assert packages["pytest"] == pytest.__version__
    assert packages["PyYAML"] == yaml.__version__
    assert list(packages) == sorted(packages, key=str.lower)


def test_provenance_files(tmp_path, repo):
    jsons = write_jsons(tmp_path / "timings")
    filelists = tmp_path / "report.json"
    filelists.write_text(json.dumps({"images": 64, "excluded": 0}))
    out = tmp_path / "out"
    prov = provenance.main(jsons, out / "provenance.json", out / "provenance.md", out / "config.yaml",
                           run_name="r", config=CONFIG, workflow_dir=repo, snakemake_version="9.27.1",
                           filelists_report=filelists)
    saved = json.loads((out / "provenance.json").read_text())
    assert saved == json.loads(json.dumps(prov, default=str))
    assert saved["workflow"]["git_dirty"] is False and len(saved["workflow"]["git_commit"]) == 40
    assert saved["workflow"]["snakemake"] == "9.27.1"
    assert saved["software"] == {k: VERSIONS[k] for k in provenance.SOFTWARE_KEYS}
    assert saved["hardware"]["gpu"] == "NVIDIA H200" and saved["hardware"]["device"] == "cuda"
    assert [(j["mode"], j["repeat"]) for j in saved["training_jobs"]] == [
        ("none", 1), ("default", 1), ("none", 2)]
    assert saved["dataset"]["filelists"] == {"images": 64, "excluded": 0}
    assert saved["python_packages"]["packages"]["pytest"] == pytest.__version__
    # the resolved config round-trips exactly, so it can be fed back with --configfile
    assert yaml.safe_load((out / "config.yaml").read_text()) == CONFIG
    md = (out / "provenance.md").read_text()
    assert "| PyTorch | 2.14.1 |" in md and "| GPU | NVIDIA H200 |" in md
    assert f"| pytest | {pytest.__version__} |" in md
    assert "(clean)" in md


def test_provenance_flags_jobs_that_disagree(tmp_path):
    jsons = write_jsons(tmp_path / "timings")
    meta = json.loads(jsons[1].read_text())
    meta["versions"] = {**VERSIONS, "driver": "570.0"}
    jsons[1].write_text(json.dumps(meta))
    prov = provenance.build(jsons, run_name="r", config=CONFIG, workflow_dir=tmp_path,
                            snakemake_version="9")
    assert prov["hardware"]["driver"] == "differs between training jobs (see training_jobs)"
    assert prov["hardware"]["gpu"] == "NVIDIA H200"
    assert prov["workflow"]["git_commit"] == "unknown"
    assert "unknown (the workflow did not run from a git checkout)" in provenance.render_markdown(prov)


# ---------------------------------------------------------------- archive
def make_results(root: Path) -> Path:
    results = root / "results" / "r"
    for name in ["summary.md", "timings/none.csv", "timings/none.rep2.csv", "plots/speedup.png",
                 "logs/train/none.log", "logs/archive.log"]:
        (results / name).parent.mkdir(parents=True, exist_ok=True)
        (results / name).write_text(f"contents of {name}\n")
    (root / "train.yaml").write_text("dependencies: [python=3.11]\n")
    return results


def test_archive_holds_checksums_in_a_fixed_order(tmp_path):
    results = make_results(tmp_path)
    members = archive.archive_members(
        results, [results / "summary.md", results / "timings/none.csv", results / "timings/none.rep2.csv",
                  results / "plots/speedup.png"],
        extras={"envs/train.yaml": tmp_path / "train.yaml"}, skip=[results / "logs/archive.log"])
    out = tmp_path / "results" / "r.tar.gz"
    digest = archive.main(members, out, f"{out}.sha256", top="r")
    with tarfile.open(out) as tar:
        names = tar.getnames()
        assert all(m.uid == 0 and m.uname == "" and m.mode == 0o644 for m in tar.getmembers())
        tar.extractall(tmp_path / "x", filter="data")
    assert names == ["r/SHA256SUMS", "r/envs/train.yaml", "r/logs/train/none.log", "r/plots/speedup.png",
                     "r/summary.md", "r/timings/none.csv", "r/timings/none.rep2.csv"]
    # coreutils checks every file, and the archive itself against its .sha256
    check = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=tmp_path / "x" / "r",
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count(": OK") == 6
    assert subprocess.run(["sha256sum", "-c", "r.tar.gz.sha256"], cwd=out.parent).returncode == 0
    assert Path(f"{out}.sha256").read_text().split()[0] == digest
    # same files, same bytes
    again = archive.main(members, tmp_path / "again.tar.gz", top="r")
    assert again == digest


def test_archive_refuses_missing_files_and_outsiders(tmp_path):
    results = make_results(tmp_path)
    with pytest.raises(PipelineError, match="not under"):
        archive.archive_members(results, [tmp_path / "train.yaml"])
    with pytest.raises(PipelineError, match="missing file"):
        archive.archive_members(results, [results / "summary.csv"])
    assert not (tmp_path / "results" / "r.tar.gz").exists()


def test_archive_command_line(tmp_path):
    results = make_results(tmp_path)
    out = tmp_path / "r.tar.gz"
    subprocess.run([sys.executable, str(Path(archive.__file__)), str(results), "--out", str(out)],
                   check=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(Path(archive.__file__).parent)})
    with tarfile.open(out) as tar:
        assert "r/summary.md" in tar.getnames() and "r/SHA256SUMS" in tar.getnames()
