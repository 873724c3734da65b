"""Our one-batch training step against timm's benchmark.py, in alternating processes.

The issue's yardstick: per mode, our synthetic-batch step at least as fast as timm's public
`benchmark.py --bench train` (same model, batch, image size, precision, memory format, host). On the
H200 hosts the CPU's speed drifts by a quarter within minutes, so one run of each, minutes apart,
cannot tell a 15% gap from drift. This script runs "arms" as separate processes in turn, round after
round (ABCD ABCD ...), so that drift hits every arm alike, and reports per arm the median images/s
over rounds and the median of its per-round ratio to the first arm.

Arms (any of them, in the order given; the first is the reference):

  timm           timm's benchmark.py (benchmarks/timm_bench.py) as timm runs it: CUDA's defaults,
                 the default stream
  timm+ours      the same with the training job's process settings (the config's
                 train.cuda_max_connections, train.cuda_sync, train.cuda_stream)
  ours           our step on one batch (benchmarks/loader_overhead.py --feeds synthetic, DALI never
                 loaded), with the config's process settings, as the training job runs
  ours+cuda-defaults  our step with CUDA's defaults (8 connections, auto sync) on the default stream

With --one-process ours|cuda-defaults there are two arms in one process instead: timm's own
benchmark step (its TrainBenchmarkRunner, made by its benchmark()) and ours, in blocks of --steps
steps alternating round by round (--rounds, e.g. 30), so that paired rounds, not processes minutes
apart, are compared; the summary adds the two-sided sign test of "ours ahead". Each block also
records its wall time per step and the host's CPU time per step (the whole process's, and the main
thread's): where a step's CPU time nears its wall time, the host, not the GPU, sets its pace, and
there the step that asks less of the CPU wins (the H100 of 2026-12-07f, 20-40% slower than other
H100s under eager and `default` but not under `reduce-overhead`, had our `default` step 4% behind).
--also adds arms of ours to the one process, each against timm's round by round: ours:timm-model
(our step on timm's model), ours:no-scaler (our step without fp16 loss scaling) and ours:torch-scaler
(our step with torch.amp.GradScaler in place of train.FusedLossScaler, the job's scaler since
2026-12-07h), which split a gap into the model's part and the scaler's (2026-12-07g, GradScaler's
days: the model none, the scaler 1-2%).

Every arm compiles with torch.compile's mode --mode (`none`: eager) and shares the inductor cache of
the environment, so only the first round pays a cold compile; compile time is never timed (both
scripts warm up first). Each arm's own output is kept beside the CSV (<out>.d/).

    python benchmarks/step_vs_timm.py --configfile configs/synthetic-food101.yaml --mode default \
        --rounds 4 --arms timm timm+ours ours ours+cuda-defaults --out results/step_vs_timm-default.csv
    python benchmarks/step_vs_timm.py --configfile configs/synthetic-food101.yaml --mode none \
        --one-process ours --rounds 30 --out results/vs_timm_1p_none.csv
    python benchmarks/step_vs_timm.py --again results/vs_timm_1p_none.csv --first ours:torch-scaler

--one-process with --classes 101 needs no data at all (neither the preset's images nor DALI).

Under the CUDA-graph modes one process needs --mark-timm-steps: our step marks each step's start
(torch.compiler.cudagraph_mark_step_begin), and once anything in a process has, torch's CUDA-graph
trees take a new iteration to begin only at a mark, so timm's unmarked steps never begin one and its
graphs are recorded again and again (an H100, 2026-12-06: no round in 5.5 minutes). The option marks
the start of each of timm's steps too. `kill -USR1 <pid>` prints every thread's stack (a stuck run).
"""
from __future__ import annotations

import argparse
import csv
import faulthandler
import functools
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "workflow" / "scripts"))

from choose_loader import sign_test, two_sided  # noqa: E402
from loader_overhead import data_paths, load_config  # noqa: E402
from train import count_classes  # noqa: E402

