"""Train one torchvision model under one torch.compile setting; write per-epoch timings and compile facts.

The loop has no host synchronisation inside an epoch (losses stay on the device, fp16 loss scaling
uses a fused optimizer that reads the scaler's inf flag on the GPU), so what is timed is the model.
"""


import argparse
import contextlib
import csv
import ctypes
import gc
import importlib.metadata
import json
import logging
import math
import os
import queue
import re
import shutil
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

import torch
import torch.nn.functional as F
import torchvision
from tqdm import tqdm

from common import PipelineError, atomic_write, setup_cli_logging, snakemake_log, warn_user
from sysinfo import gpu_driver, gpu_other_processes, versions

log = logging.getLogger("train")

CSV_FIELDS = ["mode", "epoch", "epoch_s", "steps", "images", "images_per_s", "loss_mean", "loss_last"]
IMAGENET_MEAN_255 = [0.485 * 255, 0.456 * 255, 0.406 * 255]
IMAGENET_STD_255 = [0.229 * 255, 0.224 * 255, 0.225 * 255]
AUTOCAST_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": None}


# ----------------------------------------------------------------------------------------------
# Device and model
# ----------------------------------------------------------------------------------------------
def check_device(device: str) -> torch.device:
    """Fail before anything is built when the configured device is not there."""
    if device == "cuda" and not torch.cuda.is_available():
        raise PipelineError(
            f"train.device is 'cuda' but PyTorch sees no CUDA GPU (torch {torch.__version__}; "
            f"{torch_driver_note(torch.version.cuda, driver_cuda_version())}). "
            "On a machine without a GPU run the smoke config: "
            "snakemake --cores 1 --configfile configs/smoke.yaml (or set train.device: cpu)."
        )
    return torch.device(device)


def driver_cuda_version() -> tuple[int, int] | None:
    """Newest CUDA version the installed NVIDIA driver supports (cuDriverGetVersion); None without one."""
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    version = ctypes.c_int()
    if libcuda.cuDriverGetVersion(ctypes.byref(version)) != 0:
        return None
    return version.value // 1000, version.value % 1000 // 10


