"""The presets in configs/ pass the pipeline's configuration checks and plan the jobs they promise
(Snakemake dry runs in a copy of the workflow: nothing is generated or trained)."""

import yaml

from snakemake_runs import REPO, copy_workflow, planned_jobs, snakemake

SYNTHETIC = "configs/synthetic-food101.yaml"
DECODER_CPU = "configs/synthetic-food101-decoder-cpu.yaml"
LOADER = "configs/synthetic-food101-loader.yaml"
TUNED = "configs/synthetic-food101-tuned.yaml"
LONG_CHECK = "configs/synthetic-food101-long-check.yaml"
OVERLAYS = {DECODER_CPU: "synthetic-food101-decoder-cpu", LOADER: "synthetic-food101-loader",
            TUNED: "synthetic-food101-tuned"}  # -> run name
# train settings an overlay may change: how the GPU is driven, not what is computed
THROUGHPUT_ONLY_TRAIN = {"cuda_stream", "cuda_max_connections", "cuda_sync"}
DATA = "resources/synthetic-c101-750+250-px512-seed0"


def test_every_preset_is_valid_and_plans_its_run(tmp_path):
    workdir = copy_workflow(tmp_path)
    full = planned_jobs(workdir, SYNTHETIC)
    assert full["train"] == 4 and full["make_synthetic"] == 1, full
    for path, run in OVERLAYS.items():
        overlay = planned_jobs(workdir, SYNTHETIC, path)
        assert overlay == full  # same data and jobs, only the loader and the run name differ
        done = snakemake(workdir, "-n", "-p", "--configfile", SYNTHETIC, path)
        text = done.stdout + done.stderr
        assert f"results/{run}/timings/reduce-overhead.csv" in text
        assert f"{DATA}/filelists/all.txt" in text  # the synthetic preset's data, shared
    assert planned_jobs(workdir, SYNTHETIC, LONG_CHECK) == full
    done = snakemake(workdir, "-n", "-p", "--configfile", SYNTHETIC, LONG_CHECK)
    text = done.stdout + done.stderr
    assert "results/synthetic-food101-long-check/timings/none.csv" in text and f"{DATA}/filelists/all.txt" in text


def test_the_long_check_changes_only_the_checks_length_and_the_run():
    overlay = yaml.safe_load((REPO / LONG_CHECK).read_text())
    assert overlay == {"run": "synthetic-food101-long-check", "train": {"upper_bound_steps": 3000}}
    assert yaml.safe_load((REPO / SYNTHETIC).read_text())["train"]["upper_bound_steps"] == 1000


def test_overlays_change_only_the_loader_and_the_run():
    runs = {yaml.safe_load((REPO / SYNTHETIC).read_text())["run"]}
    for path, run in OVERLAYS.items():
        overlay = yaml.safe_load((REPO / path).read_text())
        assert {"run", "loader"} <= set(overlay) <= {"run", "loader", "train"} and overlay["run"] == run
        assert set(overlay.get("train", {})) <= THROUGHPUT_ONLY_TRAIN
        runs.add(run)
    assert len(runs) == 1 + len(OVERLAYS)
    assert yaml.safe_load((REPO / DECODER_CPU).read_text())["loader"]["decoder"] == "cpu"
    loader = yaml.safe_load((REPO / LOADER).read_text())
    assert loader["train"] == {"cuda_max_connections": 32, "cuda_sync": None}
    assert loader["loader"]["decoder_options"] == {"preallocate_width_hint": 512, "preallocate_height_hint": 512}
    # the 2026-12-03f run's settings, the defaults but for the fetch (a thread, one training batch
    # a DALI batch, where the defaults now fetch inline in DALI batches of 4): the overlay keeps them fixed
    tuned = yaml.safe_load((REPO / TUNED).read_text())
    defaults = yaml.safe_load((REPO / "config.yaml").read_text())
    # and DALI mapping each file, where the defaults now read them (2026-12-05)
    fetch = {"fetch": "thread", "batches_per_fetch": 1, "reader_options": {"dont_use_mmap": False}}
    for kept in (tuned, loader):
        assert {key: kept["loader"][key] for key in fetch} == fetch
    assert {key: defaults["loader"][key] for key in fetch} == {
        "fetch": "inline", "batches_per_fetch": 4, "reader_options": {"dont_use_mmap": True}}
    for section in ("train", "loader"):
        assert {k: v for k, v in tuned[section].items() if k not in fetch} == {
            key: defaults[section][key] for key in tuned[section] if key not in fetch}
