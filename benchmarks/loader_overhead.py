"""Is the loader out of the way? Per compile mode: images/s fed by DALI vs on one synthetic batch.

Uses the training job's own code (workflow/scripts/train.py): same model, optimizer, step and DALI
pipeline. Per mode it compiles once, warms up, then alternates blocks of synthetic-batch steps and
DALI-fed steps (so drift on the host hits both alike) and reports the medians and their ratio. It
also times DALI alone, and a timm-style step (fp16 autocast without a gradient scaler, foreach SGD,
a host sync after every step, as timm's benchmark.py --bench train does) on the same compiled model.

    python benchmarks/loader_overhead.py --configfile configs/synthetic-food101.yaml \
        --modes none default reduce-overhead max-autotune --out results/loader_overhead.csv
    python benchmarks/loader_overhead.py --configfile ... --dali-only --hw-loads 0 0.75 1 --threads 8 12
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gzip
import json
import os
import re
import resource
import signal
import statistics
import subprocess
from collections import defaultdict
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow" / "scripts"))

import train  # noqa: E402
from sysinfo import versions  # noqa: E402


def load_config(configfiles: list[str]) -> dict:
    """config.yaml with presets merged over it, as Snakemake's --configfile does (nested update)."""
    def merge(base, over):
        for key, value in over.items():
            if isinstance(value, dict) and isinstance(base.get(key), dict):
                merge(base[key], value)
            else:
                base[key] = value
        return base

    config = yaml.safe_load((REPO / "config.yaml").read_text())
    for path in configfiles:
        merge(config, yaml.safe_load(Path(path).read_text()))
    return config


def data_paths(config: dict) -> tuple[Path, Path]:
    d = config["dataset"]
    if d["source"] == "food101":
        name = "food101"
    else:
        s = d["synthetic"]
        name = (f"synthetic-c{s['classes']}-{s['train_per_class']}+{s['test_per_class']}"
                f"-px{s['max_side']}-seed{s['seed']}")
    root = REPO / "resources" / name
    return root / "filelists" / f"{d['split']}.txt", root / "food-101" / "images"


def timed(device, fn) -> float:
    train.synchronize(device)
    start = time.perf_counter()
    fn()
    train.synchronize(device)
    return time.perf_counter() - start


def process_cpu_s() -> float:
    """CPU seconds used so far by all of this process's threads (user and system)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# per role of thread and step (train.thread_stats): CPU time, run-queue wait, switches, migrations
ROLES, THREAD_FIELDS = train.THREAD_ROLES, train.THREAD_FIELDS
thread_stats, thread_deltas = train.thread_stats, train.thread_deltas


def run_steps(step, batches, steps: int, device=None, stream: str = "default") -> tuple[float, float, float]:
    """Run `steps` steps on the CUDA stream `stream` names (train.training_stream); return the main
    thread's CPU seconds, its seconds waiting for batches, and all threads' CPU seconds."""
    iterator = iter(batches)
    cpu, fetch, everything = time.thread_time(), 0.0, process_cpu_s()
    with train.training_stream(device or torch.device("cpu"), stream):
        for _ in range(steps):
            before = time.perf_counter()
            images, labels = next(iterator)
            fetch += time.perf_counter() - before
            step(images, labels)
    return time.thread_time() - cpu, fetch, process_cpu_s() - everything


# a loader epoch after epoch; one that gives no batch is an error, not an endless loop
endless = train.endless


class RotatingBatches:
    """`count` different batches made once on the device, yielded in turn: like the fixed synthetic
    batch but too large together to stay in the GPU's L2 cache, as real batches are."""

    def __init__(self, fixed: train.SyntheticLoader, count: int):
        self.batches = [(torch.randn_like(fixed.batch), fixed.labels.roll(i)) for i in range(count)]

    def __iter__(self):
        yield from self.batches