ARMS = ("timm", "timm+ours", "ours", "ours+cuda-defaults")
# with --one-process, more arms beside timm's and ours, to tell where a gap between those two lies:
# our step on timm's model (the step against the model) and ours without fp16 loss scaling (what
# the gradient scaler's calls cost: timm's step has no scaler) and ours with torch's GradScaler in
# place of our leaner FusedLossScaler (what that saves)
ALSO = ("ours:timm-model", "ours:no-scaler", "ours:torch-scaler")
AMP_DTYPES = {"fp16": "float16", "bf16": "bfloat16"}


def arm_command(arm: str, config: dict, mode: str, *, steps: int, blocks: int, warmup: int, classes: int,
                out: Path, script: Path | None, configfiles: list[str]) -> list[str]:
    """The command line of one arm's process; its images/s lands in `out` (a CSV)."""
    t = config["train"]
    if arm.startswith("timm"):
        command = [sys.executable, str(REPO / "benchmarks" / "timm_bench.py"),
                   *(["--script", str(script)] if script else []),
                   *timm_options(config, mode, steps=steps * blocks, warmup=warmup, classes=classes),
                   "--results-file", str(out)]
        if arm == "timm+ours":
            if t.get("cuda_max_connections") is not None:
                command += ["--cuda-max-connections", str(t["cuda_max_connections"])]
            if t.get("cuda_sync") is not None:
                command += ["--cuda-sync", t["cuda_sync"]]
            command += ["--stream", t.get("cuda_stream", "side")]
        return command
    command = [sys.executable, str(REPO / "benchmarks" / "loader_overhead.py"), "--configfile", *configfiles,
               "--modes", mode, "--steps", str(steps), "--blocks", str(blocks), "--warmup", str(warmup),
               "--no-dali-alone", "--no-timm-style", "--out", str(out), "--feeds"]
    if arm == "ours+cuda-defaults":
        return command + ["synthetic:stream=default", "--cuda-max-connections", "8", "--cuda-sync", "auto"]
    return command + ["synthetic"]


def timm_options(config: dict, mode: str, *, steps: int, warmup: int, classes: int) -> list[str]:
    """timm's benchmark.py options for the config's model, batch, image size, precision, memory
    format and device, under torch.compile mode `mode` (none: eager)."""
    t = config["train"]
    options = ["--bench", "train", "--model", t["model"], "-b", str(t["batch_size"]),
               "--img-size", str(t["image_size"]), "--num-classes", str(classes), "--device", t["device"],
               "--no-retry", "--num-warm-iter", str(warmup), "--num-bench-iter", str(steps)]
    if t["precision"] in AMP_DTYPES:
        options += ["--amp", "--amp-dtype", AMP_DTYPES[t["precision"]]]
    if t["channels_last"]:
        options.append("--channels-last")
    if mode != "none":
        options += ["--torchcompile", "inductor", "--torchcompile-mode", mode]
    return options


def arm_rate(arm: str, out: Path) -> float:
    rows = list(csv.DictReader(out.open()))
    if arm.startswith("timm"):
        return float(rows[0]["train_samples_per_sec"])
    return float(next(row["images_per_s"] for row in rows if row["feed"].startswith("synthetic")))


