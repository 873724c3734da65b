"""Faults produced for real: bad configs given to Snakemake, a damaged archive served over HTTP,
a DALI pipeline that cannot be built, a GPU that runs out of memory or is shared, and a pipeline
killed with SIGKILL in the middle of a training epoch (in the downloaded run of conftest.py)."""

import hashlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import tarfile
import time
from pathlib import Path

import pytest
import torch
import yaml

import make_synthetic
import train
from common import PipelineError
import snakemake_runs
from snakemake_runs import SNAKEMAKE, copy_workflow, fingerprint, job_stats, read_csv, served
from test_train import LOADER, dataset, settings  # noqa: F401  (dataset is a fixture)


def snakemake(workdir: Path, *args: str, timeout_s: float = 600) -> subprocess.CompletedProcess:
    """Snakemake in `workdir`, failing or not: these tests check how it fails."""
    return snakemake_runs.snakemake(workdir, *args, check=False, timeout_s=timeout_s)


# --- config: checked before any job starts ----------------------------------------------------


@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory) -> Path:
    return copy_workflow(tmp_path_factory.mktemp("config"))


def config_error(workdir: Path, settings_yaml: str) -> str:
    """What a user sees when planning the smoke pipeline with `settings_yaml` over it."""
    (workdir / "bad.yaml").write_text(settings_yaml)
    done = snakemake(workdir, "-n", "results/smoke/timings/none.csv", "--configfile", "configs/smoke.yaml",
                     "bad.yaml")
    assert done.returncode != 0, done.stdout
    assert not (workdir / "resources").exists() and not (workdir / "results").exists()
    return done.stdout + done.stderr


@pytest.mark.parametrize(
    "settings_yaml, expected",
    [
        ("modes: {fast: {}}", "modes.fast: no `mode` given and 'fast' is not a torch.compile mode; "
         "set modes.fast.mode to one of ['default', 'max-autotune', 'max-autotune-no-cudagraphs', "
         "'none', 'reduce-overhead']"),
        ("modes: {fast: {mode: fastest}}", "modes.fast.mode: 'fastest' is not allowed; allowed values: "
         "none, default, reduce-overhead, max-autotune, max-autotune-no-cudagraphs, null"),
        ("train: {batchsize: 8}", "train: unknown key 'batchsize' (did you mean 'batch_size'?); "
         "allowed keys: model, image_size, batch_size, epochs"),
        ("mode: {fast: {}}", "(top level): unknown key 'mode' (did you mean 'modes'?)"),
        ("modes: {default: {fulgraph: true}}", "modes.default: unknown key 'fulgraph' (did you mean 'fullgraph'?)"),
        ("train: {batch_size: '8'}", "train.batch_size: '8' is a string, expected an integer"),
        ("train: {channels_last: 'yes'}", "train.channels_last: 'yes' is a string, expected true or false"),
        ("train: {batch_size: 0}", "train.batch_size: 0 is out of range; it must be >= 1"),
        ("train: {epochs: -1}", "train.epochs: -1 is out of range; it must be >= 1"),
        ("train: {precision: fp8}", "train.precision: 'fp8' is not allowed; allowed values: fp16, bf16, fp32"),
        ("loader: {hw_decoder_load: 1.5}", "loader.hw_decoder_load: 1.5 is out of range; it must be <= 1"),
        ("train: {batch_size: 65}", "train.batch_size 65 is larger than the synthetic dataset: 64 images "
         "(dataset.synthetic.classes 4 x 16 images per class in split 'all')"),
        ("{dataset: {split: train}, train: {batch_size: 49}}", "train.batch_size 49 is larger than the "
         "synthetic dataset: 48 images (dataset.synthetic.classes 4 x 12 images per class in split 'train')"),
    ],
    ids=["unknown-mode", "mode-enum", "misspelled-key", "misspelled-top-key", "misspelled-mode-key",
         "wrong-type", "wrong-type-bool", "zero-batch", "negative-epochs", "precision-enum", "above-maximum",
         "batch-over-synthetic-data", "batch-over-synthetic-train-split"],
)
def test_bad_config_is_named_before_any_job(workflow_copy, settings_yaml, expected):
    message = config_error(workflow_copy, settings_yaml)
    assert "invalid configuration" in message
    assert expected in message