def timm_style_step(model, device, lr: float):
    """timm benchmark.py's train step: autocast, no scaler, foreach SGD, a sync every step."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4, foreach=True)

    def step(images, labels):
        torch.compiler.cudagraph_mark_step_begin()
        optimizer.zero_grad()
        with torch.autocast(device.type, dtype=torch.float16):
            loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        train.synchronize(device)
        return loss.detach()

    return step


def parse_feed(text: str) -> tuple[str, dict]:
    """'dali', 'dali:threads=4,fetch=thread', 'synthetic:stream=side-high', 'synthetic-rotating',
    'dali-fetch-only' -> (kind, overrides)."""
    kind, _, rest = text.partition(":")
    if kind not in ("dali", "synthetic", "synthetic-rotating", "dali-fetch-only"):
        raise SystemExit(f"unknown feed {text!r}: use dali[:key=value,...], dali-fetch-only[:key=value,...], "
                         "synthetic or synthetic-rotating")
    overrides = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        overrides[key] = yaml.safe_load(value)
    return kind, overrides


PIPELINE_KEYS = {"set_affinity", "exec_dynamic"}  # DALI Pipeline arguments, not loader settings
BURN_KEYS = {"burn", "burn_duty", "burn_kind"}  # CPU load beside the feed's steps (Burners), any feed


# a burner: busy `duty` of every 5 ms, with arithmetic (spin) or copying 1 MiB slices in turn through
# 64 MiB of buffers (memory: the shared cache and memory bandwidth, as reading and copying files do);
# it dies with the benchmark (Linux's PR_SET_PDEATHSIG), even a killed one
BURNER = """
import ctypes, sys, time
ctypes.CDLL(None).prctl(1, 9)
kind, duty, period = sys.argv[1], float(sys.argv[2]), 0.005
if kind == "memory":
    import numpy as np
    a, b = np.ones(4 << 20), np.empty(4 << 20)
    slices = [slice(i, i + (1 << 17)) for i in range(0, 4 << 20, 1 << 17)]
    turn = [0]
    def work():
        s = slices[turn[0]]
        np.copyto(b[s], a[s])
        turn[0] = (turn[0] + 1) % len(slices)
else:
    def work():
        x = 0
        for i in range(500):
            x += i * i
print("ready", flush=True)
while True:
    start = time.perf_counter()
    while time.perf_counter() - start < duty * period:
        work()
    if duty < 1:
        time.sleep((1 - duty) * period)
"""


class Burners:
    """`count` processes keeping CPUs busy `duty` of the time, only while on (SIGCONT/SIGSTOP): does
    any CPU work beside the training threads slow a step as much as DALI's threads do, or is it
    DALI's in particular? Separate processes: no GIL, no CUDA, no DALI in them."""

    def __init__(self, count: int, duty: float = 1.0, kind: str = "spin"):
        burn_settings({"burn": count, "burn_duty": duty, "burn_kind": kind})
        self.processes = [subprocess.Popen([sys.executable, "-c", BURNER, kind, str(duty)], stdout=subprocess.PIPE,
                                           text=True) for _ in range(count)]
        for process in self.processes:  # set up (numpy imported, buffers made) before being stopped
            if process.stdout.readline().strip() != "ready":
                self.close()
                raise RuntimeError(f"a burner process ended before it was ready (exit {process.wait()})")
        self.stop()

    def _signal(self, sig) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.kill(process.pid, sig)

    def start(self) -> None:
        self._signal(signal.SIGCONT)

    def stop(self) -> None:
        self._signal(signal.SIGSTOP)

    def close(self) -> None:
        for process in self.processes:
            process.kill()
            process.wait()
            process.stdout.close()

    @contextlib.contextmanager
    def on(self):
        self.start()
        try:
            yield
        finally:
            self.stop()


def burn_settings(overrides: dict) -> tuple[int, float, str] | None:
    """A feed's burn=N,burn_duty=D,burn_kind=K, checked, as Burners' arguments (None without burn)."""
    if "burn" not in overrides:
        if set(overrides) & BURN_KEYS:
            raise SystemExit(f"{', '.join(sorted(set(overrides) & BURN_KEYS))} without burn=N")
        return None
    count, duty, kind = overrides["burn"], overrides.get("burn_duty", 1.0), overrides.get("burn_kind", "spin")
    if (not isinstance(count, int) or isinstance(count, bool) or count < 1 or not isinstance(duty, (int, float))
            or not 0 < duty <= 1 or kind not in ("spin", "memory")):
        raise SystemExit(f"burn={count!r},burn_duty={duty!r},burn_kind={kind!r}: use burn=N (processes, 1 "
                         "or more), burn_duty between 0 and 1, burn_kind spin or memory")
    return count, duty, kind