def one_process(config: dict, mode: str, *, rounds: int, steps: int, warmup: int, classes: int, images: int,
                script: Path | None, settings: str = "ours", time_limit: float | None = None,
                mark_timm_steps: bool = False, profile_steps: int = 0,
                profile_out: Path | None = None, also: tuple[str, ...] = ()) -> list[dict]:
    """timm's benchmark step and ours in this one process, in blocks of `steps` steps that alternate
    round by round (timm first in odd rounds, ours first in even ones), so that the host's drift,
    which moved one process's rate by a quarter within minutes, hits both alike: rows per round and
    arm, as the process arms give.

    timm's step is its own TrainBenchmarkRunner (its model, fixed batch, optimizer, loss, a host sync
    after every step), made by its benchmark() from the options timm_options gives and timed by
    calling its run() with `steps` timed steps and no warm-up; ours is the training job's step on one
    fixed batch (benchmarks/loader_overhead.py's synthetic feed). Both run under the process
    settings `settings` names: ours (the config's train.cuda_max_connections and train.cuda_sync;
    our step on the config's train.cuda_stream, timm's on the default stream, as timm runs it) or
    cuda-defaults (neither set; both steps on the default stream). mark_timm_steps: each of timm's
    steps begins with torch.compiler.cudagraph_mark_step_begin(), as ours does (the module's
    docstring says why the CUDA-graph modes need it). profile_steps: after the rounds, each arm's
    `profile_steps` steps under the PyTorch profiler (loader_overhead.profile_steps): its numbers per
    arm to `profile_out` (CSV), the traces beside it (<profile_out stem>/<arm>.json.gz). also: more
    arms of ours (ALSO): `ours:timm-model`, our step (optimizer, loss scaling, stream) on a model
    timm builds as its benchmark does (timm.create_model, no pretrained weights); `ours:no-scaler`,
    our step and model with fp16 autocast unscaled, as timm's step runs; `ours:torch-scaler`, our
    step and model with torch.amp.GradScaler in place of train.FusedLossScaler. With more than two arms the
    order rotates by one arm each round."""
    import loader_overhead
    import timm_bench
    import train

    began, t = time.monotonic(), config["train"]  # --time-limit counts the compiles too
    device = train.check_device(t["device"])
    if settings == "ours":  # before anything starts CUDA: the driver reads both when the context is made
        train.cuda_max_connections(t.get("cuda_max_connections"))
        train.cuda_sync(t.get("cuda_sync"), device)
    stream = t.get("cuda_stream", "side") if settings == "ours" else "default"
    module = timm_bench.load_script(script or timm_bench.DEFAULT_SCRIPT)
    if timm_bench.added_options(module):
        timm_bench.add_options(module)
    made = []

    def keep(model_name, bench_fn, initial_batch_size, bench_kwargs):  # benchmark()'s _try_run, not running
        made.append(bench_fn(model_name=model_name, batch_size=initial_batch_size, **bench_kwargs))
        return {}

    module._try_run = keep
    module.benchmark(module.parser.parse_args(timm_options(config, mode, steps=1, warmup=warmup, classes=classes)))
    runner = made[0]
    if mark_timm_steps:  # timm's _step begins with optimizer.zero_grad(): mark the step's start there
        import torch

        zero_grad = runner.optimizer.zero_grad

        def marked_zero_grad(*args, **kwargs):
            torch.compiler.cudagraph_mark_step_begin()
            return zero_grad(*args, **kwargs)

        runner.optimizer.zero_grad = marked_zero_grad

    def timm_block(count: int, warm: int = 0) -> None:
        # its progress line once a block (log_freq is its steps // 5 when made: 0 for one step)
        runner.num_warm_iter, runner.num_bench_iter, runner.log_freq = warm, count, count
        runner.run()

    import timm
    import torch

    ours = {"ours": loader_overhead.our_step(config, mode, device, classes)[1]}
    for arm in also:
        if arm == "ours:timm-model":
            model = timm.create_model(t["model"], pretrained=False, num_classes=classes).to(device)
            if t["channels_last"]:
                model = model.to(memory_format=torch.channels_last)
            ours[arm] = loader_overhead.our_step(config, mode, device, classes, model=model.train())[1]
        elif arm in ("ours:no-scaler", "ours:torch-scaler"):
            scaler = {"ours:no-scaler": "none", "ours:torch-scaler": "torch"}[arm]
            ours[arm] = loader_overhead.our_step(config, mode, device, classes, loss_scaler=scaler)[1]
        else:
            raise ValueError(f"no such arm {arm!r} (one of {', '.join(ALSO)})")
    batches = loader_overhead.endless(loader_overhead.make_feed("synthetic", config, None, None, device,
                                                                classes, images))

    def our_block(arm: str, count: int) -> None:
        loader_overhead.run_steps(ours[arm], batches, count, device, stream)

    arms = ["timm", *ours]
    blocks = {"timm": lambda: timm_block(steps), **{arm: functools.partial(our_block, arm, steps) for arm in ours}}
    warm = {"timm": loader_overhead.timed(device, lambda: timm_block(1, warm=warmup)),
            **{arm: loader_overhead.timed(device, functools.partial(our_block, arm, warmup)) for arm in ours}}

    name = torch.cuda.get_device_name(device) if device.type == "cuda" else device.type
    print(f"{name}, torch {torch.__version__}, timm {timm.__version__}, {classes} classes; "
          f"one process, {settings} settings (our step's stream {stream}"
          + ("; timm's steps marked" if mark_timm_steps else "") + "); warm-up incl. compile: "
          + ", ".join(f"{arm} {seconds:.0f} s" for arm, seconds in warm.items()), flush=True)
    rows = []
    # as the training job after its compile (train.gc_frozen). (Every such run on an H100 before
    # 2026-12-07e had its slowest block of ours in round 22 under `default` or 23 under eager; frozen,
    # the H100 of 2026-12-07f still had it in two of four runs: not the collector. 2026-12-07g found
    # it: a retry of the CUDA caching allocator once new side streams, one per block, had filled the
    # GPU; train.training_stream reuses one since.)
    with train.gc_frozen():
        for round_ in range(1, rounds + 1):
            if round_ > 1 and time_limit is not None and time.monotonic() - began > time_limit:
                print(f"stopped after {round_ - 1} of {rounds} rounds (--time-limit)", flush=True)
                break
            turn = (round_ - 1) % len(arms)  # two arms: timm first in odd rounds, ours in even ones
            order = arms[turn:] + arms[:turn]
            for arm in order:
                # the host's CPU time per step (all threads: the backward pass's launches run on
                # autograd's thread), beside the wall time: which step is bound by the host. The
                # OS's exact clocks (process_time, not getrusage's, which Linux scales from
                # tick samples and which can lag a thread's clock over one block)
                cpu, main = time.process_time(), time.thread_time()
                seconds = loader_overhead.timed(device, blocks[arm])
                cpu, main = time.process_time() - cpu, time.thread_time() - main
                rows.append({"round": round_, "arm": arm, "mode": mode,
                             "images_per_s": round(steps * t["batch_size"] / seconds, 1), "first": order[0],
                             "process": f"one ({settings} settings)",
                             "wall_ms_per_step": round(seconds * 1e3 / steps, 3),
                             "cpu_ms_per_step": round(cpu * 1e3 / steps, 3),
                             "main_cpu_ms_per_step": round(main * 1e3 / steps, 3),
                             # after the block, on CUDA: memory held, the allocator's retries and
                             # out-of-memory errors so far (2026-12-07g: flat memory, no retries
                             # expected with the side stream made once)
                             **train.allocator_facts(device)})
            print(f"round {round_} " + ", ".join(f"{row['arm']} {row['images_per_s']:.1f}"
                                                 for row in rows[-len(arms):])
                  + " images/s", flush=True)
        if profile_steps and profile_out is not None:
            runs = {"timm": timm_block, **{arm: functools.partial(our_block, arm) for arm in ours}}
            profile_arms(runs, mode, profile_steps, device, profile_out)
    return rows


