"""Where DALI's CPU time goes: the training pipeline cut after each stage, alone (no training).

The training job's own DALI pipeline (workflow/scripts/train.py) is built once per stage, ending
after it: read (the file reader: the JPEGs' bytes), decode (+ the random-resized-crop decoder),
resize (+ resize to the training size), normalize (+ flip, normalise, HWC: the whole pipeline, run
by DALI's own Pipeline.run()), and loader (the whole pipeline through the training job's DaliLoader:
DALI's PyTorch iterator, the cut into training batches, the fetch thread if the config has one).
Blocks of each stage alternate over rounds (drift on the host hits all alike); each starts by
taking the batches DALI had ready (its prefetch queue), so it times batches made while it runs:
make blocks much longer than the prefetch queue (the default, 100 training batches, is). Per stage it prints
images/s and, per training batch, the TLB shootdowns the machine's CPUs sent each other (x86's
/proc/interrupts: DALI maps each file it reads by default, and unmapping one interrupts every CPU
running a thread of this process) and the CPU ms of that stage's own DALI threads (told apart by the
threads each pipeline started, a fetch thread included) and of this process's main thread; a
stage's cost is the difference from the stage before. `all_cpu_ms` counts every thread of the
process (CUDA's too). The cut stages run one pipeline; the loader stage has the config's
`loader.pipelines`.

    python benchmarks/dali_stages.py --configfile configs/synthetic-food101.yaml \
        --batches 100 --rounds 5 --out results/dali_stages.csv

Reads the preset's file list (make it first: snakemake ... resources/<dataset>/filelists/all.txt).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

import torch
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow" / "scripts"))
sys.path.insert(0, str(REPO / "benchmarks"))

import train  # noqa: E402
from loader_overhead import data_paths, endless, load_config, write_csv  # noqa: E402
from sysinfo import versions  # noqa: E402

STAGES = (*train.DALI_STAGES, "loader")


def task_cpu_ns() -> dict[int, int]:
    """CPU ns so far of each of this process's threads (train.thread_stats: Linux's schedstat)."""
    return {tid: stats[1] for tid, stats in train.thread_stats().items()}


class Stage:
    """One stage's source of batches and the threads it started."""

    def __init__(self, name: str, config: dict, filelist, images_dir):
        t, loader = config["train"], config["loader"]
        self.name, self.device = name, torch.device(t["device"])
        before = set(task_cpu_ns())
        if name == "loader":
            self.loader = train.dali_loader(filelist, images_dir, t, loader, self.device)
            self.images_per_fetch = t["batch_size"]
            self._source = endless(self.loader)
            self.next = lambda: next(self._source)
        else:
            (pipe,) = train.dali_pipelines(filelist, images_dir, t, {**loader, "pipelines": 1}, self.device,
                                           until=name)
            pipe.build()
            self.images_per_fetch = pipe.max_batch_size
            self.next = pipe.run
        self.batch_size = t["batch_size"]
        # what DALI (and a fetch thread) hold ready: taken before each timed block, so that the
        # block times batches made while it runs, the pipeline busy from its start to its end
        ahead_fetches = loader["prefetch"] + (2 if name == "loader" and loader.get("fetch") == "thread" else 0)
        self.ahead = ahead_fetches * (loader.get("batches_per_fetch", 1) if name == "loader" else 1)
        self.warm(5)  # some threads start at the first batches (the decoders' own)
        self.threads = set(task_cpu_ns()) - before - {threading.main_thread().native_id}

    def close(self) -> None:
        """Stop the loader's iteration (its fetch thread with it)."""
        if self.name == "loader":
            self._source.close()

    def warm(self, fetches: int) -> None:
        for _ in range(fetches):
            self.next()
        train.synchronize(self.device)