def split_overrides(overrides: dict) -> tuple[dict, dict, dict, str | None]:
    """A DALI feed's overrides as (loader settings, decoder options, DALI Pipeline arguments, CUDA
    stream): `decoder.NAME=VALUE` is an argument of DALI's decoder (loader.decoder_options),
    `reader.NAME=VALUE` one of its file reader (loader.reader_options, among the loader settings),
    `stream` the training step's stream (train.cuda_stream), set_affinity and exec_dynamic go to
    DALI's Pipeline, every other key is a `loader` setting."""
    loader, options, pipeline, stream = {}, {}, {}, None
    for key, value in overrides.items():
        if key.startswith("decoder."):
            options[key[len("decoder."):]] = value
        elif key.startswith("reader."):  # an argument of DALI's file reader (loader.reader_options)
            loader.setdefault("reader_options", {})[key[len("reader."):]] = value
        elif key in PIPELINE_KEYS:
            pipeline[key] = value
        elif key in BURN_KEYS:
            continue  # the benchmark's own load beside the steps (Burners), nothing of the loader's
        elif key == "stream":
            stream = value
        else:
            loader[key] = value
    return loader, options, pipeline, stream


def make_feed(text: str, config: dict, filelist, images_dir, device, classes: int, images: int):
    kind, overrides = parse_feed(text)
    t = config["train"]
    fixed = train.build_loader(filelist, images_dir, {**t, "loader": "synthetic"}, config["loader"],
                               device, classes, images)
    if kind == "synthetic":
        return fixed
    if kind == "synthetic-rotating":
        return RotatingBatches(fixed, int(overrides.get("count", 16)))
    settings, options, pipeline, _ = split_overrides(overrides)
    loader = {**config["loader"], **settings}
    loader["decoder_options"] = {**(loader.get("decoder_options") or {}), **options}
    # merged over the config's, as Snakemake merges a chosen overlay's
    loader["reader_options"] = {**(config["loader"].get("reader_options") or {}), **settings.get("reader_options", {})}
    dali = train.dali_loader(filelist, images_dir, t, loader, device, **pipeline)
    return FetchOnly(dali, fixed) if kind == "dali-fetch-only" else dali


class FetchOnly:
    """Fetches every DALI batch as the dali feed does, but steps on the fixed synthetic batch: what
    the fetching costs the step, apart from what the batches' contents and addresses do."""

    def __init__(self, dali: train.DaliLoader, fixed: train.SyntheticLoader):
        self.dali, self.fixed = dali, fixed

    def __iter__(self):
        for _ in self.dali:
            yield self.fixed.batch, self.fixed.labels


