# Config validation and the small helpers every rule file uses.
import re

from snakemake.utils import validate

validate(config, "../schemas/config.schema.yaml", set_default=True)

RUN = config["run"]
RESULTS = f"results/{RUN}"
VALID_COMPILE_MODES = {
    "none",
    "default",
    "reduce-overhead",
    "max-autotune",
    "max-autotune-no-cudagraphs",
}


def dataset_id():
    """Folder under resources/ for the configured data: generated data gets its parameters in the name."""
    if config["dataset"]["source"] == "food101":
        return "food101"
    s = config["dataset"]["synthetic"]
    return (
        f"synthetic-c{s['classes']}-{s['train_per_class']}+{s['test_per_class']}"
        f"-px{s['max_side']}-seed{s['seed']}"
    )


DATA = f"resources/{dataset_id()}"
ARCHIVE = f"{DATA}/food-101.tar" + (
    ".gz" if config["dataset"]["source"] == "food101" else ""
)


def compile_settings(name):
    """A mode's torch.compile settings with defaults filled in; `mode` defaults to the variant's name."""
    settings = dict(config["modes"][name] or {})
    if "mode" not in settings and not settings.get("options"):
        settings["mode"] = name
    if settings.get("options") and settings.get("mode") is not None:
        raise ValueError(
            f"modes.{name}: `mode` and `options` cannot be combined (torch.compile refuses both)"
        )
    if settings.get("mode") not in VALID_COMPILE_MODES | {None}:
        raise ValueError(
            f"modes.{name}: no `mode` given and {name!r} is not a torch.compile mode; "
            f"set modes.{name}.mode to one of {sorted(VALID_COMPILE_MODES)}"
        )
    settings.setdefault("backend", "inductor")
    settings.setdefault("fullgraph", False)
    settings.setdefault("dynamic", None)
    return settings


MODES = list(config["modes"])
for _mode in MODES:
    compile_settings(_mode)  # fail on a bad mode before any job runs


wildcard_constraints:
    mode="|".join(re.escape(m) for m in MODES),


def timing_outputs(kind):
    return expand(f"{RESULTS}/timings/{{mode}}.{kind}", mode=MODES)


def summary_outputs():
    return [
        f"{RESULTS}/summary.csv",
        f"{RESULTS}/summary.md",
        *expand(f"{RESULTS}/plots/{{plot}}.{{ext}}", plot=PLOTS, ext=["png", "svg"]),
    ]


PLOTS = ["epoch_times", "speedup", "loss"]


def dataset_note():
    """How the data was made, for titles: synthetic results must never pass for Food-101 ones."""
    d = config["dataset"]
    if d["source"] == "food101":
        return f"Food-101 ({d['split']} split)"
    s = d["synthetic"]
    return (
        f"synthetic Food-101-shaped data ({s['classes']} classes x "
        f"{s['train_per_class'] + s['test_per_class']} images, {d['split']} split), not real Food-101"
    )


def device_note():
    t = config["train"]
    return f"{t['model']}, batch {t['batch_size']}, {t['precision']}, {t['device']}, loader {t['loader']}"
