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

Every arm compiles with torch.compile's mode --mode (`none`: eager) and shares the inductor cache of
the environment, so only the first round pays a cold compile; compile time is never timed (both
scripts warm up first). Each arm's own output is kept beside the CSV (<out>.d/).

    python benchmarks/step_vs_timm.py --configfile configs/synthetic-food101.yaml --mode default \
        --rounds 4 --arms timm timm+ours ours ours+cuda-defaults --out results/step_vs_timm-default.csv
"""
from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "workflow" / "scripts"))

from loader_overhead import data_paths, load_config  # noqa: E402
from train import count_classes  # noqa: E402

ARMS = ("timm", "timm+ours", "ours", "ours+cuda-defaults")
AMP_DTYPES = {"fp16": "float16", "bf16": "bfloat16"}


def arm_command(arm: str, config: dict, mode: str, *, steps: int, blocks: int, warmup: int, classes: int,
                out: Path, script: Path | None, configfiles: list[str]) -> list[str]:
    """The command line of one arm's process; its images/s lands in `out` (a CSV)."""
    t = config["train"]
    if arm.startswith("timm"):
        command = [sys.executable, str(REPO / "benchmarks" / "timm_bench.py"),
                   *(["--script", str(script)] if script else []),
                   "--bench", "train", "--model", t["model"], "-b", str(t["batch_size"]),
                   "--img-size", str(t["image_size"]), "--num-classes", str(classes), "--device", t["device"],
                   "--no-retry", "--num-warm-iter", str(warmup), "--num-bench-iter", str(steps * blocks),
                   "--results-file", str(out)]
        if t["precision"] in AMP_DTYPES:
            command += ["--amp", "--amp-dtype", AMP_DTYPES[t["precision"]]]
        if t["channels_last"]:
            command.append("--channels-last")
        if mode != "none":
            command += ["--torchcompile", "inductor", "--torchcompile-mode", mode]
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


def arm_rate(arm: str, out: Path) -> float:
    rows = list(csv.DictReader(out.open()))
    if arm.startswith("timm"):
        return float(rows[0]["train_samples_per_sec"])
    return float(next(row["images_per_s"] for row in rows if row["feed"].startswith("synthetic")))


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
    parser.add_argument("--out", type=Path, default=Path("results/step_vs_timm.csv"))
    args = parser.parse_args(argv)
    if len(set(args.arms)) != len(args.arms):
        sys.exit(f"step_vs_timm: an arm is named twice in {' '.join(args.arms)}")
    if args.rounds < 1 or args.steps < 1 or args.blocks < 1 or args.warmup < 1:
        sys.exit("step_vs_timm: --rounds, --steps, --blocks and --warmup must be at least 1")
    config = load_config(args.configfile)
    filelist, _ = data_paths(config)
    if not filelist.is_file():
        sys.exit(f"step_vs_timm: no file list {filelist}: make the preset's data first")
    classes = count_classes(filelist)[1]
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
    summary = summarize(rows, args.arms, args.mode)
    for row in summary:
        print(f"{row['arm']:<20} median {row['images_per_s']:8.1f} images/s over {row['rounds']} rounds"
              + (f"; / {args.arms[0]} per round: median {row['ratio_to_first']:.3f} "
                 f"({row['ratio_min']:.3f}-{row['ratio_max']:.3f}), ahead in {row['ahead']} of {row['rounds']}"
                 if row["arm"] != args.arms[0] else ""), flush=True)
    write_csv(args.out, rows + summary)
    print(f"wrote {args.out}")
    return rows + summary


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
        if arm != arms[0]:
            ratios = [rates[arm] / rates[arms[0]] for rates in complete]
            row.update(ratio_to_first=round(statistics.median(ratios), 4), ratio_min=round(min(ratios), 4),
                       ratio_max=round(max(ratios), 4), ahead=sum(r > 1 for r in ratios),
                       paired=" ".join(f"{r:.4f}" for r in ratios))
        summary.append(row)
    return summary


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