def cuda_text(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def torch_driver_note(torch_cuda: str | None, driver_cuda: tuple[int, int] | None) -> str:
    """Why PyTorch may see no GPU, from its CUDA build and the driver's CUDA version."""
    if torch_cuda is None:
        return "this PyTorch is a CPU-only build"
    if driver_cuda is None:
        return f"built for CUDA {torch_cuda}; no NVIDIA driver found (libcuda.so.1 cannot be loaded)"
    needed = tuple(int(part) for part in torch_cuda.split(".")[:2])
    if driver_cuda < needed:
        return (
            f"built for CUDA {torch_cuda}, but the NVIDIA driver supports only CUDA {cuda_text(driver_cuda)}: "
            f"update the driver, or install a PyTorch build for CUDA {driver_cuda[0]}"
        )
    return (f"built for CUDA {torch_cuda}, driver supports CUDA {cuda_text(driver_cuda)}; "
            "is CUDA_VISIBLE_DEVICES empty?")


def installed_dali() -> str | None:
    """The installed DALI wheel and version, e.g. 'nvidia-dali-cuda120 2.4.0'; its name says its CUDA."""
    for dist in importlib.metadata.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if re.fullmatch(r"nvidia-dali(-nightly|-weekly)?-cuda\d{3}", name):
            return f"{name} {dist.version}"
    return None


def dali_driver_problem(dali: str | None, driver_cuda: tuple[int, int] | None) -> str | None:
    """Why the installed DALI build cannot run on this driver; None if it can or either is unknown.

    DALI's cudaXY0 wheels run on any driver supporting CUDA X.Y or newer (enhanced compatibility).
    """
    match = re.search(r"cuda(\d+)(\d)\b", dali or "")
    if match is None or driver_cuda is None:
        return None
    needed = (int(match[1]), int(match[2]))
    if driver_cuda >= needed:
        return None
    return (
        f"the installed DALI build ({dali}) needs an NVIDIA driver supporting CUDA {cuda_text(needed)} "
        f"or newer, but the driver supports CUDA {cuda_text(driver_cuda)}: update the driver, or install "
        f"the DALI build for CUDA {driver_cuda[0]} (nvidia-dali-cuda{driver_cuda[0]}0, in envs/train.yaml)"
    )


def check_dali_matches_driver() -> None:
    """Fail before training when DALI's GPU pipeline cannot run on the installed driver."""
    problem = dali_driver_problem(installed_dali(), driver_cuda_version())
    if problem:
        raise PipelineError(f"{problem}; driver {gpu_driver() or 'version unknown'}")


def count_classes(filelist: str | Path) -> tuple[int, int]:
    """(images, classes) of a DALI file list of `<path> <label>` lines."""
    labels = set()
    images = 0
    with open(filelist) as handle:
        for line in handle:
            if line.strip():
                labels.add(int(line.rsplit(maxsplit=1)[1]))
                images += 1
    if images == 0:
        raise PipelineError(f"file list {filelist} is empty")
    return images, max(labels) + 1


def build_model(name: str, num_classes: int, device: torch.device, channels_last: bool) -> torch.nn.Module:
    try:
        model = torchvision.models.get_model(name, weights=None, num_classes=num_classes)
    except ValueError as err:
        raise PipelineError(f"train.model {name!r} is not a torchvision model: {err}") from err
    model = model.to(device)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    return model.train()


def use_cudnn_autotuner(device: torch.device) -> None:
    """cuDNN times its algorithms for each convolution shape once and keeps the fastest: the training
    job and the benchmarks that time its step alike (benchmarks/loader_overhead.py did not before
    2026-12-05)."""
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True


def build_optimizer(model: torch.nn.Module, settings: dict, device: torch.device, *,
                    fused: bool | None = None) -> torch.optim.Optimizer:
    # fused=True lets the loss scaler hand the optimizer its inf flag as a device tensor instead of
    # reading it on the host every step (a sync that costs ~10% under CUDA graphs). `fused`: over
    # the device's choice (fused on CUDA, foreach on the CPU), for benchmarks/scaler_host_cost.py.
    if fused is None:
        fused = device.type == "cuda"
    kind = {"fused": True} if fused else {"foreach": True}
    optimizer = torch.optim.SGD(
        model.parameters(),
        lr=settings["lr"],
        momentum=settings["momentum"],
        weight_decay=settings["weight_decay"],
        nesterov=settings["nesterov"],
        **kind,
    )
    zero_momentum_buffers(optimizer)
    return optimizer


def zero_momentum_buffers(optimizer: torch.optim.SGD) -> None:
    """Start SGD's momentum buffers at zero instead of letting the first step create them.

    Fused SGD creates them with torch.empty and, when the gradient scaler skips that first step
    (fp16 overflow, usual at the initial scale), never writes them: the next step then reads
    uninitialised memory and the weights turn NaN (seen on an H200, torch 2.11). With dampening 0,
    zero buffers give exactly the same updates as buffers created at the first step.
    """
    for group in optimizer.param_groups:
        if group["momentum"] == 0:
            continue
        for param in group["params"]:
            optimizer.state[param]["momentum_buffer"] = torch.zeros_like(param, memory_format=torch.preserve_format)


def compile_kwargs(settings: dict | None) -> dict | None:
    """torch.compile keyword arguments of a mode's settings; None means eager."""
    if settings is None or settings.get("mode") == "none":
        return None
    kwargs = {"backend": settings.get("backend", "inductor"), "fullgraph": settings.get("fullgraph", False)}
    if settings.get("dynamic") is not None:
        kwargs["dynamic"] = settings["dynamic"]
    if settings.get("options"):
        kwargs["options"] = dict(settings["options"])
    elif settings.get("mode") is not None:
        kwargs["mode"] = settings["mode"]
    return kwargs


@contextlib.contextmanager
def compile_cache(policy: str, mode_name: str) -> Iterator[dict]:
    """Where torch.compile keeps its compiled code during this job; yields the facts for the JSON.

    cold: a new, empty folder, deleted afterwards, so epoch 1 always holds a full compile,
    whatever ran before on the machine: comparable across modes, job order and reruns.
    shared: PyTorch's usual cache (TORCHINDUCTOR_CACHE_DIR or /tmp/torchinductor_<user>), warm
    when the same graph was compiled there before; the JSON records whether it was empty.
    """
    if policy == "shared":
        try:
            from torch._inductor.runtime.cache_dir_utils import cache_dir

            folder = Path(cache_dir())
        except (ImportError, OSError):
            folder = Path(os.environ.get("TORCHINDUCTOR_CACHE_DIR")
                          or Path(tempfile.gettempdir()) / f"torchinductor_{os.environ.get('USER', 'unknown')}")
        yield {"policy": "shared", "dir": str(folder),
               "was_empty": not folder.is_dir() or not any(folder.iterdir())}
        return
    saved = {key: os.environ.get(key) for key in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")}
    folder = tempfile.mkdtemp(prefix=f"inductor-{mode_name}-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = folder
    os.environ["TRITON_CACHE_DIR"] = os.path.join(folder, "triton")
    try:
        yield {"policy": "cold", "dir": folder, "was_empty": True}
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(folder, ignore_errors=True)


CONNECTIONS_ENV = "CUDA_DEVICE_MAX_CONNECTIONS"


def cuda_max_connections(value: int | None) -> str:
    """Apply train.cuda_max_connections before CUDA starts; return what applies, for the JSON.

    CUDA_DEVICE_MAX_CONNECTIONS is how many hardware work queues the GPU's streams are spread over
    (CUDA's default 8, at most 32). DALI uses many streams (its operators', the decoder's per
    thread, copies); beyond the queue count, streams share queues, and work of one stream can then
    wait behind unrelated work of another (false dependencies), e.g. a decoder kernel behind a
    training kernel. The variable is read when the CUDA context is created, so it is set here,
    before anything touches the GPU; None leaves the environment as it is.
    """
    current = os.environ.get(CONNECTIONS_ENV)
    if value is not None:
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 32:
            raise PipelineError(f"train.cuda_max_connections {value!r}: use a whole number from 1 to 32")
        if torch.cuda.is_initialized() and current != str(value):
            raise PipelineError(
                f"train.cuda_max_connections {value}: CUDA is already initialised in this process "
                f"({CONNECTIONS_ENV}={current or 'unset'}), so it would not take effect"
            )
        os.environ[CONNECTIONS_ENV] = current = str(value)
    return current if current is not None else "8 (CUDA's default)"


# CUDA context scheduling flags (cuda.h CU_CTX_SCHED_*): how a host thread waits for the GPU
CUDA_SYNC_FLAGS = {"auto": 0x00, "spin": 0x01, "yield": 0x02, "blocking": 0x04}
CUDA_SYNC_MASK = 0x07


def cuda_sync(policy: str | None, device: torch.device, driver=None) -> str | None:
    """Apply train.cuda_sync to the GPU's primary context before CUDA starts; return what applies.

    How a host thread waits for the GPU (cudaStreamSynchronize, cudaEventSynchronize, a full launch
    queue): spin (busy-wait, a CPU core at 100% while waiting), yield (busy-wait, yielding the core
    to other threads), blocking (sleep until the GPU signals), auto (CUDA's default: spin when the
    process has no more CUDA contexts than CPU cores, i.e. almost always). DALI's threads wait for
    the GPU every batch; spinning, they could take CPU time from the training threads that launch
    eager's and `default`'s kernels (on an H200 host blocking changed neither DALI's CPU time nor
    eager's rate measurably). The training loop itself never waits inside an epoch. PyTorch and
    DALI share the primary context, so the flag applies to both. None leaves it as it is (and
    does not call the driver); on the CPU nothing is done and None is returned (for the JSON).
    """
    if policy is not None and policy not in CUDA_SYNC_FLAGS:
        raise PipelineError(f"train.cuda_sync {policy!r}: use one of {', '.join(CUDA_SYNC_FLAGS)} (or null)")
    if device.type != "cuda":
        return None
    if policy is None:  # nothing to set: the driver is not asked
        return "not set (CUDA's default: auto)"
    if driver is None:
        try:
            driver = ctypes.CDLL("libcuda.so.1")
        except OSError as err:
            raise PipelineError(f"train.cuda_sync {policy}: cannot load the NVIDIA driver ({err})") from err

    def call(name: str, *args) -> None:
        status = getattr(driver, name)(*args)
        if status != 0:
            raise PipelineError(f"train.cuda_sync {policy}: {name} failed with CUDA driver error {status}")

    def state() -> tuple[int, bool]:
        flags, active = ctypes.c_uint(), ctypes.c_int()
        call("cuDevicePrimaryCtxGetState", handle, ctypes.byref(flags), ctypes.byref(active))
        return flags.value, bool(active.value)

    handle = ctypes.c_int()
    call("cuInit", 0)
    call("cuDeviceGet", ctypes.byref(handle), device.index or 0)
    flags, active = state()
    if flags & CUDA_SYNC_MASK != CUDA_SYNC_FLAGS[policy]:
        if active:
            raise PipelineError(
                f"train.cuda_sync {policy}: CUDA is already running in this process with another "
                "setting, so it would not take effect"
            )
        setter = "cuDevicePrimaryCtxSetFlags_v2" if hasattr(driver, "cuDevicePrimaryCtxSetFlags_v2") \
            else "cuDevicePrimaryCtxSetFlags"
        call(setter, handle, (flags & ~CUDA_SYNC_MASK) | CUDA_SYNC_FLAGS[policy])
        flags, _ = state()
    names = {value: name for name, value in CUDA_SYNC_FLAGS.items()}
    return names.get(flags & CUDA_SYNC_MASK, f"flags {flags & CUDA_SYNC_MASK:#x}")


# CUDA stream priority of train.cuda_stream side-high: the highest PyTorch offers (lower = higher)
HIGH_PRIORITY = -1


# the side streams made so far, one per device and priority (training_stream)
_SIDE_STREAMS: dict[tuple[torch.device, int], torch.cuda.Stream] = {}


@contextlib.contextmanager
def training_stream(device: torch.device, policy: str) -> Iterator[str]:
    """Run what is inside on the CUDA stream `policy` names; yields what was used, for the JSON.

    side: a stream of PyTorch's of its own (created non-blocking). On the legacy default stream,
    work that DALI or nvJPEG puts on blocking streams (or any synchronous CUDA call they make) is
    ordered with every training kernel around it, so the loader's GPU work lands on the step's
    critical path; a stream of its own lets the two overlap. side-high: the same at high
    priority, so that when DALI's kernels (resize, normalise) and the step's both wait for the
    GPU, the step's go first and DALI's fill the gaps (DALI has batches to spare: it runs ahead).
    default: the legacy default stream.

    The side stream is made once per process, device and priority, and every later block runs
    on the same one: PyTorch's caching allocator reuses freed memory only on the stream it was
    allocated on, so the benchmarks, which enter this once per block of steps, held a ResNet-50
    step's whole working set anew for each block on a new stream (3.2 GB more per 50-step block
    on an H100, 2026-12-07g) until the GPU was full and the allocator freed everything and
    retried (a stall of 0.2-0.4 s: the slow round 22/23 of the comparisons with timm), and paid
    the cudaMallocs of that working set in each block's first step. (The training job enters it
    once.)
    """
    if device.type != "cuda" or policy == "default":
        yield "default" if device.type == "cuda" else "none (cpu)"
        return
    priority = HIGH_PRIORITY if policy == "side-high" else 0
    key = (device, priority)
    if key not in _SIDE_STREAMS:
        _SIDE_STREAMS[key] = torch.cuda.Stream(device, priority=priority)
    stream = _SIDE_STREAMS[key]
    stream.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(stream):
        yield policy
    torch.cuda.current_stream(device).wait_stream(stream)


def cpu_cores(cpus: Iterable[int]) -> list[set[int]]:
    """`cpus` grouped by physical core (SMT siblings together, from sysfs), in CPU order."""
    cores: list[set[int]] = []
    seen: set[int] = set()
    wanted = set(cpus)
    for cpu in sorted(wanted):
        if cpu in seen:
            continue
        try:
            siblings = parse_cpu_list(
                Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list").read_text())
        except (OSError, ValueError):
            siblings = {cpu}
        core = (siblings & wanted) | {cpu}
        seen |= core
        cores.append(core)
    return cores


def loader_cpus(reserve_cores: int) -> set[int] | None:
    """The CPUs the loader's threads may use: this thread's CPUs less `reserve_cores` physical
    cores (their SMT siblings included), kept free for the training threads; None for 0 (no limit).

    Eager and `default` mode are bound by the host threads that launch their kernels (the main
    and the autograd thread); a DALI thread on the same core, or on its SMT sibling, could slow
    every launch (on a 16-core H200 host without SMT, 2 reserved cores made no difference beyond
    the host's noise).
    """
    if not isinstance(reserve_cores, int) or isinstance(reserve_cores, bool) or reserve_cores < 0:
        raise PipelineError(f"loader.reserve_cores {reserve_cores!r}: use a whole number of cores, 0 or more")
    if reserve_cores == 0:
        return None
    allowed = os.sched_getaffinity(0)
    cores = cpu_cores(allowed)
    if reserve_cores >= len(cores):
        raise PipelineError(
            f"loader.reserve_cores {reserve_cores}: this process may use {len(cores)} physical cores "
            f"(CPUs {cpu_list(allowed)}), so none would be left for the loader's threads; use fewer"
        )
    return set().union(*cores[reserve_cores:])


def training_cpus(loader: dict) -> set[int] | None:
    """loader.pin_training: the CPUs of the reserved cores (loader.reserve_cores), to which the
    training threads are pinned once the model is compiled; None when it is off."""
    pin = loader.get("pin_training", False)
    if not isinstance(pin, bool):
        raise PipelineError(f"loader.pin_training {pin!r}: use true or false")
    if not pin:
        return None
    reserve = loader.get("reserve_cores", 0)
    if not reserve:
        raise PipelineError(
            "loader.pin_training needs loader.reserve_cores 1 or more: the training threads are pinned "
            "to the cores kept free of the loader's threads"
        )
    return os.sched_getaffinity(0) - loader_cpus(reserve)


def training_thread_ids() -> list[int]:
    """The calling thread and PyTorch's autograd threads (pt_autograd_N, which run the backward
    pass of CUDA tensors; on the CPU the calling thread runs it)."""
    tids = [threading.get_native_id()]
    for name in sorted(os.listdir("/proc/self/task"), key=int):
        try:
            comm = Path("/proc/self/task", name, "comm").read_text().strip()
        except OSError:  # the thread ended meanwhile
            continue
        if comm.startswith("pt_autograd") and int(name) not in tids:
            tids.append(int(name))
    return tids


@contextlib.contextmanager
def training_threads_on(cpus: set[int] | None) -> Iterator[list[int]]:
    """Inside, the training threads (training_thread_ids) run on `cpus` only; yields their ids.
    After, each gets back the CPUs it had. None: nothing pinned.

    Pinned after the compile (not before: inductor's compile workers, started from the training
    thread, would inherit the few CPUs), so each wait for the GIL or the GPU resumes on a core
    whose caches the loader's threads do not share."""
    if cpus is None:
        yield []
        return
    saved: dict[int, set[int]] = {}
    for tid in training_thread_ids():
        try:
            before = os.sched_getaffinity(tid)
            os.sched_setaffinity(tid, cpus)
        except OSError:  # the thread ended meanwhile
            continue
        saved[tid] = before
    try:
        yield list(saved)
    finally:
        for tid, before in saved.items():
            try:
                os.sched_setaffinity(tid, before)
            except OSError:
                pass


def parse_cpu_list(text: str) -> set[int]:
    """{0, 1, 2, 3, 8} for '0-3,8' (Linux's CPU list format, as in sysfs and /proc)."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def cpu_list(cpus: Iterable[int]) -> str:
    """'0-3,8' for {0, 1, 2, 3, 8}."""
    runs: list[list[int]] = []
    for cpu in sorted(cpus):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


@contextlib.contextmanager
def thread_affinity(cpus: set[int] | None) -> Iterator[None]:
    """Run what is inside on `cpus` only (this thread's affinity); threads started inside inherit it."""
    if cpus is None:
        yield
        return
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, saved)


def fetched_on_thread(batches: Iterable, depth: int, device: torch.device,
                      cpus: set[int] | None = None) -> Iterator:
    """What `batches` yields, pulled up to `depth` items ahead on a thread of its own.

    The loader's host work (DALI's scheduling and output hand-over, the iterator's Python) then
    runs beside the training thread instead of between its steps. On CUDA the thread works on the
    caller's current stream, so DALI's outputs are imported (DLPack) with that stream waiting for
    them, as when they are fetched inline. Errors in the thread are raised here; leaving early
    stops the thread. With `cpus`, the thread runs on those CPUs only.
    """
    items: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    stream = torch.cuda.current_stream(device) if device.type == "cuda" else None
    end = object()

    def offer(item) -> bool:
        while not stop.is_set():
            try:
                items.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            if cpus is not None:
                os.sched_setaffinity(0, cpus)
            with torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext():
                for item in batches:
                    if not offer(item):
                        return
            offer((end, None))
        except BaseException as err:  # handed to the training thread, raised there
            offer((end, err))

    thread = threading.Thread(target=work, name="loader-fetch", daemon=True)
    thread.start()
    try:
        while True:
            item = items.get()
            if item[0] is end:
                if item[1] is not None:
                    raise item[1]
                return
            yield item
    finally:
        stop.set()
        thread.join()


# ----------------------------------------------------------------------------------------------
# Loaders: both yield (images NCHW in the model's memory format, int64 labels) on the device
# ----------------------------------------------------------------------------------------------
DALI_STAGES = ("read", "decode", "resize", "normalize")


def dali_pipeline(
    filelist: str,
    images_dir: str,
    *,
    image_size: int,
    batch_size: int,
    device: torch.device,
    dtype: str,
    threads: int,
    prefetch: int,
    hw_decoder_load: float,
    seed: int,
    resize_antialias: bool = True,
    decoder: str = "mixed",
    decoder_options: dict | None = None,
    reader_options: dict | None = None,
    decoder_affine: bool = True,
    shard_id: int = 0,
    num_shards: int = 1,
    until: str = "normalize",
    **pipeline_kwargs,
):
    """The DALI training pipeline: random-resized-crop decode, resize, flip, normalise, HWC.

    `until` (one of DALI_STAGES) ends it after that stage, for measuring what each stage costs
    (benchmarks/dali_stages.py): read gives the encoded files, decode the decoded crops, resize the
    resized ones; the labels come with each.

    With num_shards > 1 it reads shard `shard_id` of the file list (DaliLoader interleaves the
    shards' pipelines). `decoder_options` go to decoders.image_random_crop as they are (e.g.
    preallocate_width_hint), `reader_options` to readers.file (e.g. dont_use_mmap); one DALI does
    not take is a PipelineError naming it. decoder_affine
    False lets the hardware decoder's threads run where the thread building the pipeline may (by
    default DALI pins each to a CPU near the GPU). `pipeline_kwargs`
    go to DALI's Pipeline (benchmarks/loader_overhead.py tries set_affinity etc.).
    """
    from nvidia.dali import fn, pipeline_def, types

    gpu = device.type == "cuda"
    if decoder not in ("mixed", "cpu"):
        raise PipelineError(f"loader.decoder {decoder!r}: use mixed (GPU decoding) or cpu")
    gpu_decode = gpu and decoder == "mixed"
    if until not in DALI_STAGES:
        raise PipelineError(f"DALI pipeline stage {until!r}: use one of {', '.join(DALI_STAGES)}")

    @pipeline_def
    def food_pipeline():
        try:
            jpegs, labels = fn.readers.file(
                file_root=images_dir, file_list=filelist, random_shuffle=True, name="Reader",
                shard_id=shard_id, num_shards=num_shards, **(reader_options or {}),
            )
        except (KeyError, TypeError, ValueError, RuntimeError) as err:
            if not reader_options:
                raise
            reason = err.args[0] if err.args else err
            raise PipelineError(f"loader.reader_options {reader_options}: {reason}") from err

        def outputs(images):  # the labels' cast made last, as always: DALI seeds operators in order
            cast = fn.cast(labels, dtype=types.INT64)
            return images, (cast.gpu() if gpu else cast)

        if until == "read":
            return outputs(jpegs)
        decode_args = {"device": "mixed", "hw_decoder_load": hw_decoder_load} if gpu_decode else {"device": "cpu"}
        if gpu_decode:
            # preallocate so the decoder does not grow its buffers during the first epoch
            decode_args.update(device_memory_padding=211025920, host_memory_padding=140544512)
            if not decoder_affine:
                decode_args["affine"] = False
        decode_args.update(decoder_options or {})
        try:
            images = fn.decoders.image_random_crop(
                jpegs,
                output_type=types.RGB,
                random_aspect_ratio=[0.75, 4.0 / 3.0],
                random_area=[0.08, 1.0],
                num_attempts=100,
                **decode_args,
            )
        except (KeyError, TypeError, ValueError, RuntimeError) as err:
            if not decoder_options:
                raise
            reason = err.args[0] if err.args else err
            raise PipelineError(f"loader.decoder_options {decoder_options}: {reason}") from err
        if until == "decode":
            return outputs(images)
        if gpu and not gpu_decode:
            images = images.gpu()  # decoded and cropped on the CPU; resized and normalised on the GPU
        images = fn.resize(images, resize_x=image_size, resize_y=image_size, antialias=resize_antialias)
        if until == "resize":
            return outputs(images)
        # HWC output: permuting to NCHW in torch then gives channels_last strides at no cost
        images = fn.crop_mirror_normalize(
            images,
            dtype=types.FLOAT16 if dtype == "fp16" else types.FLOAT,
            output_layout="HWC",
            mean=IMAGENET_MEAN_255,
            std=IMAGENET_STD_255,
            mirror=fn.random.coin_flip(probability=0.5),
        )
        return outputs(images)

    return food_pipeline(
        batch_size=batch_size,
        num_threads=threads,
        device_id=(device.index or 0) if gpu else None,
        seed=seed,
        prefetch_queue_depth=prefetch,
        **pipeline_kwargs,
    )


class DaliLoader:
    """Iterates DALI pipelines as (images, labels) torch batches, dropping each one's last partial batch.

    Several pipelines (each reading its own shard of the file list) are taken from in turn, one
    batch each, until every one has ended its epoch: the shards together cover the file list each
    epoch. Each pipeline decodes on its own DALI threads and CUDA streams, so one pipeline's batch
    can wait on the GPU (e.g. behind the training step's kernels) while the others' go on.
    With `cpus` (loader_cpus), DALI's threads and the fetch thread run on those CPUs only.
    With `batches_per_fetch` k > 1 the pipelines make batches of k training batches (their
    batch size must be k times the training batch), each cut into k training batches (views, no
    copy): the fetch's per-batch host work (the iterator's Python, its GIL hand-overs, DALI's
    scheduling) is paid once every k steps. The last fetch of each shard gives what is left of it,
    cut into whole training batches: with one pipeline an epoch has as many steps as with k = 1
    (with several, each shard's own whole batches, where k = 1 gives each the smallest shard's).
    """

    def __init__(self, pipes, channels_last: bool, *, fetch: str = "inline", device: torch.device | None = None,
                 depth: int = 2, cpus: set[int] | None = None, batches_per_fetch: int = 1):
        from nvidia.dali.plugin.base_iterator import LastBatchPolicy
        from nvidia.dali.plugin.pytorch import DALIGenericIterator

        pipes = list(pipes) if isinstance(pipes, (list, tuple)) else [pipes]
        if fetch not in ("inline", "thread"):
            raise PipelineError(f"loader.fetch {fetch!r}: use inline or thread")
        check_batches_per_fetch(batches_per_fetch)
        if pipes[0].max_batch_size % batches_per_fetch:
            raise PipelineError(f"loader.batches_per_fetch {batches_per_fetch}: the pipelines' batch of "
                                f"{pipes[0].max_batch_size} is not a whole number of training batches")
        try:
            with thread_affinity(cpus):  # the threads DALI starts now inherit it
                for pipe in pipes:
                    pipe.build()
        except RuntimeError as err:
            raise PipelineError(dali_build_error(err)) from err
        self.images = pipes[0].reader_meta("Reader")["epoch_size"]  # the whole file list, not a shard
        batch_size = pipes[0].max_batch_size // batches_per_fetch
        if len(pipes) > 1 and self.images // len(pipes) < batch_size:
            raise PipelineError(
                f"loader.pipelines {len(pipes)}: each pipeline reads a shard of {self.images // len(pipes)} "
                f"images ({self.images} in all), fewer than a batch of {batch_size}; use fewer pipelines"
            )
        with thread_affinity(cpus):  # the iterators start the pipelines
            self._iterators = [
                DALIGenericIterator(
                    pipe,
                    ["images", "labels"],
                    reader_name="Reader",
                    # cut into training batches below, the rest of each shard dropped there
                    last_batch_policy=LastBatchPolicy.DROP if batches_per_fetch == 1 else LastBatchPolicy.PARTIAL,
                    auto_reset=True,
                )
                for pipe in pipes
            ]
        if batches_per_fetch == 1:
            self.steps_per_epoch = sum(len(iterator) for iterator in self._iterators)
        else:  # each shard's whole training batches (DALI's shard bounds: floor(i * images / shards))
            shards = len(pipes)
            self.steps_per_epoch = sum(
                ((i + 1) * self.images // shards - i * self.images // shards) // batch_size for i in range(shards)
            )
        self.batch_size = batch_size
        self.channels_last = channels_last
        self.fetch, self.device, self.depth = fetch, device or torch.device("cpu"), depth
        self.cpus = cpus

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        if self.fetch == "thread":
            return fetched_on_thread(self._batches(), self.depth, self.device, self.cpus)
        return self._batches()

    def _batches(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        running = [iter(iterator) for iterator in self._iterators]
        while running:
            for iterator in list(running):
                try:
                    batch = next(iterator)
                except StopIteration:  # this shard's epoch is over (the iterator resets itself)
                    running.remove(iterator)
                    continue
                fetched, labels = batch[0]["images"], batch[0]["labels"].view(-1)
                size = self.batch_size
                for start in range(0, fetched.shape[0] - size + 1, size):
                    images = fetched[start:start + size].permute(0, 3, 1, 2)  # NHWC storage, NCHW view
                    if not self.channels_last:
                        images = images.contiguous()
                    yield images, labels[start:start + size]


def check_batches_per_fetch(value) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise PipelineError(f"loader.batches_per_fetch {value!r}: use a whole number of training batches, 1 or more")
    return value


def dali_build_error(err: RuntimeError) -> str:
    """DALI's pipeline-build error without its C++ context, with the DALI build and the driver."""
    cause = str(err).split("encountered:", 1)[-1].split("C++ context:", 1)[0].strip()
    driver = driver_cuda_version()
    return (
        f"DALI could not build the input pipeline: {cause} "
        f"(installed: {installed_dali() or 'no nvidia-dali-cudaXXX wheel'}; NVIDIA driver "
        f"{'supports CUDA ' + cuda_text(driver) if driver else 'not found'})"
    )


class SyntheticLoader:
    """One batch made once on the device and yielded every step: no data loading at all."""

    def __init__(self, *, images: int, num_classes: int, batch_size: int, image_size: int,
                 device: torch.device, dtype: str, channels_last: bool, seed: int):
        generator = torch.Generator(device="cpu").manual_seed(seed)
        batch = torch.randn(batch_size, 3, image_size, image_size, generator=generator)
        if channels_last:
            batch = batch.contiguous(memory_format=torch.channels_last)
        self.batch = batch.to(device=device, dtype=torch.float16 if dtype == "fp16" else torch.float32)
        self.labels = torch.randint(0, num_classes, (batch_size,), generator=generator).to(device)
        self.images = images
        self.steps_per_epoch = images // batch_size

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        for _ in range(self.steps_per_epoch):
            yield self.batch, self.labels


# ----------------------------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------------------------
LOSS_SCALERS = ("fused", "torch", "none")


class FusedLossScaler:
    """fp16 loss scaling with torch.amp.GradScaler's math, its defaults and its ATen ops, for an
    optimizer that unscales the gradients inside its fused step (torch.optim.SGD(fused=True): it
    reads `grad_scale` and `found_inf` as device tensors and skips its update when found_inf is
    set), without GradScaler's per-step host work: no per-step state dicts, signature inspection,
    per-device grouping of the gradients, or new tensors for the inf flag, the check's scale, the
    flags' sum and the scale's product (on an H100, 2026-12-07h: 5 kernels a step fewer, and 73 us
    of host CPU a step in place of 336 us). Per step: the loss times the scale; the gradients
    checked for inf/NaN into one persistent flag (_amp_foreach_non_finite_check_and_unscale_ with a
    scale of 1, as GradScaler does for fused optimizers); the fused step; the scale backed off or
    grown (_amp_update_scale_). No host sync. What the two cost the host per step:
    benchmarks/scaler_host_cost.py."""

    @staticmethod
    def fits(optimizer: torch.optim.Optimizer) -> bool:
        """Whether `optimizer` unscales in its own step, as this scaler needs."""
        return getattr(optimizer, "_step_supports_amp_scaling", False)

    def __init__(self, optimizer: torch.optim.Optimizer, device: torch.device, *, init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5, growth_interval: int = 2000):
        if not self.fits(optimizer):
            raise ValueError(f"{type(optimizer).__name__} does not unscale in its step (fused=True does): "
                             "use torch.amp.GradScaler")
        self.optimizer = optimizer
        self.scale = torch.full((), init_scale, dtype=torch.float32, device=device)
        self.growth_tracker = torch.zeros((), dtype=torch.int32, device=device)
        self.found_inf = torch.zeros((), dtype=torch.float32, device=device)
        self._check_only = torch.ones((), dtype=torch.float32, device=device)  # scale 1: check, leave as is
        self._update = (growth_factor, backoff_factor, growth_interval)
        groups: dict[torch.dtype, list[torch.Tensor]] = {}  # the check takes one dtype per call
        for group in optimizer.param_groups:
            for param in group["params"]:
                groups.setdefault(param.dtype, []).append(param)
        self._params = list(groups.values())

    def scale_loss(self, loss: torch.Tensor) -> torch.Tensor:
        return loss * self.scale

    def step(self) -> None:
        """The optimizer's step unless a gradient is inf/NaN, then the scale's update."""
        self.found_inf.zero_()
        for params in self._params:
            grads = [param.grad for param in params if param.grad is not None]
            if grads:
                torch._amp_foreach_non_finite_check_and_unscale_(grads, self.found_inf, self._check_only)
        self.optimizer.grad_scale, self.optimizer.found_inf = self.scale, self.found_inf
        try:
            self.optimizer.step()
        finally:
            del self.optimizer.grad_scale, self.optimizer.found_inf
        torch._amp_update_scale_(self.scale, self.growth_tracker, self.found_inf, *self._update)


def make_train_step(model, optimizer, precision: str, device: torch.device, *,
                    loss_scaler: str = "fused") -> Callable:
    """A closure doing one optimisation step; returns the loss as a device tensor (no sync).
    fp16 scales the loss: with FusedLossScaler where the optimizer is fused (train.build_optimizer
    on CUDA), else with torch.amp.GradScaler. The benchmarks also ask for loss_scaler "torch"
    (GradScaler whatever the optimizer) and "none" (no loss scaling): what the scaler's calls cost
    the step (benchmarks/step_vs_timm.py --also; timm's step has no scaler). The closure's
    `loss_scaler` names the scaler that ran (None: none), its `loss_scale()` the scale now (a sync)."""
    if loss_scaler not in LOSS_SCALERS:
        raise ValueError(f"no such loss scaler {loss_scaler!r} (one of {', '.join(LOSS_SCALERS)})")
    autocast_dtype = AUTOCAST_DTYPES[precision]
    scaling = precision == "fp16" and loss_scaler != "none"
    use_cudagraph_marker = hasattr(torch.compiler, "cudagraph_mark_step_begin")
    if scaling and loss_scaler == "fused" and FusedLossScaler.fits(optimizer):
        fused = FusedLossScaler(optimizer, device)
        name, scale, finish, current_scale = "train.FusedLossScaler", fused.scale_loss, fused.step, lambda: fused.scale.item()
    else:
        scaler = torch.amp.GradScaler(device.type, enabled=scaling)
        name, scale, current_scale = "torch.amp.GradScaler" if scaling else None, scaler.scale, scaler.get_scale

        def finish() -> None:
            scaler.step(optimizer)
            scaler.update()

    def step(images: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        if use_cudagraph_marker:
            # tells CUDA-graph trees that the previous step's outputs are no longer needed
            torch.compiler.cudagraph_mark_step_begin()
        with torch.autocast(device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None):
            loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        scale(loss).backward()
        finish()
        return loss.detach()

    step.loss_scaler = name
    step.loss_scale = (lambda: float(current_scale())) if scaling else (lambda: None)
    return step


def caused_by_out_of_memory(err: BaseException | None) -> bool:
    """Whether `err` or an error behind it (torch.compile wraps errors raised while compiling) is an OOM."""
    while err is not None:
        if isinstance(err, torch.OutOfMemoryError):
            return True
        err = err.__cause__ or err.__context__
    return False


def peak_gpu_mem_gib(device: torch.device) -> float | None:
    return round(torch.cuda.max_memory_allocated(device) / 2**30, 3) if device.type == "cuda" else None


def allocator_facts(device: torch.device) -> dict:
    """The CUDA caching allocator's memory held now (GiB), its retries and its out-of-memory errors
    so far. A retry is an allocation that found no cached block and whose cudaMalloc failed, so the
    allocator freed every unused cached block (cudaFree, which waits for the whole device) and tried
    again: a stall of its own in whatever step it fell (on H100s, 0.2-0.4 s, when a new side stream
    per block had filled the GPU: training_stream). One that fails again raises an out-of-memory
    error, counted in `alloc_ooms` whether or not a caller catches it (cuDNN's benchmark mode
    catches those of algorithms whose workspace does not fit). {} off CUDA."""
    if device.type != "cuda":
        return {}
    stats = torch.cuda.memory_stats(device)
    return {"gpu_reserved_gib": round(stats.get("reserved_bytes.all.current", 0) / 2**30, 3),
            "alloc_retries": stats.get("num_alloc_retries", 0), "alloc_ooms": stats.get("num_ooms", 0)}


def out_of_memory_message(mode_name: str, batch_size: int, device: torch.device) -> str:
    peak = peak_gpu_mem_gib(device)
    total = (f" of {torch.cuda.get_device_properties(device).total_memory / 2**30:.1f} GiB"
             if device.type == "cuda" else "")
    return (
        f"mode {mode_name}: out of GPU memory at train.batch_size {batch_size} (peak "
        f"{'unknown' if peak is None else f'{peak} GiB'} allocated by PyTorch{total}): lower "
        "train.batch_size, or drop this mode; with --keep-going the other modes still run"
    )


def naming_out_of_memory(step: Callable, *, mode_name: str, batch_size: int, device: torch.device) -> Callable:
    """`step`, with an out-of-memory error turned into one naming the mode, batch size and peak memory."""

    def guarded(images: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        try:
            return step(images, labels)
        except Exception as err:
            if caused_by_out_of_memory(err):
                raise PipelineError(out_of_memory_message(mode_name, batch_size, device)) from err
            raise

    return guarded


def other_gpu_users(device: torch.device) -> list[int]:
    """PIDs of other processes on the GPU, with a warning: their work shares the timed GPU."""
    busy = gpu_other_processes() if device.type == "cuda" else []
    if busy:
        warn_user(f"other processes use the GPU (PIDs {busy}): timings may be contaminated; "
                  "recorded as gpu_other_processes in the mode's JSON")
    return busy


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@dataclass
class EpochResult:
    epoch: int
    epoch_s: float
    steps: int
    images: int
    losses: list[float]
    first_step_s: float | None = None

    @property
    def row(self) -> dict:
        finite = [x for x in self.losses if math.isfinite(x)]
        return {
            "epoch": self.epoch,
            "epoch_s": round(self.epoch_s, 4),
            "steps": self.steps,
            "images": self.images,
            "images_per_s": round(self.images / self.epoch_s, 2),
            "loss_mean": round(sum(finite) / len(finite), 5) if finite else float("nan"),
            "loss_last": round(self.losses[-1], 5),
        }


@contextlib.contextmanager
def gc_frozen() -> Iterator[int]:
    """Collect once, then keep every object alive now (torch's modules, the model, the compiled
    graphs, the loader) out of Python's cyclic collector until the block ends, and yield how many.
    Without it, a full collection, when one comes due, walks that whole heap in the middle of an
    epoch: on the CPU it stopped a training step for 94 ms at its 1,625th step with 426,000 objects
    tracked, and on an H100 one such collection took 195-591 ms with 0.4-1.0 million objects
    (benchmarks/gc_pause.py; there the step alone, without the loader, brought none due in
    1,500-3,000 steps). Frozen, that collection scans only what the steps make. (torchtitan, too,
    keeps full collections out of its steps: it disables the collector and collects every so many
    steps.)"""
    gc.collect()
    gc.freeze()
    try:
        yield gc.get_freeze_count()
    finally:
        gc.unfreeze()  # a job run inside a longer process (the tests) leaves nothing frozen behind


def run_epoch(step, batches: Iterable, *, epoch: int, steps: int, batch_size: int,
              device: torch.device, time_first_step: bool = False, progress: bool = True) -> EpochResult:
    """Run one epoch; the clock is read only after synchronising the device."""
    losses = torch.zeros(steps, device=device)
    first_step_s = None
    bar = tqdm(total=steps, desc=f"epoch {epoch}", unit="step", mininterval=5, disable=not progress)
    synchronize(device)
    start = time.perf_counter()
    done = 0
    for images, labels in batches:
        if done == steps:
            break
        losses[done] = step(images, labels)
        done += 1
        if time_first_step and done == 1:
            synchronize(device)
            first_step_s = time.perf_counter() - start
        bar.update(1)
    synchronize(device)
    epoch_s = time.perf_counter() - start
    bar.close()
    if done != steps:
        raise PipelineError(f"epoch {epoch}: the loader gave {done} batches, expected {steps}")
    values = losses.tolist()
    check_finite(values, epoch)
    return EpochResult(epoch, epoch_s, steps, steps * batch_size, values, first_step_s)


THREAD_ROLES = ("main", "autograd", "fetch", "other")
# per role and step: CPU time, time runnable but waiting for a CPU (the kernel's run queue), and
# context switches the thread made itself (waiting: for the GIL, a lock, the GPU) and was forced to
# and moves to another CPU (the kernel's se.nr_migrations; NaN where it has no /proc/*/sched)
THREAD_FIELDS = ("cpu_ms", "runq_ms", "voluntary_switches", "forced_switches", "migrations")


def thread_stats() -> dict[int, tuple]:
    """This process's threads now: tid -> (role, CPU ns, run-queue wait ns, voluntary switches,
    involuntary switches, migrations), from /proc/self/task (Linux's schedstat). Roles: main (the training
    loop), autograd (PyTorch's backward threads, named pt_autograd_N), fetch (the loader's fetch
    thread), other (DALI's threads, CUDA's, ...). Empty where the kernel does not give schedstat."""
    main = threading.main_thread().native_id
    fetch = {t.native_id for t in threading.enumerate() if t.name == "loader-fetch"}
    stats = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return stats
    for name in tids:
        task = Path("/proc/self/task", name)
        try:
            cpu_ns, wait_ns = (int(v) for v in (task / "schedstat").read_text().split()[:2])
            comm = (task / "comm").read_text().strip()
            status = (task / "status").read_text()
            voluntary = int(re.search(r"^voluntary_ctxt_switches:\s*(\d+)", status, re.M)[1])
            forced = int(re.search(r"^nonvoluntary_ctxt_switches:\s*(\d+)", status, re.M)[1])
        except (OSError, ValueError, TypeError):  # the thread ended meanwhile, or no schedstat
            continue
        try:
            migrations = float(re.search(r"^se\.nr_migrations\s*:\s*(\d+)", (task / "sched").read_text(), re.M)[1])
        except (OSError, TypeError):  # a kernel without CONFIG_SCHED_DEBUG, or the thread ended
            migrations = math.nan
        tid = int(name)
        role = ("main" if tid == main else "fetch" if tid in fetch
                else "autograd" if comm.startswith("pt_autograd") else "other")
        stats[tid] = (role, cpu_ns, wait_ns, voluntary, forced, migrations)
    return stats


def thread_deltas(before: dict, after: dict) -> dict[str, list[float]]:
    """Per role: [CPU ms, run-queue ms, voluntary switches, forced switches, migrations] between
    two thread_stats snapshots (a thread started between them counts from zero)."""
    totals = {role: [0.0] * len(THREAD_FIELDS) for role in THREAD_ROLES}
    units = (1e6, 1e6, 1, 1, 1)  # ns -> ms; counts stay counts
    for tid, (role, *now) in after.items():
        then = before.get(tid, (role,) + (0,) * len(THREAD_FIELDS))[1:]
        for i, (a, b) in enumerate(zip(now, then)):
            totals[role][i] += (a - b) / units[i]
    return totals


MACHINE_FIELDS = ("busy_ms", "steal_ms", "irq_ms", "tlb_shootdowns", "call_interrupts", "resched_interrupts")
# x86's /proc/interrupts lines of the interrupts one CPU sends others, counted over all CPUs
INTERRUPT_LINES = {"TLB": "tlb_shootdowns", "CAL": "call_interrupts", "RES": "resched_interrupts"}


def machine_interrupts() -> dict[str, float]:
    """How many interrupts the CPUs have sent each other so far, all CPUs together (/proc/interrupts;
    x86 names them): TLB shootdowns (a thread unmapped memory, e.g. a file it had mapped, and every
    other CPU running a thread of the same process flushes its TLB: the training thread's too),
    function calls, reschedules. {} where the kernel does not report them."""
    try:
        with open("/proc/interrupts") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return {}
    counts = {}
    for line in lines:
        name, _, rest = line.strip().partition(":")
        if name in INTERRUPT_LINES:
            counts[INTERRUPT_LINES[name]] = float(sum(int(v) for v in rest.split() if v.isdigit()))
    return counts


def machine_cpu_ms() -> dict[str, float]:
    """The machine's CPU time so far, all CPUs together, in ms (/proc/stat, in clock ticks of
    usually 10 ms): busy (user, nice, system, interrupts), steal (time a virtual CPU of this
    machine was ready to run while the hypervisor ran something else: other guests, or its own
    work) and irq (hardware and soft interrupts, part of busy); with machine_interrupts()' counts
    where the kernel gives them. {} where there is no /proc/stat."""
    try:
        with open("/proc/stat") as handle:
            fields = [int(v) for v in handle.readline().split()[1:9]]
        tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return {}
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields + [0] * (8 - len(fields))
    return {"busy_ms": (user + nice + system + irq + softirq) * tick_ms, "steal_ms": steal * tick_ms,
            "irq_ms": (irq + softirq) * tick_ms, **machine_interrupts()}


def machine_deltas(before: dict, after: dict) -> dict[str, float]:
    """Each of MACHINE_FIELDS (ms, or interrupt counts) between two machine_cpu_ms() readings, those
    both have ({} if either is empty)."""
    return {field: after[field] - before[field] for field in MACHINE_FIELDS if field in before and field in after}


def host_snapshot() -> tuple[dict, dict]:
    """thread_stats() and machine_cpu_ms() now (a few ms: read outside timed windows)."""
    return thread_stats(), machine_cpu_ms()


def host_per_step(before: tuple[dict, dict], after: tuple[dict, dict], steps: int) -> dict[str, float]:
    """Per step between two host_snapshot()s: each thread role's CPU ms, the main thread's
    voluntary switches (its waits: for the GIL, a lock, the GPU), the machine's busy, steal and
    interrupt ms and the interrupts its CPUs sent each other (TLB shootdowns, ...); only what this
    host reports."""
    out = {}
    if before[0] and after[0]:
        roles = thread_deltas(before[0], after[0])
        out.update({f"{role}_cpu_ms": roles[role][0] / steps for role in THREAD_ROLES})
        out["main_voluntary_switches"] = roles["main"][2] / steps
    out.update({f"machine_{field}": ms / steps for field, ms in machine_deltas(before[1], after[1]).items()})
    return out


def synthetic_batch_rates(step, *, steps: int, batch_size: int, image_size: int,
                          num_classes: int, device: torch.device, dtype: str, channels_last: bool,
                          seed: int, blocks: int = 5, fed: Iterable | None = None,
                          host: dict | None = None) -> tuple[list[float], list[float]]:
    """images/s of the same compiled step, per block, on one batch made once on the device (no
    loading) and, with `fed` (the job's own loader), on the loader's batches: `steps` steps of each
    in up to `blocks` rounds of one block each, the two blocks of a round back to back in
    alternating order (one batch first in even rounds). A round's fed / one-batch ratio then has
    the host's drift between the epochs and this measurement cancelled, which a ratio of the
    epochs' rate to the one-batch rate has not: a host-bound step's rate moves by tens of percent
    within minutes. (The loader's queues refill during each one-batch block, so a fed block
    starts with up to its prefetch depth of batches ready: at most a few steps of 50.) The medians
    resist a passing slowdown of the host.

    Run after the timed epochs with the shapes and strides of the real batches, so nothing
    recompiles. Returns (one-batch rates, fed rates); fed rates are empty without `fed`. With
    `host` (a dict), each block's host_per_step() is appended to host["one"] or host["fed"]
    (read outside the timed windows).
    """
    if steps <= 0:
        return [], []
    fixed = SyntheticLoader(images=batch_size * steps, num_classes=num_classes, batch_size=batch_size,
                            image_size=image_size, device=device, dtype=dtype,
                            channels_last=channels_last, seed=seed)
    batches = endless(fed) if fed is not None else None
    try:
        for _ in range(min(10, steps)):
            step(fixed.batch, fixed.labels)
            if batches is not None:
                step(*next(batches))
        blocks = max(1, min(blocks, steps))
        one, loaded = [], []
        for index in range(blocks):
            block_steps = steps // blocks + (1 if index < steps % blocks else 0)
            kinds = [("one", None), ("fed", batches)] if batches is not None else [("one", None)]
            for kind, source in kinds if index % 2 == 0 else kinds[::-1]:
                synchronize(device)
                before = host_snapshot() if host is not None else None
                start = time.perf_counter()
                for _ in range(block_steps):
                    if source is None:
                        step(fixed.batch, fixed.labels)
                    else:
                        step(*next(source))
                synchronize(device)
                rate = block_steps * batch_size / (time.perf_counter() - start)
                (one if kind == "one" else loaded).append(rate)
                if before is not None:
                    host.setdefault(kind, []).append(host_per_step(before, host_snapshot(), block_steps))
        return one, loaded
    finally:
        if batches is not None:
            batches.close()  # stops a fetch thread mid-epoch


def upper_bound_blocks(steps: int) -> int:
    """Rounds the upper-bound steps are split into: blocks of about 50 steps, at least 5 (so a
    long measurement gives more paired rounds, not longer blocks that a passing slowdown of the
    host spoils whole)."""
    return max(5, steps // 50)


def endless(batches: Iterable) -> Iterator:
    """`batches` epoch after epoch (a loader's epochs, for measuring beyond the timed ones);
    closing it closes the epoch under way (a loader's fetch thread stops)."""
    while True:
        epoch, count = iter(batches), 0
        try:
            for item in epoch:
                count += 1
                yield item
        finally:
            if hasattr(epoch, "close"):
                epoch.close()
        if count == 0:
            raise PipelineError("the loader gave no batches")


def check_finite(losses: list[float], epoch: int) -> None:
    for index, value in enumerate(losses):
        if not math.isfinite(value):
            raise PipelineError(
                f"loss is {value} at epoch {epoch}, step {index + 1}: training diverged "
                "(lower train.optimizer.lr or use precision fp32/bf16); no timings written"
            )


def loss_curve(losses: list[float], points: int = 200) -> dict:
    """Mean training loss over consecutive windows of steps, for plotting."""
    window = max(1, len(losses) // points)
    steps, values = [], []
    for start in range(0, len(losses) - window + 1, window):
        chunk = losses[start:start + window]
        steps.append(start + window)
        values.append(round(sum(chunk) / len(chunk), 5))
    return {"window_steps": window, "step": steps, "loss": values}


class RecompileCounter(logging.Handler):
    """Counts dynamo's recompilation log records (artifact logger 'recompiles')."""

    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.count = 0

    def emit(self, record):
        self.count += 1


def dynamo_counts() -> dict:
    from torch._dynamo.utils import counters

    return {
        "graph_breaks": int(sum(counters["graph_break"].values())),
        "graph_break_reasons": sorted(counters["graph_break"])[:20],
        "graphs_compiled": int(counters["stats"]["unique_graphs"]),
    }


# ----------------------------------------------------------------------------------------------
# Entry point
# ----------------------------------------------------------------------------------------------
def build_loader(filelist, images_dir, train: dict, loader: dict, device, num_classes, images):
    if train["loader"] == "synthetic":
        return SyntheticLoader(
            images=images, num_classes=num_classes, batch_size=train["batch_size"],
            image_size=train["image_size"], device=device, dtype=train["precision"],
            channels_last=train["channels_last"], seed=train["seed"],
        )
    return dali_loader(filelist, images_dir, train, loader, device)


def dali_loader(filelist, images_dir, train: dict, loader: dict, device, **pipeline_kwargs) -> DaliLoader:
    """The DALI loader the `loader` settings describe (`pipeline_kwargs`: see dali_pipeline)."""
    return DaliLoader(dali_pipelines(filelist, images_dir, train, loader, device, **pipeline_kwargs),
                      train["channels_last"], fetch=loader.get("fetch", "inline"), device=device,
                      cpus=loader_cpus(loader.get("reserve_cores", 0)),
                      batches_per_fetch=loader.get("batches_per_fetch", 1))


def dali_pipelines(filelist, images_dir, train: dict, loader: dict, device, **pipeline_kwargs) -> list:
    """loader.pipelines DALI pipelines, each reading its shard of the file list with its own seed,
    in batches of loader.batches_per_fetch training batches."""
    count = loader.get("pipelines", 1)
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise PipelineError(f"loader.pipelines {count!r}: use a whole number of pipelines, 1 or more")
    per_fetch = check_batches_per_fetch(loader.get("batches_per_fetch", 1))
    return [
        dali_pipeline(
            str(filelist), str(images_dir), image_size=train["image_size"],
            batch_size=train["batch_size"] * per_fetch,
            device=device, dtype=train["precision"], threads=loader["threads"], prefetch=loader["prefetch"],
            hw_decoder_load=loader["hw_decoder_load"], seed=train["seed"] + shard,
            resize_antialias=loader.get("resize_antialias", True), decoder=loader.get("decoder", "mixed"),
            decoder_options=loader.get("decoder_options") or None,
            reader_options=loader.get("reader_options") or None,
            decoder_affine=not loader.get("reserve_cores", 0), shard_id=shard, num_shards=count,
            **pipeline_kwargs,
        )
        for shard in range(count)
    ]


def main(filelist, images_dir, out_csv, out_json, *, mode_name: str, compile_settings: dict | None,
         train: dict, loader: dict, progress: bool = True) -> dict:
    with compile_cache(train.get("compile_cache", "cold"), mode_name) as cache:
        return train_mode(filelist, images_dir, out_csv, out_json, mode_name=mode_name,
                          compile_settings=compile_settings, train=train, loader=loader,
                          progress=progress, cache=cache)


def train_mode(filelist, images_dir, out_csv, out_json, *, mode_name: str, compile_settings: dict | None,
               train: dict, loader: dict, progress: bool, cache: dict) -> dict:
    connections = cuda_max_connections(train.get("cuda_max_connections"))
    device = check_device(train["device"])
    sync = cuda_sync(train.get("cuda_sync"), device)
    images, num_classes = count_classes(filelist)
    if images < train["batch_size"]:
        raise PipelineError(
            f"train.batch_size {train['batch_size']} is larger than the dataset ({images} images in {filelist})"
        )
    if device.type == "cuda" and train["loader"] == "dali":
        check_dali_matches_driver()
    busy = other_gpu_users(device)
    with training_stream(device, train.get("cuda_stream", "side")) as stream:
        return train_on_stream(filelist, images_dir, out_csv, out_json, mode_name=mode_name,
                               compile_settings=compile_settings, train=train, loader=loader,
                               progress=progress, cache=cache, device=device, images=images,
                               num_classes=num_classes, busy=busy, stream=stream,
                               connections=connections, sync=sync)


def train_on_stream(filelist, images_dir, out_csv, out_json, *, mode_name: str, compile_settings: dict | None,
                    train: dict, loader: dict, progress: bool, cache: dict, device: torch.device,
                    images: int, num_classes: int, busy: list[int], stream: str,
                    connections: str, sync: str | None) -> dict:
    """The checked training job, on the CUDA stream training_stream chose."""
    torch.manual_seed(train["seed"])
    use_cudnn_autotuner(device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)

    pin_cpus = training_cpus(loader)
    start = time.perf_counter()
    batches = build_loader(filelist, images_dir, train, loader, device, num_classes, images)
    loader_build_s = time.perf_counter() - start
    model = build_model(train["model"], num_classes, device, train["channels_last"])
    optimizer = build_optimizer(model, train["optimizer"], device)
    kwargs = compile_kwargs(compile_settings)
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    recompiles = RecompileCounter()
    logging.getLogger("torch._dynamo.guards.__recompiles").addHandler(recompiles)
    if kwargs is not None:
        torch._logging.set_logs(recompiles=True)
        model = torch.compile(model, **kwargs)
    train_step = make_train_step(model, optimizer, train["precision"], device)
    step = naming_out_of_memory(train_step, mode_name=mode_name, batch_size=train["batch_size"], device=device)
    log.info("mode %s: torch.compile(%s), %d images, %d classes, %d steps/epoch, %s on %s",
             mode_name, kwargs, batches.images, num_classes, batches.steps_per_epoch,
             train["model"], device)

    results, pinned_tids, frozen = [], [], 0
    with contextlib.ExitStack() as pinned:  # at the end: pinned threads get their CPUs back, the heap thaws
        for epoch in range(1, train["epochs"] + 1):
            result = run_epoch(step, batches, epoch=epoch, steps=batches.steps_per_epoch,
                               batch_size=train["batch_size"], device=device,
                               time_first_step=epoch == 1, progress=progress)
            log.info("epoch %d: %.2f s, %.1f images/s, loss %.4f", epoch, result.epoch_s,
                     result.images / result.epoch_s, result.row["loss_mean"])
            results.append(result)
            if epoch == 1:  # after the compile, between timed epochs: for the epochs and the upper bound
                frozen = pinned.enter_context(gc_frozen())
            if epoch == 1 and pin_cpus is not None:
                pinned_tids = pinned.enter_context(training_threads_on(pin_cpus))
                log.info("training threads %s pinned to CPUs %s from here on", pinned_tids, cpu_list(pin_cpus))
        upper_bound, blocks, fed_blocks, paired_host_ms = upper_bound_rates(step, train, num_classes, device, batches)
    ratios = paired_ratios(fed_blocks, blocks)
    facts = {
        "mode": mode_name,
        "compile": kwargs,
        "compile_s": round(results[0].first_step_s, 4),
        "compile_cache": cache,
        "cuda_stream": stream,
        "cuda_max_connections": connections if device.type == "cuda" else None,
        "cuda_sync": sync,
        "loader_cpus": cpu_list(batches.cpus) if getattr(batches, "cpus", None) else None,
        # loader.pin_training: the CPUs the training threads ran on after epoch 1, and how many
        "training_cpus": cpu_list(pin_cpus) if pin_cpus is not None else None,
        "training_threads_pinned": len(pinned_tids),
        # objects kept out of the cyclic collector after epoch 1 (gc_frozen)
        "gc_frozen_objects": frozen,
        "first_step_s": round(results[0].first_step_s, 4),
        "loader_build_s": round(loader_build_s, 4),
        "peak_gpu_mem_gib": peak_gpu_mem_gib(device),
        # the caching allocator's retries and out-of-memory errors (caught ones too) over the whole
        # job (allocator_facts; None off CUDA)
        **{key: allocator_facts(device).get(key) for key in ("alloc_retries", "alloc_ooms")},
        **dynamo_counts(),
        "recompiles": recompiles.count,
        # fp16's loss scaler (make_train_step; None: no scaling) and its scale at the end (a scale
        # far below the initial 65,536 means many skipped steps: overflowing gradients)
        "loss_scaler": train_step.loss_scaler,
        "loss_scale_final": train_step.loss_scale(),
        "synthetic_batch_images_per_s": round(upper_bound, 2) if upper_bound else None,
        "synthetic_batch_block_images_per_s": [round(rate, 2) for rate in blocks],
        # the job's loader in blocks paired with those (see synthetic_batch_rates): per round, fed
        # / one-batch, and their median, the loader's cost with the host's drift cancelled
        "fed_block_images_per_s": [round(rate, 2) for rate in fed_blocks],
        "fed_vs_one_batch_paired_blocks": ratios,
        "fed_vs_one_batch_paired": round(statistics.median(ratios), 4) if ratios else None,
        # per step in those blocks (medians; "one" and "fed"): CPU ms of the training threads
        # (main, autograd), the fetch thread and DALI's and CUDA's (other), the main thread's
        # voluntary switches, and the machine's busy, steal and interrupt ms over all its CPUs
        "paired_blocks_host_per_step": paired_host_ms,
        "device": device.type,
        "loader": train["loader"],
        "train": train,
        "loader_settings": loader,
        "images_per_epoch": results[0].images,
        "dataset_images": batches.images,
        "num_classes": num_classes,
        "gpu_other_processes": busy,
        "loss_curve": loss_curve([x for r in results for x in r.losses]),
        "versions": versions(),
    }
    write_outputs(results, facts, mode_name, out_csv, out_json)
    return facts


def upper_bound_rates(step, train: dict, num_classes: int, device: torch.device,
                      batches=None) -> tuple[float | None, list[float], list[float], dict | None]:
    """The one-batch upper bound of a DALI-fed job: (median images/s, each block's, the paired
    blocks fed by `batches`, the host's work per step in both kinds of block: paired_host());
    none for a synthetic-fed job (its epochs are that already)."""
    if train["loader"] == "synthetic":
        return None, [], [], None
    host: dict[str, list[dict]] = {}
    blocks, fed = synthetic_batch_rates(
        step, steps=train["upper_bound_steps"], batch_size=train["batch_size"],
        image_size=train["image_size"], num_classes=num_classes, device=device,
        dtype=train["precision"], channels_last=train["channels_last"], seed=train["seed"],
        blocks=upper_bound_blocks(train["upper_bound_steps"]), fed=batches, host=host)
    if not blocks:
        return None, [], [], None
    upper_bound = statistics.median(blocks)
    log.info("same step on one synthetic batch: %.1f images/s (median of %d blocks, %.1f-%.1f)",
             upper_bound, len(blocks), min(blocks), max(blocks))
    if fed:
        ratios = paired_ratios(fed, blocks)
        log.info("fed by the loader in blocks paired with those: %.1f images/s (median), fed / one-batch "
                 "%.1f%% (median of %d rounds, %.1f-%.1f%%)", statistics.median(fed),
                 100 * statistics.median(ratios), len(ratios), 100 * min(ratios), 100 * max(ratios))
    summary = paired_host(host)
    if summary and "fed" in summary:
        log.info("host per step, one-batch -> fed blocks (medians): %s", "; ".join(
            f"{field} {summary['one'][field]:.2f} -> {summary['fed'][field]:.2f}"
            for field in summary["one"] if field in summary["fed"]))
    return upper_bound, blocks, fed, summary


def paired_host(host: dict[str, list[dict]]) -> dict | None:
    """Per kind of block (one, fed), the median over blocks of each host_per_step() field: where
    the fed blocks' extra time goes (the training threads burning more CPU for the same work,
    waiting more, or the hypervisor taking the machine's CPUs: steal). None without readings."""
    summary = {}
    for kind, readings in host.items():
        fields = [field for field in readings[0] if all(field in r for r in readings)] if readings else []
        if fields:
            summary[kind] = {field: round(statistics.median(r[field] for r in readings), 3) for field in fields}
    return summary or None


def paired_ratios(fed: list[float], one: list[float]) -> list[float]:
    """Each round's fed / one-batch rate."""
    return [round(a / b, 4) for a, b in zip(fed, one)]


def write_outputs(results: list[EpochResult], facts: dict, mode_name: str, out_csv, out_json) -> None:
    # JSON first, CSV last: the CSV is the rule's main output and appears only when all is done
    with atomic_write(out_json) as handle:
        json.dump(facts, handle, indent=2, default=str)
    with atomic_write(out_csv, newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for result in results:
            writer.writerow({"mode": mode_name, **result.row})


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("filelist")
    parser.add_argument("images_dir")
    parser.add_argument("out_csv")
    parser.add_argument("out_json")
    parser.add_argument("--mode", default="none", help="torch.compile mode, or none for eager")
    parser.add_argument("--config", default="config.yaml", help="YAML with train: and loader: sections")
    return parser.parse_args(argv)


if __name__ == "__main__":
    if "snakemake" in globals():
        with snakemake_log(snakemake):  # noqa: F821
            main(
                snakemake.input.filelist,  # noqa: F821
                str(Path(snakemake.input.images) / "images"),  # noqa: F821
                snakemake.output.csv,  # noqa: F821
                snakemake.output.json,  # noqa: F821
                mode_name=snakemake.wildcards.mode,  # noqa: F821
                compile_settings=snakemake.params.compile,  # noqa: F821
                train=snakemake.params.train,  # noqa: F821
                loader=snakemake.params.loader,  # noqa: F821
            )
    else:
        import yaml

        setup_cli_logging()
        args = parse_args()
        config = yaml.safe_load(Path(args.config).read_text())
        main(args.filelist, args.images_dir, args.out_csv, args.out_json, mode_name=args.mode,
             compile_settings={"mode": args.mode}, train=config["train"], loader=config["loader"])