def profile_arms(runs: dict, mode: str, steps: int, device, out: Path) -> None:
    """Each arm's `steps` steps under the PyTorch profiler: per arm, trace_summary's numbers (wall,
    GPU busy and idle, kernels per step, the costliest CUDA calls per thread) printed and written to
    `out`. A profiler failure is printed, not raised: the rounds' timings come first."""
    import loader_overhead

    traces, rows = out.with_suffix(""), []
    traces.mkdir(parents=True, exist_ok=True)
    for arm, run in runs.items():
        try:
            numbers = loader_overhead.profile_steps(run, steps, device, traces / f"{arm}.json.gz")
        except Exception as err:  # a profiler failure must not cost the rounds' timings
            print(f"profile {arm}: failed ({type(err).__name__}: {err})", flush=True)
            continue
        rows.append({"arm": arm, "mode": mode, "steps": steps, **numbers})
        print(f"profile {arm}: {numbers['ms_per_step']:.2f} ms per step"
              + (f", GPU busy {numbers['gpu_training_stream_ms_per_step']:.2f} ms, idle "
                 f"{numbers['training_stream_idle_ms_per_step']:.2f} ms, {numbers['kernels_per_step']:.0f} kernels"
                 if "kernels_per_step" in numbers else "")
              + f"; main thread's costliest CUDA calls (ms per step): {numbers['cuda_calls_main_thread'] or 'none'}"
              + f"; other threads': {numbers['cuda_calls_other_thread'] or 'none'}", flush=True)
    if rows:
        write_csv(out, rows)
        print(f"wrote {out}", flush=True)