def union_us(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Merge overlapping (start, end) intervals."""
    merged: list[list[float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


def length_us(intervals) -> float:
    return sum(end - start for start, end in intervals)


def overlap_us(a, b) -> float:
    """Length of the intersection of two merged interval lists."""
    total, i, j = 0.0, 0, 0
    while i < len(a) and j < len(b):
        total += max(0.0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def short_kernel_name(name: str, width: int = 70) -> str:
    """A CUDA kernel's name without template arguments and parameters, cut to `width`."""
    depth, out = 0, []
    for char in name:
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(char)
    short = "".join(out).strip().replace(";", ",")
    short = short.split(" ")[-1] if " " in short else short  # drop a return type: "void f" -> "f"
    return short[:width] or name[:width]


def trace_summary(trace: dict, steps: int, marker: str = "timed-steps") -> dict:
    """Per step, from a PyTorch profiler (Kineto) chrome trace of `steps` steps inside `marker`:
    wall time, GPU time on the training stream (the stream with the most kernel time), the
    training stream's idle time, the other streams' GPU time (DALI's) and how much of it ran
    beside the training stream's, and the CUDA runtime calls that took longest on the main thread
    and on all other threads (DALI's, the autograd engine's)."""
    events = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X" and "dur" in e]
    window = next(e for e in events if e.get("name") == marker and e.get("cat") == "user_annotation")
    t0, t1, main_tid = window["ts"], window["ts"] + window["dur"], window["tid"]
    inside = [e for e in events if t0 <= e["ts"] <= t1]
    streams = defaultdict(list)
    for e in inside:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            streams[e.get("args", {}).get("stream")].append((e["ts"], e["ts"] + e["dur"]))
    row = {"ms_per_step": round(window["dur"] / steps / 1e3, 3)}
    if streams:
        merged = {stream: union_us(intervals) for stream, intervals in streams.items()}
        training = max(merged, key=lambda stream: length_us(merged[stream]))
        others = union_us([iv for stream, ivs in merged.items() if stream != training for iv in ivs])
        busy = length_us(merged[training])
        row.update({
            "gpu_training_stream_ms_per_step": round(busy / steps / 1e3, 3),
            "training_stream_idle_ms_per_step": round((window["dur"] - busy) / steps / 1e3, 3),
            "gpu_other_streams_ms_per_step": round(length_us(others) / steps / 1e3, 3),
            "gpu_other_beside_training_ms_per_step": round(overlap_us(merged[training], others) / steps / 1e3, 3),
            "kernels_per_step": round(len(streams[training]) / steps, 1),
            "other_streams": len(merged) - 1,
        })
        kernels = defaultdict(lambda: [0.0, 0])
        for e in inside:
            if e.get("cat") == "kernel" and e.get("args", {}).get("stream") != training:
                kernel = kernels[short_kernel_name(e["name"])]
                kernel[0] += e["dur"]
                kernel[1] += 1
        top = sorted(kernels.items(), key=lambda item: -item[1][0])[:6]
        row["other_streams_top_kernels"] = "; ".join(
            f"{name} {us / steps / 1e3:.3f} ms x{count / steps:.1f}" for name, (us, count) in top)
    calls = {"main": defaultdict(float), "other": defaultdict(float)}
    for e in inside:
        if e.get("cat") == "cuda_runtime" or e.get("cat") == "cuda_driver":
            calls["main" if e["tid"] == main_tid else "other"][e["name"]] += e["dur"]
    for thread, totals in calls.items():
        top = sorted(totals.items(), key=lambda item: -item[1])[:5]
        row[f"cuda_calls_{thread}_thread"] = "; ".join(f"{name} {us / steps / 1e3:.3f}" for name, us in top)
    return row


def profile_feed(step, source, steps: int, device, stream: str, path: Path) -> dict:
    """Profile `steps` steps (PyTorch profiler, CPU and CUDA activity); write the trace to `path`
    (gzipped chrome trace) and return trace_summary's numbers."""
    return profile_steps(lambda count: run_steps(step, source, count, device, stream), steps, device, path)


def profile_steps(run, steps: int, device, path: Path) -> dict:
    """profile_feed for any `run(count)` that runs `count` steps: 5 steps first, unprofiled."""
    from torch.profiler import ProfilerActivity, profile, record_function

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    run(5)
    train.synchronize(device)
    with profile(activities=activities) as prof:
        with record_function("timed-steps"):
            run(steps)
            train.synchronize(device)
    plain = path.with_suffix("")  # name.json
    prof.export_chrome_trace(str(plain))
    trace = json.loads(plain.read_text())
    with open(plain, "rb") as src, gzip.open(path, "wb") as dst:
        dst.write(src.read())
    plain.unlink()
    return trace_summary(trace, steps)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "_", text).strip("_")


def our_step(config: dict, mode: str, device: torch.device, classes: int, *, model: torch.nn.Module | None = None,
             loss_scaler: str = "fused"):
    """(model, step): the training job's model, compiled under `mode` (none: eager), and its step.
    `model`: another model (on `device`, in training mode) in place of the job's torchvision one;
    loss_scaler: the job's ("fused"), "torch" (torch.amp.GradScaler) or "none" (train.make_train_step)."""
    t = config["train"]
    torch.manual_seed(t["seed"])
    train.use_cudnn_autotuner(device)  # as the training job does
    if model is None:
        model = train.build_model(t["model"], classes, device, t["channels_last"])
    optimizer = train.build_optimizer(model, t["optimizer"], device)
    kwargs = train.compile_kwargs({"mode": mode})
    if kwargs is not None:
        model = torch.compile(model, **kwargs)
    return model, train.make_train_step(model, optimizer, t["precision"], device, loss_scaler=loss_scaler)


