"""The presets in configs/ pass the pipeline's configuration checks and plan the jobs they promise
(Snakemake dry runs in a copy of the workflow: nothing is generated or trained)."""

import yaml

from snakemake_runs import REPO, copy_workflow, planned_jobs, snakemake

SYNTHETIC = "configs/synthetic-food101.yaml"
DECODER_CPU = "configs/synthetic-food101-decoder-cpu.yaml"
DATA = "resources/synthetic-c101-750+250-px512-seed0"


def test_every_preset_is_valid_and_plans_its_run(tmp_path):
    workdir = copy_workflow(tmp_path)
    full = planned_jobs(workdir, SYNTHETIC)
    assert full["train"] == 4 and full["make_synthetic"] == 1, full
    overlay = planned_jobs(workdir, SYNTHETIC, DECODER_CPU)
    assert overlay == full  # same data and jobs, only the loader and the run name differ
    done = snakemake(workdir, "-n", "-p", "--configfile", SYNTHETIC, DECODER_CPU)
    text = done.stdout + done.stderr
    assert "results/synthetic-food101-decoder-cpu/timings/reduce-overhead.csv" in text
    assert f"{DATA}/filelists/all.txt" in text  # the synthetic preset's data, shared


def test_decoder_cpu_overlay_changes_only_the_loader_and_the_run():
    overlay = yaml.safe_load((REPO / DECODER_CPU).read_text())
    assert set(overlay) == {"run", "loader"}
    assert overlay["loader"]["decoder"] == "cpu"
    assert overlay["run"] != yaml.safe_load((REPO / SYNTHETIC).read_text())["run"]