CUDA_GRAPH_MODES = ("reduce-overhead", "max-autotune")  # torch.compile's modes that use CUDA graphs


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configfile", nargs="*", default=[], help="presets merged over config.yaml")
    parser.add_argument("--mode", default="default", help="torch.compile mode of every arm (none: eager)")
    parser.add_argument("--arms", nargs="+", choices=ARMS, default=list(ARMS))
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=50, help="timed steps per block")
    parser.add_argument("--blocks", type=int, default=4,
                        help="timed blocks per arm and round (timm's script times steps x blocks steps at once)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed steps first (compiling included)")
    parser.add_argument("--script", type=Path, help="timm's benchmark.py (default: timm_bench.py's)")
    parser.add_argument("--process-timeout", type=float, default=600, help="seconds one arm's process may take")
    parser.add_argument("--time-limit", type=float, metavar="SECONDS",
                        help="start no round after this many seconds (the first always runs)")
    parser.add_argument("--one-process", choices=("ours", "cuda-defaults"), metavar="SETTINGS",
                        help="timm's step and ours in this one process instead of arms in processes of their "
                             "own, block by block, --rounds rounds of --steps steps each, under the process "
                             "settings named: ours (the config's) or cuda-defaults (--arms and --blocks unused)")
    parser.add_argument("--classes", type=int, metavar="N",
                        help="with --one-process: the model's classes, in place of counting the preset's file "
                             "list, so that no data need be made (both steps train on one batch made on the "
                             "device; the preset's dataset is never read)")
    parser.add_argument("--mark-timm-steps", action="store_true",
                        help="with --one-process: begin each of timm's steps with "
                             "torch.compiler.cudagraph_mark_step_begin(), as ours does (needed under the "
                             "CUDA-graph modes: see above)")
    parser.add_argument("--also", nargs="+", choices=ALSO, default=[], metavar="ARM",
                        help="with --one-process: more arms of ours, each against timm's in every round: "
                             "ours:timm-model (our step on timm's model), ours:no-scaler (our step without fp16 "
                             "loss scaling), ours:torch-scaler (with torch.amp.GradScaler): where a gap between timm's step and ours lies")
    parser.add_argument("--profile-steps", type=int, default=0, metavar="N",
                        help="with --one-process: after the rounds, profile N steps of each arm (PyTorch "
                             "profiler): per arm, GPU busy and idle, kernels and the costliest CUDA calls per "
                             "step -> <out stem>-profile.csv, traces in <out stem>-profile/")
    parser.add_argument("--out", type=Path, default=Path("results/step_vs_timm.csv"))
    parser.add_argument("--again", type=Path, metavar="CSV",
                        help="run nothing: summarize a CSV this wrote again, each arm against --first, and "
                             "per arm the allocator's memory held and retries over its blocks (one-process CSVs)")
    parser.add_argument("--first", metavar="ARM", help="with --again: the arm the others are paired with "
                                                       "(default: the CSV's first)")
    args = parser.parse_args(argv)
    if args.again:
        return summarize_again(args.again, args.first)
    if args.first:
        sys.exit("step_vs_timm: --first needs --again")
    if len(set(args.arms)) != len(args.arms):
        sys.exit(f"step_vs_timm: an arm is named twice in {' '.join(args.arms)}")
    if args.rounds < 1 or args.steps < 1 or args.blocks < 1 or args.warmup < 1:
        sys.exit("step_vs_timm: --rounds, --steps, --blocks and --warmup must be at least 1")
    if args.one_process and args.mode in CUDA_GRAPH_MODES and not args.mark_timm_steps:
        sys.exit(f"step_vs_timm: --one-process under {args.mode} needs --mark-timm-steps: our step marks each "
                 "step's start for CUDA graphs, and then timm's unmarked steps are recorded again and again "
                 "(an H100, 2026-12-06: no round in 5.5 minutes); or compare in processes of their own (--arms)")
    if args.mark_timm_steps and not args.one_process:
        sys.exit("step_vs_timm: --mark-timm-steps needs --one-process (timm's own process marks nothing)")
    if args.also and not args.one_process:
        sys.exit("step_vs_timm: --also needs --one-process (its arms run in the one process beside timm's)")
    if len(set(args.also)) != len(args.also):
        sys.exit(f"step_vs_timm: an arm is named twice in --also {' '.join(args.also)}")
    if args.classes is not None and not args.one_process:
        sys.exit("step_vs_timm: --classes needs --one-process (the arms' processes read the preset's file list)")
    if args.profile_steps < 0 or (args.profile_steps and not args.one_process):
        sys.exit("step_vs_timm: --profile-steps needs --one-process and a count of at least 0")
    if args.classes is not None and args.classes < 2:
        sys.exit(f"step_vs_timm: --classes {args.classes}: a classifier needs at least 2 classes")
    config = load_config(args.configfile)
    if args.classes is not None:  # the one batch is yielded 1,000 steps a pass (images only sets that)
        images, classes = 1000 * config["train"]["batch_size"], args.classes
    else:
        filelist, _ = data_paths(config)
        if not filelist.is_file():
            sys.exit(f"step_vs_timm: no file list {filelist}: make the preset's data first (or, with "
                     "--one-process, name the model's --classes)")
        images, classes = count_classes(filelist)
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # kill -USR1: where a stuck run is
    if args.one_process:
        rows = one_process(config, args.mode, rounds=args.rounds, steps=args.steps, warmup=args.warmup,
                           classes=classes, images=images, script=args.script, settings=args.one_process,
                           time_limit=args.time_limit, mark_timm_steps=args.mark_timm_steps,
                           profile_steps=args.profile_steps,
                           profile_out=args.out.with_name(args.out.stem + "-profile.csv"), also=tuple(args.also))
        return report(rows, ["timm", "ours", *args.also], args.mode, args.out)
    logs = args.out.with_name(args.out.name + ".d")
    logs.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    rows: list[dict] = []
    for round_ in range(1, args.rounds + 1):
        if round_ > 1 and args.time_limit is not None and time.monotonic() - start > args.time_limit:
            print(f"stopped after {round_ - 1} of {args.rounds} rounds (--time-limit)", flush=True)
            break
        for arm in args.arms:
            out = logs / f"{arm}-{round_}.csv"
            command = arm_command(arm, config, args.mode, steps=args.steps, blocks=args.blocks,
                                  warmup=args.warmup, classes=classes, out=out, script=args.script,
                                  configfiles=args.configfile)
            began = time.monotonic()
            with open(logs / f"{arm}-{round_}.log", "w") as log:
                log.write(" ".join(command) + "\n")
                log.flush()
                try:
                    done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, cwd=REPO,
                                          timeout=args.process_timeout, env=os.environ.copy())
                except subprocess.TimeoutExpired:
                    sys.exit(f"step_vs_timm: arm {arm} (round {round_}) ran past --process-timeout "
                             f"{args.process_timeout:.0f} s; its output: {log.name}")
            if done.returncode != 0 or not out.is_file():
                sys.exit(f"step_vs_timm: arm {arm} (round {round_}) failed (exit {done.returncode}); "
                         f"its output: {logs / f'{arm}-{round_}.log'}")
            rows.append({"round": round_, "arm": arm, "mode": args.mode, "images_per_s": round(arm_rate(arm, out), 1),
                         "process_s": round(time.monotonic() - began, 1)})
            print(f"round {round_} {arm:<20} {rows[-1]['images_per_s']:8.1f} images/s "
                  f"(process {rows[-1]['process_s']:.0f} s)", flush=True)
    return report(rows, args.arms, args.mode, args.out)


