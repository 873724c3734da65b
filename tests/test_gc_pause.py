"""benchmarks/gc_pause.py: the cyclic collector's full collection with the heap as it is and frozen."""

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "benchmarks" / "gc_pause.py"), *args],
                          capture_output=True, text=True, cwd=REPO, timeout=600)


def test_a_frozen_heap_leaves_the_full_collection_almost_nothing_to_walk():
    """The training step on the CPU: as it is, the collector tracks torch's whole heap and a full
    collection walks it; frozen (as the job is after its compile), almost nothing is tracked and the
    collection is far cheaper. The steps watched print which full collections came due by themselves."""
    done = run("--configfile", "configs/smoke.yaml", "--image-size", "32", "--batch-size", "2",
               "--classes", "4", "--steps", "50", "--warmup", "2")
    assert done.returncode == 0, done.stderr
    lines = {m["heap"]: m for m in re.finditer(
        r"(?P<heap>as is|frozen): +(?P<tracked>[\d,]+) objects tracked, a full collection +(?P<ms>[\d.]+) ms; "
        r"due by itself in 50 steps: (?P<due>.+)", done.stdout)}
    assert set(lines) == {"as is", "frozen"}, done.stdout
    tracked = {heap: int(m["tracked"].replace(",", "")) for heap, m in lines.items()}
    assert tracked["as is"] > 100_000 and tracked["frozen"] < 1_000, done.stdout
    assert float(lines["frozen"]["ms"]) < float(lines["as is"]["ms"]) / 10, done.stdout
    assert "resnet18 under none on cpu, batch 2 at 32 px" in done.stdout


def test_bad_arguments_are_named():
    done = run("--steps", "0")
    assert done.returncode != 0 and "--steps, --warmup and --repeats must be at least 1" in done.stderr