def test_every_config_error_is_listed_at_once(workflow_copy):
    message = config_error(workflow_copy, "train: {batchsize: 8, epochs: 0}\nmodes: {x: {mode: y}}\n")
    lines = [line for line in message.splitlines() if line.startswith("  - ")]
    assert [line.split(":")[0] for line in lines] == ["  - modes.x.mode", "  - train", "  - train.epochs"]
    assert "ValidationError" not in message and "Failed validating" not in message  # no jsonschema dump


def test_batch_that_fits_synthetic_data_plans_fine(workflow_copy):
    (workflow_copy / "ok.yaml").write_text("train: {batch_size: 64}")
    target = "results/smoke/timings/none.csv"  # the check is the same for every target
    done = snakemake(workflow_copy, "-n", target, "--configfile", "configs/smoke.yaml", "ok.yaml")
    assert done.returncode == 0, done.stdout + done.stderr


# --- data: damaged images in a downloaded archive, as Snakemake shows them ----------------------


@pytest.fixture(scope="module")
def damaged_archive_url(tmp_path_factory):
    """A Food-101-shaped .tar.gz with one truncated JPEG, served on 127.0.0.1."""
    root = tmp_path_factory.mktemp("www")
    good = root / "good.tar"
    make_synthetic.main(good, classes=2, train_per_class=3, test_per_class=1, max_side=48, workers=1)
    with tarfile.open(good) as source, tarfile.open(root / "food-101.tar.gz", "w:gz") as damaged:
        truncated = None
        for member in source:
            data = source.extractfile(member).read() if member.isfile() else None
            if data is not None and member.name.endswith(".jpg") and truncated is None:
                data, truncated = data[: len(data) // 2], member.name
                member.size = len(data)
            damaged.addfile(member, io.BytesIO(data) if data is not None else None)
    digest = hashlib.sha256((root / "food-101.tar.gz").read_bytes()).hexdigest()
    with served(root) as base_url:
        yield f"{base_url}/food-101.tar.gz", digest, truncated.removeprefix("food-101/images/")


def test_damaged_image_fails_or_is_excluded_and_counted_on_the_terminal(tmp_path, damaged_archive_url):
    url, digest, truncated = damaged_archive_url
    workdir = copy_workflow(tmp_path)
    target = "resources/food101/filelists/report.json"
    dataset_yaml = {"source": "food101", "url": url, "sha256": digest}
    (workdir / "http.yaml").write_text(yaml.safe_dump({"dataset": dataset_yaml}))
    failed = snakemake(workdir, target, "--configfile", "configs/smoke.yaml", "http.yaml")
    assert failed.returncode != 0
    assert "PipelineError: 1 unreadable images" in failed.stderr
    assert f"{truncated}: truncated JPEG" in failed.stderr
    assert "Traceback" not in failed.stderr  # the cause, not a stack
    assert not (workdir / target).exists()

    (workdir / "http.yaml").write_text(yaml.safe_dump({"dataset": {**dataset_yaml, "on_bad_image": "exclude"}}))
    done = snakemake(workdir, target, "--configfile", "configs/smoke.yaml", "http.yaml")
    assert done.returncode == 0, done.stderr
    assert ("WARNING: excluded 1 unreadable images from the file lists (on_bad_image: exclude); names and "
            "reasons in resources/food101/filelists/report.json") in done.stderr
    report = json.loads((workdir / target).read_text())
    assert report["excluded_count"] == 1 and report["excluded"][0]["path"] == truncated
    assert report["counts"]["all"] == 7


# --- environment: DALI build against the driver, other GPU users --------------------------------


@pytest.mark.parametrize(
    "dali, driver, problem",
    [
        ("nvidia-dali-cuda120 2.4.0", (12, 0), None),
        ("nvidia-dali-cuda120 2.4.0", (13, 1), None),
        ("nvidia-dali-cuda110 1.30.0", (12, 4), None),
        ("nvidia-dali-cuda120 2.4.0", (11, 8), "the installed DALI build (nvidia-dali-cuda120 2.4.0) needs an "
         "NVIDIA driver supporting CUDA 12.0 or newer, but the driver supports CUDA 11.8: update the driver, "
         "or install the DALI build for CUDA 11 (nvidia-dali-cuda110, in envs/train.yaml)"),
        ("nvidia-dali-cuda130 2.4.0", (12, 9), "needs an NVIDIA driver supporting CUDA 13.0 or newer"),
        ("nvidia-dali-nightly-cuda130 2.5.0.dev", (12, 2), "supporting CUDA 13.0"),
        (None, (11, 0), None),  # DALI not from a wheel: nothing to compare
        ("nvidia-dali-cuda120 2.4.0", None, None),  # no driver: check_device has already failed
    ],
)
def test_dali_driver_problem(dali, driver, problem):
    found = train.dali_driver_problem(dali, driver)
    assert found == problem if problem is None else problem in found


@pytest.mark.parametrize(
    "torch_cuda, driver, note",
    [
        (None, (12, 4), "CPU-only build"),
        ("13.0", None, "no NVIDIA driver found"),
        ("13.0", (12, 4), "built for CUDA 13.0, but the NVIDIA driver supports only CUDA 12.4: update the "
         "driver, or install a PyTorch build for CUDA 12"),
        ("12.8", (12, 8), "CUDA_VISIBLE_DEVICES"),
    ],
)
def test_torch_driver_note(torch_cuda, driver, note):
    assert note in train.torch_driver_note(torch_cuda, driver)


def test_installed_dali_is_named_with_its_cuda():
    assert re.fullmatch(r"nvidia-dali-cuda\d{3} \S+", train.installed_dali())


def test_dali_driver_mismatch_fails_before_training(dataset, tmp_path, monkeypatch):  # noqa: F811
    """On a (pretended) GPU host whose driver is older than the DALI build: stop before any work."""
    monkeypatch.setattr(train, "check_device", lambda device: torch.device("cuda"))
    monkeypatch.setattr(train, "installed_dali", lambda: "nvidia-dali-cuda120 2.4.0")
    monkeypatch.setattr(train, "driver_cuda_version", lambda: (11, 4))
    monkeypatch.setattr(train, "gpu_driver", lambda: "470.82.01")
    monkeypatch.setattr(train, "build_loader", lambda *a, **k: pytest.fail("training started"))
    filelist, images = dataset
    with pytest.raises(PipelineError, match=r"nvidia-dali-cuda120 2.4.0.*CUDA 11.4.*driver 470.82.01"):
        train.main(filelist, images, tmp_path / "t.csv", tmp_path / "t.json", mode_name="none",
                   compile_settings=None, train=settings(device="cuda"), loader=LOADER)
    assert not (tmp_path / "t.csv").exists()


def test_dali_build_error_is_a_clear_pipeline_error(tmp_path):
    pipe = train.dali_pipeline(str(tmp_path / "missing.txt"), str(tmp_path), image_size=32, batch_size=2,
                               device=torch.device("cpu"), dtype="fp32", threads=1, prefetch=2,
                               hw_decoder_load=0.0, seed=0)
    with pytest.raises(PipelineError) as err:
        train.DaliLoader(pipe, channels_last=True)
    message = str(err.value)
    assert message.startswith("DALI could not build the input pipeline:")
    assert f"Cannot open: {tmp_path / 'missing.txt'}" in message
    assert "installed: nvidia-dali-cuda" in message and "NVIDIA driver" in message
    assert "C++ context" not in message


def test_other_gpu_users_are_warned_about(monkeypatch, caplog):
    monkeypatch.setattr(train, "gpu_other_processes", lambda: [4242, 4343])
    assert train.other_gpu_users(torch.device("cuda")) == [4242, 4343]
    assert any("PIDs [4242, 4343]" in r.getMessage() and "timings may be contaminated" in r.getMessage()
               and r.levelname == "WARNING" for r in caplog.records)
    monkeypatch.setattr(train, "gpu_other_processes", lambda: pytest.fail("asked nvidia-smi for a CPU run"))
    assert train.other_gpu_users(torch.device("cpu")) == []


def test_other_gpu_users_are_recorded_in_the_json(dataset, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setattr(train, "other_gpu_users", lambda device: [4242])
    filelist, images = dataset
    train.main(filelist, images, tmp_path / "t.csv", tmp_path / "t.json", mode_name="none", compile_settings=None,
               train=settings(loader="synthetic", epochs=1), loader=LOADER, progress=False)
    assert json.loads((tmp_path / "t.json").read_text())["gpu_other_processes"] == [4242]


# --- training: out of memory -----------------------------------------------------------------


def failing_step(error: BaseException):
    def make_train_step(*args, **kwargs):
        def step(images, labels):
            raise error
        return step
    return make_train_step


def compile_failure_from_oom() -> RuntimeError:
    """An error as torch.compile raises it when the compiled code ran out of memory while compiling."""
    try:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
    except torch.OutOfMemoryError as oom:
        try:
            raise RuntimeError("backend='inductor' raised: OutOfMemoryError") from oom
        except RuntimeError as wrapped:
            return wrapped


@pytest.mark.parametrize("error", [torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"),
                                   compile_failure_from_oom()], ids=["oom", "oom-inside-compile"])
def test_out_of_memory_names_mode_batch_and_peak(dataset, tmp_path, monkeypatch, error):  # noqa: F811
    monkeypatch.setattr(train, "make_train_step", failing_step(error))
    monkeypatch.setattr(train, "peak_gpu_mem_gib", lambda device: 71.25)
    filelist, images = dataset
    with pytest.raises(PipelineError) as err:
        train.main(filelist, images, tmp_path / "t.csv", tmp_path / "t.json", mode_name="max-autotune",
                   compile_settings=None, train=settings(loader="synthetic"), loader=LOADER, progress=False)
    assert str(err.value).startswith("mode max-autotune: out of GPU memory at train.batch_size 8 "
                                     "(peak 71.25 GiB allocated by PyTorch)")
    assert "lower train.batch_size" in str(err.value) and "--keep-going" in str(err.value)
    assert not (tmp_path / "t.csv").exists() and not (tmp_path / "t.json").exists()


def test_other_step_errors_pass_unchanged(dataset, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setattr(train, "make_train_step", failing_step(RuntimeError("shape mismatch")))
    filelist, images = dataset
    with pytest.raises(RuntimeError, match="^shape mismatch$"):
        train.main(filelist, images, tmp_path / "t.csv", tmp_path / "t.json", mode_name="none",
                   compile_settings=None, train=settings(loader="synthetic"), loader=LOADER, progress=False)


# --- training: one mode fails under --keep-going ---------------------------------------------

# torch.compile raises in the training job (InvalidBackend): a real failure of one mode, at once.
BROKEN_MODE = {"mode": "default", "backend": "no_such_backend"}
NUMBERS = ["epochs", "repeats", "epoch1_s", "epoch2_s", "steady_epoch_s", "compile_overhead_s",
           "speedup_vs_none", "loss_first_epoch", "loss_last_epoch"]


@pytest.mark.slow
def test_failed_mode_gets_a_partial_summary_and_a_rerun_completes_it(tmp_path):
    workdir = copy_workflow(tmp_path)
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config["modes"] = {"none": {}}  # presets add modes, never remove any: keep the test to two
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    results = workdir / "results" / "partial"
    plots = [results / "plots" / f"{name}.{ext}" for name in ["epoch_times", "speedup", "loss", "vs_article"]
             for ext in ["png", "svg"]]

    def run(modes: dict, *args: str) -> tuple[subprocess.CompletedProcess, str]:
        (workdir / "run.yaml").write_text(yaml.safe_dump({"run": "partial", "modes": modes}))
        done = snakemake(workdir, *args, "--configfile", "configs/smoke.yaml", "run.yaml")
        return done, done.stdout + done.stderr

    def by_mode() -> dict[str, dict]:
        return {row["mode"]: row for row in read_csv(results / "summary.csv")}

    def check_partial(failed: subprocess.CompletedProcess, output: str) -> None:
        assert failed.returncode != 0, output[-3000:]  # the run still failed
        assert "Invalid backend: 'no_such_backend'" in output
        assert ("Partial summary in results/partial/summary.md and results/partial/summary.csv: 1 of 2 "
                "training jobs finished; marked as failed: broken (results/partial/logs/train/broken.log)"
                in output)
        assert (results / "timings" / "none.csv").exists() and not (results / "timings" / "broken.csv").exists()
        rows = by_mode()
        assert {mode: row["status"] for mode, row in rows.items()} == {"none": "ok", "broken": "failed"}
        broken = rows["broken"]
        assert broken["log"] == "results/partial/logs/train/broken.log"
        assert broken["reason"].startswith("torch._dynamo.exc.InvalidBackend: Invalid backend: 'no_such_backend'")
        assert all(broken[col] == "" for col in NUMBERS)  # no numbers for the failed mode
        assert float(rows["none"]["epoch2_s"]) > 0 and float(rows["none"]["speedup_vs_none"]) == 1.0
        md = (results / "summary.md").read_text()
        assert "**Incomplete summary — failed: broken.**" in md
        assert "| broken (failed) | — | — | — | — | — |" in md
        assert "| broken | failed | torch._dynamo.exc.InvalidBackend: Invalid backend" in md
        assert "`results/partial/logs/train/broken.log`" in md
        # made only with a complete summary: their absence is what makes the next run redo it
        assert not (results / "repeats.csv").exists() and not any(p.exists() for p in plots)

    # 1. One mode fails: the other trains, a summary marks the failed one, the exit status says failure.
    check_partial(*run({"broken": BROKEN_MODE}, "--keep-going"))

    # 2. The mode removed from the config: the partial summary is newer than every input left, yet
    # the summary is made again, complete.
    output = run({}, "-n")[1]
    assert "reason: Missing output files: results/partial/repeats.csv" in output
    done, output = run({})
    assert done.returncode == 0, output[-3000:]
    assert list(by_mode()) == ["none"] and "status" not in read_csv(results / "summary.csv")[0]
    assert "Incomplete" not in (results / "summary.md").read_text()
    assert (results / "repeats.csv").exists() and all(p.exists() for p in plots)
    assert "Nothing to be done" in run({}, "-n")[1]

    # 3. The failing mode added to that complete run: the partial summary replaces it, the per-job table
    # and the plots of the complete one go, and the mode that had finished is not trained again.
    kept = fingerprint(sorted((results / "timings").iterdir()))
    check_partial(*run({"broken": BROKEN_MODE}, "--keep-going"))
    assert fingerprint(sorted((results / "timings").iterdir())) == kept
    # Removed again, the complete summary's per-job table is missing: the summary is redone.
    assert "reason: Missing output files: results/partial/repeats.csv" in run({}, "-n")[1]

    # 4. The mode fixed: only it trains, and the summary is complete again.
    fixed = {"broken": {"mode": "none"}}
    output = run(fixed, "-n")[1]
    stats = output.split("Job stats:", 1)[1]
    assert dict(re.findall(r"^(train|summary)\s+(\d+)\s*$", stats, re.M)) == {"train": "1", "summary": "1"}
    done, output = run(fixed)
    assert done.returncode == 0, output[-3000:]
    assert sorted(by_mode()) == ["broken", "none"] and "status" not in read_csv(results / "summary.csv")[0]
    assert "Incomplete" not in (results / "summary.md").read_text()
    assert all(p.exists() for p in plots)
    assert "Nothing to be done" in run(fixed, "-n")[1]


# --- training: a pipeline killed in the middle of an epoch -----------------------------------


def kill_during_last_mode(workdir: Path, targets: list[str], configs: list[str], results: Path, modes: list[str],
                          timeout_s: float = 300) -> str:
    """Run Snakemake and SIGKILL its whole process group once the last of `modes` to train is in epoch 2."""
    with open(workdir / "killed-run.log", "w") as log:
        run = subprocess.Popen([*SNAKEMAKE, "--cores", "2", *targets, "--configfile", *configs], cwd=workdir,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline and run.poll() is None:
            done = {p.stem for p in (results / "timings").glob("*.csv")} & set(modes)
            logs = {p.stem: p for p in (results / "logs" / "train").glob("*.log") if p.stem in modes}
            running = [mode for mode in logs if mode not in done]
            if len(done) == len(modes) - 1 and running and "INFO epoch 1:" in logs[running[0]].read_text():
                os.killpg(run.pid, signal.SIGKILL)
                run.wait()
                return running[0]
            time.sleep(0.05)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    raise AssertionError(f"no mode was caught mid-epoch:\n{(workdir / 'killed-run.log').read_text()[-3000:]}")


@pytest.mark.slow
def test_killed_training_reruns_only_that_mode(downloaded_run, tmp_path):
    """Two modes added to a finished run train in one Snakemake run, killed with SIGKILL while the
    second is in epoch 2: the first one's files and the run's earlier ones are kept untouched, the
    killed one leaves no partial file, and after --unlock only it trains again. (Eager variants of
    `none`: what is tested is Snakemake and the job's atomic outputs, not torch.compile.) It works on
    a copy of the shared downloaded run (times kept), which other tests read as it was left."""
    workdir = shutil.copytree(downloaded_run, tmp_path / "run", symlinks=True)
    config = yaml.safe_load((workdir / "http.yaml").read_text())
    added = ["eager-a", "eager-b"]
    config["modes"] = {mode: {"mode": "none"} for mode in added}
    (workdir / "kill.yaml").write_text(yaml.safe_dump(config))
    configs = ["configs/smoke.yaml", "kill.yaml"]
    results = workdir / "results" / "http"
    timings = results / "timings"
    before = fingerprint(sorted(timings.iterdir()))  # the run's own mode, trained before
    targets = [f"results/http/timings/{mode}.csv" for mode in ["none", *added]]
    killed = kill_during_last_mode(workdir, targets, configs, results, added)

    assert sorted(p.name for p in timings.iterdir()) == sorted(
        f"{mode}.{ext}" for mode in ["none", *added] if mode != killed for ext in ["csv", "json"])  # no partial file
    kept = fingerprint(sorted(timings.iterdir()))
    assert {name: kept[name] for name in before} == before

    locked = snakemake(workdir, *targets, "--configfile", *configs)
    assert locked.returncode != 0 and "--unlock" in locked.stdout + locked.stderr
    unlock = snakemake(workdir, "--unlock", "--configfile", *configs)
    assert unlock.returncode == 0, unlock.stderr
    plan = snakemake(workdir, "-n", *targets, "--configfile", *configs)
    assert job_stats(plan.stdout) == {"train": 1}
    assert f"timings/{killed}.csv" in plan.stdout

    rerun = snakemake(workdir, *targets, "--configfile", *configs)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert fingerprint([timings / name for name in kept]) == kept  # the other modes: not touched
    assert "INFO epoch 2:" in (results / "logs" / "train" / f"{killed}.log").read_text()
    assert len((timings / f"{killed}.csv").read_text().splitlines()) == 1 + 2