def report(rows: list[dict], arms: list[str], mode: str, out: Path) -> list[dict]:
    """Print the per-arm summary and write the rows and summary to `out`."""
    summary = summarize(rows, arms, mode)
    for row in summary:
        print_median(row, arms[0])
        if "cpu_ms_per_step" in row:
            print(f"{'':<20} per step: {row['wall_ms_per_step']:.2f} ms wall, the host's CPU "
                  f"{row['cpu_ms_per_step']:.2f} ms (the main thread's {row['main_cpu_ms_per_step']:.2f} ms)",
                  flush=True)
    write_csv(out, rows + summary)
    print(f"wrote {out}")
    return rows + summary


HOST_KEYS = ("wall_ms_per_step", "cpu_ms_per_step", "main_cpu_ms_per_step")


def print_median(row: dict, first: str) -> None:
    """One arm's summary line: its median rate, and its per-round ratio to the arm `first`."""
    print(f"{row['arm']:<20} median {row['images_per_s']:8.1f} images/s over {row['rounds']} rounds"
          + (f"; / {first} per round: median {row['ratio_to_first']:.3f} "
             f"({row['ratio_min']:.3f}-{row['ratio_max']:.3f}), ahead in {row['ahead']} of {row['rounds']}"
             f" (two-sided sign test p = {row['sign_test_p']:.3g})"
             if row["arm"] != first else ""), flush=True)


