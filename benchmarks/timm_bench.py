"""timm's own train-step benchmark (its benchmark.py --bench train), under any torch.compile mode.

The issue's yardstick for our one-batch step: timm's public `benchmark.py --bench train` for the same
model, batch, image size, precision and memory format on the same host. That script lives only in
timm's GitHub repository (not in its wheel or sdist) and is not ours to commit: put a copy at
.gpu-extra/timm_benchmark.py (git-ignored) or name one with --script, and install timm
(`pip install --no-deps timm==1.0.29` where torch and torchvision are already installed).

    python benchmarks/timm_bench.py [--script PATH] --bench train --model resnet50 -b 64 \
        --img-size 224 --num-classes 101 --amp --amp-dtype float16 --channels-last --no-retry \
        [--torchcompile inductor --torchcompile-mode MODE] --results-file results/timm/MODE.csv

Older versions of benchmark.py (the one the 2026-12-02/03 comparisons ran, sha256 7cc5d534...,
has none of them) lack --device, --torchcompile, --torchcompile-mode, --amp-dtype and --no-retry.
This script then adds them, doing what newer timm versions do with them: the model is compiled with
torch.compile(model, backend=, mode=) once it is built and on its device, before the optimizer is
made; --amp-dtype picks the autocast dtype (torch.autocast on the device's type); --no-retry runs
the batch size asked once, so an out-of-memory error fails the run instead of timing a smaller
batch; --device picks the device. Everything else is the script's own: its model, its fixed random
batch, its step (zero_grad, autocast forward, loss, backward, optimizer step, a host sync), its
timing. A script that has all five options runs as it is (not tried here: no such copy was at
hand); one that has only some of them is refused.

The results (the script's own keys, e.g. train_samples_per_sec and train_step_time, plus the
compile mode, the script's sha256, timm's and torch's versions and the device) are printed and,
with --results-file, written as a one-row CSV that appears only once complete.

Our training job's process settings can be given to timm's run, to tell whether they, rather than the
step or the model, make a difference: --cuda-max-connections N (train.cuda_max_connections),
--cuda-sync POLICY (train.cuda_sync) and --stream side|side-high|default (train.cuda_stream: the
whole benchmark runs on that CUDA stream). They are applied with the training job's own code before
CUDA starts, and the row records what applied (unset: CUDA's defaults and the default stream, as
timm's script has them). benchmarks/step_vs_timm.py alternates such runs with our step's.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import importlib.util
import json
import os
import platform
import sys
from functools import partial
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow" / "scripts"))

import train  # noqa: E402  (DALI is imported only by its loader code, never here)

DEFAULT_SCRIPT = REPO / ".gpu-extra" / "timm_benchmark.py"
ADDED = ("--device", "--torchcompile", "--torchcompile-mode", "--amp-dtype", "--no-retry")
AMP_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}


def load_script(path: Path):
    """timm's benchmark.py as a module (its main() is not run)."""
    if not path.is_file():
        sys.exit(f"timm_bench: no timm benchmark.py at {path}: copy timm's benchmark.py there "
                 "(github.com/huggingface/pytorch-image-models, top folder) or name it with --script")
    spec = importlib.util.spec_from_file_location("timm_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError as err:
        sys.exit(f"timm_bench: {path} could not be imported ({err}); is timm installed?")
    missing = [name for name in ("parser", "benchmark", "BenchmarkRunner", "_try_run") if not hasattr(module, name)]
    if missing:
        sys.exit(f"timm_bench: {path} is not timm's benchmark.py: it has no {', '.join(missing)}")
    return module


def added_options(module) -> list[str]:
    """The options of ADDED that the script lacks: all of them, or none."""
    has = [opt for opt in ADDED if opt in module.parser._option_string_actions]
    if has and len(has) < len(ADDED):
        sys.exit(f"timm_bench: this benchmark.py has {', '.join(has)} but not "
                 f"{', '.join(o for o in ADDED if o not in has)}: run it directly or use another version")
    return [] if has else list(ADDED)


def add_options(module) -> None:
    """The options newer benchmark.py versions have, added to an older one's parser and runners."""
    p = module.parser
    p.add_argument("--device", default="cuda", help="device to run on (default: cuda)")
    p.add_argument("--torchcompile", nargs="?", const="inductor", default=None,
                   help="torch.compile the model with this backend (default when given: inductor)")
    p.add_argument("--torchcompile-mode", default=None, help="torch.compile mode (default: None)")
    p.add_argument("--amp-dtype", default="float16", choices=sorted(AMP_DTYPES), help="autocast dtype with --amp")
    p.add_argument("--no-retry", action="store_true", help="no retries with smaller batches on errors")

    built = module.BenchmarkRunner.__init__

    def init(self, model_name, *args, **kwargs):
        backend, mode = kwargs.get("torchcompile"), kwargs.get("torchcompile_mode")
        amp_dtype = kwargs.get("amp_dtype", "float16")
        built(self, model_name, *args, **kwargs)
        if self.use_amp:
            self.amp_autocast = partial(torch.autocast, device_type=torch.device(self.device).type,
                                        dtype=AMP_DTYPES[amp_dtype])
        if backend:
            self.model = torch.compile(self.model, backend=backend, mode=mode)

    module.BenchmarkRunner.__init__ = init
    retrying = module._try_run

    def run(model_name, bench_fn, initial_batch_size, bench_kwargs):
        if not bench_kwargs.get("no_retry"):
            return retrying(model_name, bench_fn, initial_batch_size, bench_kwargs)
        return bench_fn(model_name=model_name, batch_size=initial_batch_size, **bench_kwargs).run()

    module._try_run = run


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def device_name(device: str) -> str:
    if torch.device(device).type == "cuda" and torch.cuda.is_available():
        return torch.cuda.get_device_name(torch.device(device))
    return platform.processor() or platform.machine()


def write_row(path: Path, row: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(row))
        writer.writeheader()
        writer.writerow(row)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> dict:
    ours = argparse.ArgumentParser(add_help=False)
    ours.add_argument("--script", type=Path, default=DEFAULT_SCRIPT)
    ours.add_argument("--cuda-max-connections", type=int, metavar="N")
    ours.add_argument("--cuda-sync", choices=sorted(train.CUDA_SYNC_FLAGS))
    ours.add_argument("--stream", choices=("side", "side-high", "default"), default="default")
    known, rest = ours.parse_known_args(argv)
    peek = argparse.ArgumentParser(add_help=False)  # the device, left in `rest` for timm's parser
    peek.add_argument("--device", default="cuda")
    device = torch.device(peek.parse_known_args(rest)[0].device)
    try:  # before anything starts CUDA: the driver reads both when the context is made
        process = {"cuda_max_connections": train.cuda_max_connections(known.cuda_max_connections),
                   "cuda_sync": train.cuda_sync(known.cuda_sync, device) or "none (cpu)"}
    except train.PipelineError as err:
        sys.exit(f"timm_bench: {err}")
    module = load_script(known.script)
    if not added_options(module):
        print(f"timm_bench: {known.script} has {', '.join(ADDED)} itself; running it as it is", flush=True)
        sys.argv = [str(known.script), *rest]
        with train.training_stream(device, known.stream):
            module.main()
        return {}
    add_options(module)
    args = module.parser.parse_args(rest)
    if args.model_list or not module.is_model(args.model):
        sys.exit(f"timm_bench: one model at a time: {args.model!r} is not a timm model name")
    module.setup_default_logging()
    results_file = args.results_file
    print(f"timm_bench: script {known.script} (sha256 {sha256(known.script)[:12]}), device {args.device}, "
          f"amp {args.amp} ({args.amp_dtype}), torchcompile {args.torchcompile} mode {args.torchcompile_mode}; "
          f"CUDA_DEVICE_MAX_CONNECTIONS {process['cuda_max_connections']}, CUDA sync {process['cuda_sync']}, "
          f"stream {known.stream}", flush=True)
    with train.training_stream(torch.device(args.device), known.stream) as stream:
        results = dict(module.benchmark(args))
    if "error" in results:
        sys.exit(f"timm_bench: the benchmark failed: {results['error']}")
    import timm

    results.update(
        compile_mode=(args.torchcompile_mode or "default") if args.torchcompile else "none",
        backend=args.torchcompile or "", precision=args.precision,
        amp_dtype=args.amp_dtype if args.amp else "", channels_last=args.channels_last,
        device=device_name(args.device), torch=torch.__version__, timm=timm.__version__,
        python=platform.python_version(), benchmark_sha256=sha256(known.script),
        **process, stream=stream,
    )
    print(f"--result\n{json.dumps(results, indent=4)}", flush=True)
    if results_file:
        write_row(Path(results_file), results)
    return results


if __name__ == "__main__":
    main()