def bench_mode(mode: str, config: dict, filelist, images_dir, *, feeds: list[str], steps: int, warmup: int,
               blocks: int, timm: bool, profile_dir: Path | None = None, profile_steps: int = 25,
               profile_feeds: list[str] | None = None, deadline: float | None = None) -> tuple[list[dict], list[dict]]:
    """Time `feeds` under `mode` (see the module's docstring). With `deadline` (a time.monotonic()
    value), no round of blocks starts after it (the first always runs): fewer rounds than
    `blocks` then, and each row says how many."""
    t, device = config["train"], torch.device(config["train"]["device"])
    images, classes = train.count_classes(filelist)
    torch._dynamo.reset()
    model, step = our_step(config, mode, device, classes)
    sources = {feed: endless(make_feed(feed, config, filelist, images_dir, device, classes, images))
               for feed in feeds}
    # the CUDA stream each feed's steps run on: stream=side|default, else the config's train.cuda_stream
    streams = {feed: parse_feed(feed)[1].get("stream", t.get("cuda_stream", "side")) for feed in feeds}
    # loader.pin_training (any feed, synthetic ones too: a fair one-batch reference): the CPUs the
    # training threads run on during the feed's blocks (pinned after the warm-up, as in the job)
    pins = {feed: train.training_cpus({**config["loader"], **split_overrides(parse_feed(feed)[1])[0]})
            for feed in feeds}
    burn = {feed: burn_settings(parse_feed(feed)[1]) for feed in feeds}  # checked before the compile
    first = sources[feeds[0]]
    compile_s = timed(device, lambda: run_steps(step, first, warmup, device, streams[feeds[0]]))
    for feed, source in sources.items():
        timed(device, lambda: run_steps(step, source, warmup, device, streams[feed]))
    rates: dict[str, list[float]] = {feed: [] for feed in feeds}
    host: dict[str, list[tuple]] = {feed: [] for feed in feeds}
    with contextlib.ExitStack() as burning:  # the burn feeds' processes end with the rounds
        burning.enter_context(train.gc_frozen())  # as the training job after its compile
        burners = {}
        for feed in feeds:
            burners[feed] = Burners(*burn[feed]) if burn[feed] else None
            if burners[feed]:
                burning.callback(burners[feed].close)
        for round_ in range(blocks):
            if round_ and deadline is not None and time.monotonic() > deadline:
                print(f"{mode:>16} stopped after {round_} of {blocks} rounds of blocks (--time-limit)", flush=True)
                break
            for feed, source in sources.items():  # alternate, so drift on the host hits every feed alike
                load = burners[feed].on() if burners[feed] else contextlib.nullcontext()
                with train.training_threads_on(pins[feed]), load:
                    threads, machine = thread_stats(), train.machine_cpu_ms()  # outside the timed window
                    seconds = timed(device, lambda: host[feed].append(run_steps(step, source, steps, device,
                                                                                  streams[feed])))
                    machine = train.machine_deltas(machine, train.machine_cpu_ms())  # before the slower /proc reads
                    host[feed][-1] += (thread_deltas(threads, thread_stats()) if threads else {}, machine)
                rates[feed].append(steps * t["batch_size"] / seconds)
    rows = []
    for feed, values in rates.items():
        cpu_ms = statistics.median(h[0] for h in host[feed]) / steps * 1e3
        fetch_ms = statistics.median(h[1] for h in host[feed]) / steps * 1e3
        process_ms = statistics.median(h[2] for h in host[feed]) / steps * 1e3
        # per role of thread, the median over blocks of each field, per step
        per_thread = {f"{role}_{field}_per_step": round(statistics.median(h[3][role][i] for h in host[feed]) / steps, 3)
                      for role in ROLES for i, field in enumerate(THREAD_FIELDS)} if host[feed][0][3] else {}
        # the machine's CPU time per step over all its CPUs: busy, steal (the hypervisor's), interrupts
        per_thread.update({f"machine_{field}_per_step": round(statistics.median(h[4][field] for h in host[feed]) / steps, 3)
                           for field in train.MACHINE_FIELDS if field in host[feed][0][4]})
        rows.append({"mode": mode, "feed": feed, "images_per_s": round(statistics.median(values), 1),
                     "images_per_s_min": round(min(values), 1), "images_per_s_max": round(max(values), 1),
                     "ms_per_step": round(steps * t["batch_size"] / statistics.median(values) / steps * 1e3, 3),
                     "host_cpu_ms_per_step": round(cpu_ms, 3), "fetch_ms_per_step": round(fetch_ms, 3),
                     "process_cpu_ms_per_step": round(process_ms, 3), **per_thread,
                     "warmup_s": round(compile_s, 1), "blocks": len(values)})
        print(f"{mode:>16} {feed:<36} {rows[-1]['images_per_s']:8.1f} images/s "
              f"({rows[-1]['ms_per_step']:.2f} ms/step; main thread CPU {cpu_ms:.2f} ms/step, "
              f"of which waiting for the batch {fetch_ms:.2f} ms; all threads' CPU {process_ms:.2f} ms/step)",
              flush=True)
        if "main_cpu_ms_per_step" in per_thread:
            print(" " * 17 + "per step, CPU / run-queue wait / switches voluntary+forced / migrations: " + "; ".join(
                f"{role} {per_thread[f'{role}_cpu_ms_per_step']:.2f} / {per_thread[f'{role}_runq_ms_per_step']:.2f} ms"
                f" / {per_thread[f'{role}_voluntary_switches_per_step']:.1f}+{per_thread[f'{role}_forced_switches_per_step']:.1f}"
                f" / {per_thread[f'{role}_migrations_per_step']:.1f}"
                for role in ROLES), flush=True)
        if "machine_steal_ms_per_step" in per_thread:
            print(" " * 17 + "per step, the machine's CPUs together: busy {machine_busy_ms_per_step:.2f} ms "
                  "(interrupts {machine_irq_ms_per_step:.2f}), steal {machine_steal_ms_per_step:.2f} ms".format(**per_thread)
                  + ("; TLB shootdowns {machine_tlb_shootdowns_per_step:.1f}, function-call interrupts "
                     "{machine_call_interrupts_per_step:.1f}".format(**per_thread)
                     if "machine_tlb_shootdowns_per_step" in per_thread and "machine_call_interrupts_per_step" in per_thread
                     else ""), flush=True)
    for feed in feeds[1:]:
        # each block's rate against the first feed's in the same round: drift between rounds cancels
        paired = [a / b for a, b in zip(rates[feed], rates[feeds[0]])]
        ratio = statistics.median(paired)
        rows.append({"mode": mode, "feed": f"{feed}/{feeds[0]}", "images_per_s": round(ratio, 4),
                     "images_per_s_min": round(min(paired), 4), "images_per_s_max": round(max(paired), 4),
                     "blocks": len(paired), "paired": " ".join(f"{value:.4f}" for value in paired)})
        print(f"{mode:>16} {feed + '/' + feeds[0]:<36} {ratio:.3f} (median of {len(paired)} paired blocks; "
              f"{min(paired):.3f}-{max(paired):.3f})", flush=True)
    profiles = []
    if profile_dir is not None:
        profile_dir.mkdir(parents=True, exist_ok=True)
        for feed in profile_feeds if profile_feeds is not None else feeds:
            path = profile_dir / f"{slug(mode)}-{slug(feed)}.json.gz"
            try:
                with train.training_threads_on(pins[feed]):
                    numbers = profile_feed(step, sources[feed], profile_steps, device, streams[feed], path)
            except Exception as err:  # a profiler failure must not cost the timings above
                print(f"{mode:>16} {feed:<36} profile failed: {err!r}", flush=True)
                continue
            profiles.append({"mode": mode, "feed": feed, "steps": profile_steps, **numbers, "trace": path.name})
            print(f"{mode:>16} {feed:<36} profile: " + ", ".join(f"{k} {v}" for k, v in numbers.items()),
                  flush=True)
    if timm:
        timm_step = timm_style_step(model, device, t["optimizer"]["lr"])
        run_steps(timm_step, sources[feeds[0]], warmup, device, streams[feeds[0]])
        timm_rates = [steps * t["batch_size"] / timed(device, lambda: run_steps(timm_step, first, steps, device,
                                                                                 streams[feeds[0]]))
                      for _ in range(blocks)]
        rows.append({"mode": mode, "feed": f"timm-style-{feeds[0]}",
                     "images_per_s": round(statistics.median(timm_rates), 1),
                     "images_per_s_min": round(min(timm_rates), 1),
                     "images_per_s_max": round(max(timm_rates), 1)})
        print(f"{mode:>16} {'timm-style-' + feeds[0]:<36} {rows[-1]['images_per_s']:8.1f} images/s", flush=True)
    print(f"{mode:>16} warm-up incl. compile {compile_s:.0f} s", flush=True)
    return rows, profiles


