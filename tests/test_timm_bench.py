"""benchmarks/timm_bench.py: timm's benchmark.py --bench train under a compile mode.

timm's benchmark.py is not in this repository (nor in timm's wheel): the tests that run it need a
copy at .gpu-extra/timm_benchmark.py and timm installed, and are skipped without them.
"""
import csv
import importlib.util
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("timm_bench", REPO / "benchmarks" / "timm_bench.py")
timm_bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(timm_bench)

SCRIPT = timm_bench.DEFAULT_SCRIPT
needs_timm = pytest.mark.skipif(
    importlib.util.find_spec("timm") is None or not SCRIPT.is_file(),
    reason=f"needs timm installed and timm's benchmark.py at {SCRIPT.relative_to(REPO)}",
)
ARGS = ["--bench", "train", "--model", "test_resnet", "-b", "4", "--img-size", "64", "--num-classes", "5",
        "--device", "cpu", "--no-retry", "--num-warm-iter", "2", "--num-bench-iter", "5"]


def test_missing_script_is_named(tmp_path):
    with pytest.raises(SystemExit, match="no timm benchmark.py at .*nowhere.py"):
        timm_bench.main(["--script", str(tmp_path / "nowhere.py"), *ARGS])


def test_script_with_some_of_the_added_options_is_refused(tmp_path):
    script = tmp_path / "benchmark.py"
    script.write_text(
        "import argparse\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--device')\n"
        "parser.add_argument('--no-retry', action='store_true')\n"
        "class BenchmarkRunner: pass\n"
        "def benchmark(args): return {}\n"
        "def _try_run(*args): return {}\n"
    )
    with pytest.raises(SystemExit, match="has --device, --no-retry but not --torchcompile,"):
        timm_bench.main(["--script", str(script), *ARGS])


def test_other_file_is_not_taken_for_the_benchmark(tmp_path):
    script = tmp_path / "benchmark.py"
    script.write_text("x = 1\n")
    with pytest.raises(SystemExit, match="is not timm's benchmark.py: it has no parser, benchmark"):
        timm_bench.main(["--script", str(script), *ARGS])


@needs_timm
def test_compiled_train_benchmark_writes_its_row(tmp_path):
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    out = tmp_path / "timm" / "default.csv"
    results = timm_bench.main([*ARGS, "--amp", "--amp-dtype", "bfloat16", "--channels-last",
                               "--torchcompile", "inductor", "--torchcompile-mode", "default",
                               "--cuda-sync", "blocking", "--stream", "side", "--results-file", str(out)])
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] >= 1  # the model really was compiled
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 1 and not list(out.parent.glob("*.tmp"))
    row = rows[0]
    assert row["compile_mode"] == "default" and row["backend"] == "inductor"
    assert row["precision"] == "amp" and row["amp_dtype"] == "bfloat16" and row["channels_last"] == "True"
    assert float(row["train_samples_per_sec"]) > 0 and row["train_batch_size"] == "4"
    assert row["benchmark_sha256"] == timm_bench.sha256(SCRIPT)
    assert results["train_samples_per_sec"] == float(row["train_samples_per_sec"])
    # our process settings, asked for, are recorded as what applied: nothing on the CPU
    assert row["cuda_sync"] == "none (cpu)" and row["stream"] == "none (cpu)"


@needs_timm
def test_no_retry_fails_instead_of_timing_a_smaller_batch(tmp_path):
    out = tmp_path / "none.csv"
    args = list(ARGS)
    args[args.index("--num-classes") + 1] = "0"  # no class to draw targets from: the step fails
    with pytest.raises(RuntimeError):
        timm_bench.main([*args, "--results-file", str(out)])
    assert not out.exists()
    args.remove("--no-retry")  # the script's own retries: smaller batches, then an error, no row
    with pytest.raises(SystemExit, match="the benchmark failed"):
        timm_bench.main([*args, "--results-file", str(out)])
    assert not out.exists()