def summarize_again(path: Path, first: str | None) -> list[dict]:
    """The per-round rows of a CSV written before, summarized with `first` as the arm every other
    is paired with round by round (e.g. ours against ours:torch-scaler), and per arm the range of
    the CUDA allocator's memory held after its blocks and its retries and out-of-memory errors."""
    if not path.is_file():
        sys.exit(f"step_vs_timm: no CSV {path}")
    with open(path, newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["round"] != "median"]
    arms = list(dict.fromkeys(row["arm"] for row in rows))
    if not arms:
        sys.exit(f"step_vs_timm: {path} has no rows of rounds")
    if first is not None and first not in arms:
        sys.exit(f"step_vs_timm: no arm {first!r} in {path} (its arms: {', '.join(arms)})")
    first = first or arms[0]
    arms = [first] + [arm for arm in arms if arm != first]
    parsed = [{"round": int(row["round"]), "arm": row["arm"], "images_per_s": float(row["images_per_s"]),
               **{key: float(row[key]) for key in HOST_KEYS if row.get(key)}} for row in rows]
    summary = summarize(parsed, arms, rows[0]["mode"])
    for row in summary:
        print_median(row, first)
        held = [float(r["gpu_reserved_gib"]) for r in rows if r["arm"] == row["arm"] and r.get("gpu_reserved_gib")]
        if held:
            retries = max(int(r["alloc_retries"]) for r in rows if r["arm"] == row["arm"])
            ooms = max(int(r.get("alloc_ooms") or 0) for r in rows if r["arm"] == row["arm"])
            print(f"{'':<20} GPU memory held after its blocks {min(held):.3f}-{max(held):.3f} GiB; the "
                  f"allocator's retries by its last block {retries}, out-of-memory errors {ooms}")
    return summary


def summarize(rows: list[dict], arms: list[str], mode: str) -> list[dict]:
    """Per arm: the median rate over rounds and the median of its per-round ratio to the first arm."""
    by_round: dict[int, dict[str, float]] = {}
    for row in rows:
        by_round.setdefault(row["round"], {})[row["arm"]] = row["images_per_s"]
    complete = [rates for rates in by_round.values() if len(rates) == len(arms)]
    summary = []
    for arm in arms:
        values = [rates[arm] for rates in complete]
        row = {"round": "median", "arm": arm, "mode": mode, "images_per_s": round(statistics.median(values), 1),
               "rounds": len(values)}
        for key in HOST_KEYS:  # one-process rows: the median over the arm's blocks
            times = [r[key] for r in rows if r["arm"] == arm and key in r]
            if times:
                row[key] = round(statistics.median(times), 3)
        if arm != arms[0]:
            ratios = [rates[arm] / rates[arms[0]] for rates in complete]
            row.update(ratio_to_first=round(statistics.median(ratios), 4), ratio_min=round(min(ratios), 4),
                       ratio_max=round(max(ratios), 4), ahead=sum(r > 1 for r in ratios),
                       sign_test_p=float(f"{two_sided_sign_test(ratios):.3g}"),
                       paired=" ".join(f"{r:.4f}" for r in ratios))
        summary.append(row)
    return summary


def two_sided_sign_test(ratios: list[float]) -> float:
    """The chance, were neither arm faster, of rounds at least this lopsided either way (ties left out)."""
    return two_sided(*sign_test(ratios, [1.0] * len(ratios)))


def write_csv(path: Path, rows: list[dict]) -> None:
    fields = list(dict.fromkeys(key for row in rows for key in row))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
