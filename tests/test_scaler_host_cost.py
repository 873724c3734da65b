"""benchmarks/scaler_host_cost.py: the gradient scaler's host time per step beside the optimizer's."""

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "benchmarks" / "scaler_host_cost.py"), *args],
                          capture_output=True, text=True, cwd=REPO, timeout=600)


def test_both_variants_are_timed_on_the_jobs_model_and_optimizer():
    done = run("--configfile", "configs/smoke.yaml", "--steps", "20", "--warmup", "2", "--classes", "4")
    assert done.returncode == 0, done.stderr
    assert re.search(r"^resnet18 on cpu, 62 parameter tensors, SGD \(foreach\), 20 steps each", done.stdout, re.M)
    times = {name: (float(cpu), float(wall)) for name, cpu, wall in re.findall(
        r"^  (optimizer step|scaler and step) +host CPU +([\d.]+) us per step, wall +([\d.]+) us", done.stdout, re.M)}
    assert set(times) == {"optimizer step", "scaler and step"} and all(c > 0 and w > 0 for c, w in times.values())
    extra = float(re.search(r"torch.amp.GradScaler's host cost: ([+-][\d.]+) us per step", done.stdout).group(1))
    assert abs(extra - (times["scaler and step"][0] - times["optimizer step"][0])) < 0.2
    assert "FusedLossScaler" not in done.stdout  # foreach SGD on the CPU: no fused scaler to time


def test_tiny_parameters_leave_the_hosts_overhead_alone():
    done = run("--configfile", "configs/smoke.yaml", "--device", "cpu", "--tiny", "--steps", "20", "--warmup", "2")
    assert done.returncode == 0, done.stderr
    assert "resnet18 on cpu, 62 parameter tensors of 8 elements, SGD (foreach)" in done.stdout
    assert "torch.amp.GradScaler's host cost:" in done.stdout


def test_fused_sgd_times_our_fused_scaler_beside_torchs():
    done = run("--configfile", "configs/smoke.yaml", "--device", "cpu", "--tiny", "--fused", "--steps", "200",
               "--warmup", "20")
    assert done.returncode == 0, done.stderr
    assert "62 parameter tensors of 8 elements, SGD (fused)" in done.stdout
    cpu = {name: float(value) for name, value in re.findall(
        r"^  (optimizer step|scaler and step|fused scaler and step) +host CPU +([\d.]+) us", done.stdout, re.M)}
    assert set(cpu) == {"optimizer step", "scaler and step", "fused scaler and step"}
    costs = {name: float(value) for name, value in re.findall(
        r"^  (torch.amp.GradScaler|train.FusedLossScaler)'s host cost: ([+-][\d.]+) us", done.stdout, re.M)}
    assert set(costs) == {"torch.amp.GradScaler", "train.FusedLossScaler"}


def test_bad_counts_are_named():
    done = run("--configfile", "configs/smoke.yaml", "--steps", "0")
    assert done.returncode == 1 and "--steps and --warmup must be at least 1" in done.stderr