def bench_dali_alone(config: dict, filelist, images_dir, *, batches: int, threads: int, hw_load: float,
                     pipelines: int = 1) -> dict:
    t, device = config["train"], torch.device(config["train"]["device"])
    loader_cfg = {**config["loader"], "threads": threads, "hw_decoder_load": hw_load, "pipelines": pipelines}
    images, classes = train.count_classes(filelist)
    source = endless(train.build_loader(filelist, images_dir, t, loader_cfg, device, classes, images))
    for _ in range(20):
        next(source)
    seconds = timed(device, lambda: [next(source) for _ in range(batches)])
    rate = batches * t["batch_size"] / seconds
    shown = "" if pipelines == 1 else f" pipelines={pipelines}"
    print(f"DALI alone, {threads} threads, hw_decoder_load {hw_load}{shown}: {rate:.0f} images/s", flush=True)
    return {"mode": "-", "feed": f"dali-alone threads={threads} hw_decoder_load={hw_load}{shown}",
            "images_per_s": round(rate, 1)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configfile", nargs="*", default=[], help="presets merged over config.yaml")
    parser.add_argument("--modes", nargs="*", default=["none", "default", "reduce-overhead", "max-autotune"])
    parser.add_argument("--steps", type=int, default=150, help="steps per timed block")
    parser.add_argument("--blocks", type=int, default=3, help="timed blocks per feed (median reported)")
    parser.add_argument("--time-limit", type=float, metavar="SECONDS",
                        help="start no round of blocks, and no mode, after this many seconds from the start "
                             "(each mode keeps at least one round; its rows say how many ran): results are "
                             "written even on a host that lends a command a fixed time")
    parser.add_argument("--warmup", type=int, default=30, help="untimed steps per feed first")
    parser.add_argument("--feeds", nargs="*", default=["synthetic", "dali"],
                        help="what feeds the step, compared with the first: synthetic (one batch), "
                             "synthetic-rotating[:count=N] (N batches in turn), dali[:key=value,...] "
                             "(loader settings: threads, prefetch, hw_decoder_load, decoder, pipelines, "
                             "fetch, batches_per_fetch, reserve_cores, pin_training; "
                             "decoder.NAME=VALUE: an argument of DALI's decoder, e.g. "
                             "decoder.preallocate_width_hint=512; reader.NAME=VALUE: an argument of "
                             "DALI's file reader, e.g. reader.dont_use_mmap=true; DALI pipeline "
                             "arguments: set_affinity, exec_dynamic); every feed also takes "
                             "stream=side|default (the CUDA stream its steps run on; default: the "
                             "config's train.cuda_stream) and reserve_cores=N,pin_training=true (the "
                             "training threads on N cores of their own during its blocks, as the job "
                             "does after epoch 1: give it to a synthetic feed too, for a fair reference); "
                             "burn=N[,burn_duty=D][,burn_kind=spin|memory]: N processes busy D of the "
                             "time beside the feed's blocks (e.g. synthetic:burn=4,burn_duty=0.1: does "
                             "any CPU load slow the step as DALI's threads do?)")
    parser.add_argument("--no-timm-style", action="store_true", help="skip the timm-style step")
    parser.add_argument("--dali-only", action="store_true", help="only time DALI alone")
    parser.add_argument("--no-dali-alone", action="store_true",
                        help="skip timing DALI alone (with only synthetic feeds, DALI is then never loaded)")
    parser.add_argument("--threads", type=int, nargs="*", help="DALI threads to try (default: config)")
    parser.add_argument("--hw-loads", type=float, nargs="*", help="hw_decoder_load values (default: config)")
    parser.add_argument("--pipelines", type=int, nargs="*", help="DALI pipelines to try (default: config)")
    parser.add_argument("--profile", metavar="DIR",
                        help="also profile each feed (PyTorch profiler, CPU and CUDA): gzipped chrome traces "
                             "and DIR/profile.csv with GPU busy/idle time per step and the costliest CUDA calls")
    parser.add_argument("--profile-steps", type=int, default=25)
    parser.add_argument("--profile-feeds", nargs="*", help="feeds to profile (default: all)")
    parser.add_argument("--cuda-max-connections", type=int, metavar="N",
                        help="CUDA_DEVICE_MAX_CONNECTIONS for this run, 1-32 (default: the config's "
                             "train.cuda_max_connections; unset there: the environment's, else CUDA's 8)")
    parser.add_argument("--cuda-sync", choices=sorted(train.CUDA_SYNC_FLAGS),
                        help="how host threads wait for the GPU in this run (train.cuda_sync; default: "
                             "the config's, unset there: CUDA's auto)")
    parser.add_argument("--out", default="results/loader_overhead.csv")
    args = parser.parse_args(argv)

    deadline = time.monotonic() + args.time_limit if args.time_limit is not None else None
    config = load_config(args.configfile)
    # before anything touches the GPU: CUDA reads it when the context is created
    wanted = args.cuda_max_connections
    connections = train.cuda_max_connections(
        wanted if wanted is not None else config["train"].get("cuda_max_connections"))
    sync = train.cuda_sync(args.cuda_sync or config["train"].get("cuda_sync"),
                           train.check_device(config["train"]["device"]))
    filelist, images_dir = data_paths(config)
    print(f"{config['train']['model']}, batch {config['train']['batch_size']}, {config['train']['precision']}, "
          f"{filelist}; CUDA_DEVICE_MAX_CONNECTIONS {connections}; CUDA sync {sync}; {versions()}", flush=True)
    process = {"cuda_max_connections": connections, "cuda_sync": sync}
    rows, profiles = [], []
    for pipelines in [] if args.no_dali_alone else args.pipelines or [config["loader"].get("pipelines", 1)]:
        for threads in args.threads or [config["loader"]["threads"]]:
            for hw_load in args.hw_loads or [config["loader"]["hw_decoder_load"]]:
                rows.append(bench_dali_alone(config, filelist, images_dir, batches=300, threads=threads,
                                             hw_load=hw_load, pipelines=pipelines))
    if not args.dali_only:
        for mode in args.modes:
            if deadline is not None and time.monotonic() > deadline:
                print(f"{mode:>16} not run: past --time-limit", flush=True)
                continue
            timed_rows, profiled = bench_mode(
                mode, config, filelist, images_dir, feeds=args.feeds, steps=args.steps, warmup=args.warmup,
                blocks=args.blocks, timm=not args.no_timm_style,
                profile_dir=Path(args.profile) if args.profile else None, profile_steps=args.profile_steps,
                profile_feeds=args.profile_feeds, deadline=deadline)
            rows.extend(timed_rows)
            profiles.extend(profiled)
            # after every mode: a later mode's failure keeps these
            write_csv(args.out, [{**row, **process} for row in rows])
            if profiles:
                write_csv(Path(args.profile) / "profile.csv", profiles)
    write_csv(args.out, [{**row, **process} for row in rows])
    print(f"wrote {args.out}")


def write_csv(path, rows: list[dict]) -> None:
    fields = list(dict.fromkeys(key for row in rows for key in row))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
