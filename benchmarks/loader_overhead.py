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
import csv
import statistics
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


def run_steps(step, batches, steps: int):
    iterator = iter(batches)
    for _ in range(steps):
        images, labels = next(iterator)
        step(images, labels)


def endless(loader):
    while True:
        yield from loader


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


def bench_mode(mode: str, config: dict, filelist, images_dir, *, steps: int, warmup: int, blocks: int) -> list[dict]:
    t, device = config["train"], torch.device(config["train"]["device"])
    images, classes = train.count_classes(filelist)
    torch.manual_seed(t["seed"])
    model = train.build_model(t["model"], classes, device, t["channels_last"])
    optimizer = train.build_optimizer(model, t["optimizer"], device)
    torch._dynamo.reset()
    kwargs = train.compile_kwargs({"mode": mode})
    if kwargs is not None:
        model = torch.compile(model, **kwargs)
    step = train.make_train_step(model, optimizer, t["precision"], device)
    dali = endless(train.build_loader(filelist, images_dir, t, config["loader"], device, classes, images))
    synthetic = endless(train.build_loader(filelist, images_dir, {**t, "loader": "synthetic"},
                                           config["loader"], device, classes, images))
    compile_s = timed(device, lambda: run_steps(step, synthetic, warmup))
    timed(device, lambda: run_steps(step, dali, warmup))
    rates = {"synthetic": [], "dali": []}
    for _ in range(blocks):
        for name, source in (("synthetic", synthetic), ("dali", dali)):
            seconds = timed(device, lambda: run_steps(step, source, steps))
            rates[name].append(steps * t["batch_size"] / seconds)
    timm_step = timm_style_step(model, device, t["optimizer"]["lr"])
    run_steps(timm_step, synthetic, warmup)
    timm_rates = [steps * t["batch_size"] / timed(device, lambda: run_steps(timm_step, synthetic, steps))
                  for _ in range(blocks)]
    rows = []
    for name, values in (*rates.items(), ("timm-style-synthetic", timm_rates)):
        rows.append({"mode": mode, "feed": name, "images_per_s": round(statistics.median(values), 1),
                     "images_per_s_min": round(min(values), 1), "images_per_s_max": round(max(values), 1),
                     "warmup_s": round(compile_s, 1)})
    ratio = statistics.median(rates["dali"]) / statistics.median(rates["synthetic"])
    rows.append({"mode": mode, "feed": "dali/synthetic", "images_per_s": round(ratio, 4)})
    print(f"{mode:>16}: synthetic {rows[0]['images_per_s']:8.1f}  dali {rows[1]['images_per_s']:8.1f}  "
          f"ratio {ratio:.3f}  timm-style {rows[2]['images_per_s']:8.1f} images/s "
          f"(warm-up incl. compile {compile_s:.0f} s)", flush=True)
    return rows


def bench_dali_alone(config: dict, filelist, images_dir, *, batches: int, threads: int, hw_load: float) -> dict:
    t, device = config["train"], torch.device(config["train"]["device"])
    loader_cfg = {**config["loader"], "threads": threads, "hw_decoder_load": hw_load}
    images, classes = train.count_classes(filelist)
    source = endless(train.build_loader(filelist, images_dir, t, loader_cfg, device, classes, images))
    for _ in range(20):
        next(source)
    seconds = timed(device, lambda: [next(source) for _ in range(batches)])
    rate = batches * t["batch_size"] / seconds
    print(f"DALI alone, {threads} threads, hw_decoder_load {hw_load}: {rate:.0f} images/s", flush=True)
    return {"mode": "-", "feed": f"dali-alone threads={threads} hw_decoder_load={hw_load}",
            "images_per_s": round(rate, 1)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configfile", nargs="*", default=[], help="presets merged over config.yaml")
    parser.add_argument("--modes", nargs="*", default=["none", "default", "reduce-overhead", "max-autotune"])
    parser.add_argument("--steps", type=int, default=150, help="steps per timed block")
    parser.add_argument("--blocks", type=int, default=3, help="timed blocks per feed (median reported)")
    parser.add_argument("--warmup", type=int, default=30, help="untimed steps per feed first")
    parser.add_argument("--dali-only", action="store_true", help="only time DALI alone")
    parser.add_argument("--threads", type=int, nargs="*", help="DALI threads to try (default: config)")
    parser.add_argument("--hw-loads", type=float, nargs="*", help="hw_decoder_load values (default: config)")
    parser.add_argument("--out", default="results/loader_overhead.csv")
    args = parser.parse_args(argv)

    config = load_config(args.configfile)
    filelist, images_dir = data_paths(config)
    print(f"{config['train']['model']}, batch {config['train']['batch_size']}, {config['train']['precision']}, "
          f"{filelist}; {versions()}", flush=True)
    rows = []
    for threads in args.threads or [config["loader"]["threads"]]:
        for hw_load in args.hw_loads or [config["loader"]["hw_decoder_load"]]:
            rows.append(bench_dali_alone(config, filelist, images_dir, batches=300, threads=threads,
                                         hw_load=hw_load))
    if not args.dali_only:
        for mode in args.modes:
            rows.extend(bench_mode(mode, config, filelist, images_dir, steps=args.steps,
                                   warmup=args.warmup, blocks=args.blocks))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fields = ["mode", "feed", "images_per_s", "images_per_s_min", "images_per_s_max", "warmup_s"]
    with open(args.out, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