def time_block(stage: Stage, images: int) -> dict:
    """Fetch `images` images' worth of batches; images/s and CPU ms per training batch."""
    fetches = max(1, images // stage.images_per_fetch)
    main = threading.main_thread().native_id
    for _ in range(stage.ahead):
        stage.next()
    train.synchronize(stage.device)
    interrupts, before, start = train.machine_interrupts(), task_cpu_ns(), time.perf_counter()
    for _ in range(fetches):
        stage.next()
    train.synchronize(stage.device)
    seconds, after = time.perf_counter() - start, task_cpu_ns()
    interrupts = {k: v - interrupts[k] for k, v in train.machine_interrupts().items() if k in interrupts}
    done = fetches * stage.images_per_fetch
    per_batch = stage.batch_size / done / 1e6  # ns -> ms per training batch

    def cpu(tids) -> float:
        return sum(after[tid] - before.get(tid, 0) for tid in tids if tid in after) * per_batch

    return {"images_per_s": done / seconds, "dali_cpu_ms": cpu(stage.threads), "main_cpu_ms": cpu({main}),
            "all_cpu_ms": cpu(after), **{k: v * stage.batch_size / done for k, v in interrupts.items()}}


def run(config: dict, filelist, images_dir, *, stages, images: int, rounds: int) -> list[dict]:
    built = []
    blocks = {name: [] for name in stages}
    try:
        for name in stages:
            built.append(Stage(name, config, filelist, images_dir))
        for _ in range(rounds):
            for stage in built:
                blocks[stage.name].append(time_block(stage, images))
    finally:
        for stage in built:
            stage.close()
    rows = []
    for stage in built:
        timed = blocks[stage.name]
        row = {"stage": stage.name, "blocks": len(timed), "images_per_block": images}
        for key in ("images_per_s", "dali_cpu_ms", "main_cpu_ms", "all_cpu_ms", *train.INTERRUPT_LINES.values()):
            if key not in timed[0]:
                continue  # interrupts this kernel does not report
            values = [block[key] for block in timed]
            row[key] = round(statistics.median(values), 3 if key != "images_per_s" else 1)
        row["images_per_s_min"] = round(min(b["images_per_s"] for b in timed), 1)
        row["images_per_s_max"] = round(max(b["images_per_s"] for b in timed), 1)
        row["dali_threads"] = len(stage.threads)
        rows.append(row)
    return rows


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configfile", nargs="*", default=[], help="presets merged over config.yaml")
    parser.add_argument("--stages", nargs="*", default=list(STAGES), choices=STAGES)
    parser.add_argument("--batches", type=int, default=100, help="training batches per block")
    parser.add_argument("--rounds", type=int, default=5, help="blocks per stage (medians reported)")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="loader settings over the config's, e.g. threads=2 decoder=cpu batches_per_fetch=1 "
                             "reader.dont_use_mmap=true decoder.use_fast_idct=true")
    parser.add_argument("--out", default="results/dali_stages.csv")
    args = parser.parse_args(argv)
    if args.batches < 1 or args.rounds < 1:
        parser.error("--batches and --rounds must be 1 or more")
    config = load_config(args.configfile)
    for item in args.set:
        key, sep, value = item.partition("=")
        prefix, dot, name = key.partition(".")
        if sep and dot and prefix in ("reader", "decoder") and name:  # an argument of DALI's reader / decoder
            options = config["loader"].get(f"{prefix}_options") or {}
            config["loader"][f"{prefix}_options"] = {**options, name: yaml.safe_load(value)}
            continue
        kind = type(config["loader"].get(key))
        if not sep or kind not in (int, float, str, bool):
            scalars = [k for k, v in config["loader"].items() if isinstance(v, (int, float, str))]
            parser.error(f"--set {item!r}: use KEY=VALUE with one of the loader settings {', '.join(scalars)}, "
                         "or reader.NAME=VALUE / decoder.NAME=VALUE (an argument of DALI's reader / decoder)")
        try:
            config["loader"][key] = value.lower() in ("1", "true", "yes") if kind is bool else kind(value)
        except ValueError:
            parser.error(f"--set {item!r}: {key} takes a {kind.__name__}")
    filelist, images_dir = data_paths(config)
    if not Path(filelist).is_file():
        sys.exit(f"dali_stages: no file list {filelist}: make the preset's data first")
    train.check_device(config["train"]["device"])
    loader = config["loader"]
    print(f"{filelist}; device {config['train']['device']}, decoder {loader.get('decoder', 'mixed')}, "
          f"{loader['threads']} threads, hw_decoder_load {loader['hw_decoder_load']}, prefetch {loader['prefetch']}, "
          f"batches_per_fetch {loader.get('batches_per_fetch', 1)}, fetch {loader.get('fetch', 'inline')}; "
          f"{versions()}", flush=True)
    rows = run(config, filelist, images_dir, stages=args.stages,
               images=args.batches * config["train"]["batch_size"], rounds=args.rounds)
    previous = None
    print(f"{'stage':<10} {'images/s':>9} {'DALI CPU ms/batch':>18} {'+ over previous':>16} {'main CPU ms':>12} "
          f"{'TLB shootdowns/batch':>21}")
    for row in rows:
        extra = "" if previous is None else f"{row['dali_cpu_ms'] - previous['dali_cpu_ms']:+16.2f}"
        tlb = f"{row['tlb_shootdowns']:21.1f}" if "tlb_shootdowns" in row else f"{'n/a':>21}"
        print(f"{row['stage']:<10} {row['images_per_s']:9.0f} {row['dali_cpu_ms']:18.2f} {extra:>16} "
              f"{row['main_cpu_ms']:12.2f} {tlb}", flush=True)
        previous = row
    settings = {"device": config["train"]["device"], "decoder": loader.get("decoder", "mixed"),
                "reader_options": loader.get("reader_options") or {},
                "decoder_options": loader.get("decoder_options") or {},
                "threads": loader["threads"], "hw_decoder_load": loader["hw_decoder_load"],
                "prefetch": loader["prefetch"], "batches_per_fetch": loader.get("batches_per_fetch", 1),
                "fetch": loader.get("fetch", "inline"), "batch_size": config["train"]["batch_size"]}
    write_csv(args.out, [{**row, **settings} for row in rows])
    print(f"wrote {args.out}")
    return rows


if __name__ == "__main__":
    main()
