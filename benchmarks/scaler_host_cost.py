"""What the gradient scaler's calls cost the host per training step, beside the optimizer's own step.

Where the host sets a step's pace (eager and `default` on a slow host: docs/reference/h100/2026-12-07f,
where our `default` step fell 4% behind timm's scaler-free one), every microsecond of Python and
launches per step counts. Our step keeps fp16 loss scaling (scale the loss, check the gradients for
inf/NaN, step, update the scale): with train.FusedLossScaler since 2026-12-07h (GradScaler's math
without its per-step host work), with torch.amp.GradScaler before; timm's benchmark has none. This builds the
training job's model and optimizer (train.build_model, train.build_optimizer: fused SGD on CUDA),
gives every parameter a fixed finite gradient, and times, for --steps steps each:

  optimizer step     optimizer.step() alone, as timm's step ends
  scaler and step    scaler.scale(loss); scaler.step(optimizer); scaler.update() (torch.amp.GradScaler),
                     as ours ended before 2026-12-07h
  fused scaler and step  train.FusedLossScaler's scale_loss(loss); step(), as ours ends (fused
                     optimizers only: on CUDA; on a CPU device with --fused)

printing per step the main thread's CPU time (the host's work: Python, dispatch, launches; it does
not count waiting for the GPU, since the clock of the thread is read before the one sync at the end)
and the wall time. The difference of a scaler's CPU time and the step's alone is that scaler's host
cost per step. On a
CPU device the kernels run on the host too, so there it is their work as well, not the overhead
alone, unless --tiny leaves only that.

    python benchmarks/scaler_host_cost.py --configfile configs/synthetic-food101.yaml     # a GPU host
    python benchmarks/scaler_host_cost.py --configfile configs/synthetic-food101.yaml --device cpu --tiny --fused
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow" / "scripts"))
sys.path.insert(0, str(REPO / "benchmarks"))

import loader_overhead  # noqa: E402
import train  # noqa: E402


def per_step(fn, steps: int, warmup: int, device: torch.device) -> tuple[float, float]:
    """(main thread's CPU us, wall us) per call of fn, over `steps` calls after `warmup`."""
    for _ in range(warmup):
        fn()
    train.synchronize(device)
    cpu, wall = time.thread_time(), time.perf_counter()
    for _ in range(steps):
        fn()
    cpu = time.thread_time() - cpu
    train.synchronize(device)
    return cpu * 1e6 / steps, (time.perf_counter() - wall) * 1e6 / steps


def measure(config: dict, steps: int, warmup: int, classes: int, tiny: bool = False,
            fused: bool = False) -> tuple[str, dict[str, tuple[float, float]]]:
    """(what was stepped, {variant: (host CPU us, wall us) per step}); `tiny`: as many parameters
    as the model's, of 8 elements each; `fused`: SGD(fused=True) whatever the device (CUDA's always)."""
    t = config["train"]
    device = train.check_device(t["device"])
    torch.manual_seed(t["seed"])
    model = train.build_model(t["model"], classes, device, t["channels_last"])
    if tiny:
        model = torch.nn.ParameterList(torch.nn.Parameter(torch.zeros(8, device=device)) for _ in model.parameters())
    optimizer = train.build_optimizer(model, t["optimizer"], device, fused=fused or None)
    for param in model.parameters():
        param.grad = torch.full_like(param, 1e-3)
    # enabled whatever the preset's precision: the cost asked about is the fp16 job's
    scaler = torch.amp.GradScaler(device.type)
    loss = torch.ones((), device=device, requires_grad=True)

    def scaled() -> None:
        scaler.scale(loss)
        scaler.step(optimizer)
        scaler.update()

    # the optimizer's kind as train.build_optimizer chose it for the device
    kind = "fused" if optimizer.defaults.get("fused") else "foreach" if optimizer.defaults.get("foreach") else "for-loop"
    what = (f"{len(list(model.parameters()))} parameter tensors{' of 8 elements' if tiny else ''}, "
            f"{type(optimizer).__name__} ({kind})")
    found = {"optimizer step": per_step(optimizer.step, steps, warmup, device),
             "scaler and step": per_step(scaled, steps, warmup, device)}
    if optimizer.defaults.get("fused"):
        lean = train.FusedLossScaler(optimizer, device)

        def lean_scaled() -> None:
            lean.scale_loss(loss)
            lean.step()

        found["fused scaler and step"] = per_step(lean_scaled, steps, warmup, device)
    return what, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configfile", nargs="*", default=[], help="presets merged over config.yaml")
    parser.add_argument("--steps", type=int, default=2000, help="timed steps per variant")
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--classes", type=int, default=101)
    parser.add_argument("--device", help="over the config's train.device (e.g. cpu)")
    parser.add_argument("--tiny", action="store_true",
                        help="as many parameters as the model's, of 8 elements each: the kernels' work "
                             "vanishes and the host's overhead (Python, dispatch, launches) is left, "
                             "on a CPU device too")
    parser.add_argument("--fused", action="store_true",
                        help="fused SGD on any device (train.build_optimizer's on CUDA, foreach on the CPU), "
                             "so that train.FusedLossScaler is timed on a CPU device too")
    args = parser.parse_args()
    if args.steps < 1 or args.warmup < 1 or args.classes < 2:
        sys.exit("scaler_host_cost: --steps and --warmup must be at least 1, --classes at least 2")
    config = loader_overhead.load_config(args.configfile)
    t = config["train"]
    if args.device:
        t["device"] = args.device
    what, found = measure(config, args.steps, args.warmup, args.classes, args.tiny, args.fused)
    print(f"{t['model']} on {t['device']}, {what}, {args.steps} steps each; "
          f"Python {sys.version.split()[0]}, torch {torch.__version__}")
    for name, (cpu, wall) in found.items():
        print(f"  {name:<22} host CPU {cpu:8.1f} us per step, wall {wall:8.1f} us")
    for name, scaler in (("scaler and step", "torch.amp.GradScaler"), ("fused scaler and step", "train.FusedLossScaler")):
        if name in found:
            extra = found[name][0] - found["optimizer step"][0]
            print(f"  {scaler}'s host cost: {extra:+.1f} us per step")


if __name__ == "__main__":
    main()
