"""What Python's cyclic collector costs the training step, with the heap as the job leaves it and
frozen as the job freezes it after its compile (workflow/scripts/train.py: gc_frozen).

Builds the training job's step under one mode (benchmarks/loader_overhead.py: our_step, one fixed
batch, no loader), warms it up, then for each heap (as it is; frozen) prints the objects the
collector tracks, one full collection's time (the least of --repeats), and the full collections
that came due by themselves in --steps steps, each with the step it fell in and its pause. On the
H100 of 2026-12-07f (docs/reference/h100/2026-12-07f/logs): 365,165-1,036,734 objects as is, a full
collection 195-591 ms, none due in 1,500-3,000 steps; frozen, none tracked, 0.01 ms.

    python benchmarks/gc_pause.py --configfile configs/synthetic-food101.yaml --mode default
    python benchmarks/gc_pause.py --configfile configs/smoke.yaml --image-size 32 --batch-size 2  # the CPU
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow" / "scripts"))
sys.path.insert(0, str(REPO / "benchmarks"))

import loader_overhead  # noqa: E402
import train  # noqa: E402


def full_collection_ms(repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        gc.collect()
        times.append((time.perf_counter() - start) * 1e3)
    return min(times)


def due_collections(step, batch, steps: int, device) -> list[tuple[int, float]]:
    """(step, ms) of each full collection the collector started by itself during `steps` steps."""
    found, started, at = [], [], [0]

    def watch(phase: str, info: dict) -> None:
        if info["generation"] == 2:
            if phase == "start":
                started.append(time.perf_counter())
            else:
                found.append((at[0], (time.perf_counter() - started.pop()) * 1e3))

    gc.callbacks.append(watch)
    try:
        for at[0] in range(1, steps + 1):
            step(*batch)
        train.synchronize(device)
    finally:
        gc.callbacks.remove(watch)
    return found


def report(heap: str, repeats: int, step, batch, steps: int, device) -> None:
    tracked = len(gc.get_objects())
    due = due_collections(step, batch, steps, device)  # first: a timed collection would reset the count
    pause = full_collection_ms(repeats)
    print(f"{heap:>9}: {tracked:>9,} objects tracked, a full collection {pause:8.2f} ms; due by itself in "
          f"{steps} steps: " + (", ".join(f"step {at} ({ms:.1f} ms)" for at, ms in due) or "none"), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configfile", nargs="*", default=[], help="presets merged over config.yaml")
    parser.add_argument("--mode", default="none", help="none (eager), default, reduce-overhead, max-autotune")
    parser.add_argument("--steps", type=int, default=3000, help="steps watched per heap")
    parser.add_argument("--warmup", type=int, default=20, help="untimed steps first (compiling included)")
    parser.add_argument("--repeats", type=int, default=3, help="full collections timed per heap (the least counts)")
    parser.add_argument("--classes", type=int, default=101)
    parser.add_argument("--image-size", type=int, help="over the config's train.image_size")
    parser.add_argument("--batch-size", type=int, help="over the config's train.batch_size")
    args = parser.parse_args()
    if args.steps < 1 or args.warmup < 1 or args.repeats < 1 or args.classes < 2:
        sys.exit("gc_pause: --steps, --warmup and --repeats must be at least 1, --classes at least 2")
    config = loader_overhead.load_config(args.configfile)
    t = config["train"]
    for key, value in (("image_size", args.image_size), ("batch_size", args.batch_size)):
        if value is not None:
            t[key] = value
    device = train.check_device(t["device"])
    _, step = loader_overhead.our_step(config, args.mode, device, args.classes)
    # the training job's one synthetic batch (train.loader: synthetic), as the other benchmarks feed it
    batch = next(iter(loader_overhead.make_feed("synthetic", config, None, None, device, args.classes,
                                                t["batch_size"])))
    for _ in range(args.warmup):
        step(*batch)
    train.synchronize(device)
    print(f"{t['model']} under {args.mode} on {device}, batch {t['batch_size']} at {t['image_size']} px, "
          f"Python {sys.version.split()[0]}, torch {torch.__version__}", flush=True)
    report("as is", args.repeats, step, batch, args.steps, device)
    with train.gc_frozen():
        report("frozen", args.repeats, step, batch, args.steps, device)


if __name__ == "__main__":
    main()
