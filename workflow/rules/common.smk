# Config validation and the small helpers every rule file uses.
import difflib
import re
from pathlib import Path

import jsonschema
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

CONFIG_SCHEMA = Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml"
JSON_TYPES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "empty (null)",
}


def json_type(value):
    """JSON schema's name for a YAML value's type (bool before int: True is an int in Python)."""
    kinds = [("boolean", bool), ("integer", int), ("number", float), ("string", str)]
    kinds += [("object", dict), ("array", list)]
    return next((name for name, kind in kinds if isinstance(value, kind)), "null")


def config_key(error):
    return ".".join(str(part) for part in error.absolute_path) or "(top level)"


def unknown_keys(error):
    """One line per unknown key, with the closest allowed key and all allowed keys."""
    allowed = list(error.schema.get("properties", {}))
    lines = []
    for key in sorted(set(error.instance) - set(allowed)):
        close = difflib.get_close_matches(str(key), allowed, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        lines.append(
            f"{config_key(error)}: unknown key {key!r}{hint}; allowed keys: {', '.join(allowed)}"
        )
    return lines


def describe_config_error(error):
    """Lines a user can act on: the key path, what is wrong and what is allowed."""
    key, value, rule = config_key(error), error.instance, error.validator_value
    bounds = {
        "minimum": ">=",
        "exclusiveMinimum": ">",
        "maximum": "<=",
        "exclusiveMaximum": "<",
    }
    if error.validator == "additionalProperties" and isinstance(value, dict):
        return unknown_keys(error)
    if error.validator == "enum":
        allowed = ", ".join("null" if v is None else str(v) for v in rule)
        return [f"{key}: {value!r} is not allowed; allowed values: {allowed}"]
    if error.validator == "type":
        wanted = [rule] if isinstance(rule, str) else rule
        return [
            f"{key}: {value!r} is {JSON_TYPES[json_type(value)]}"
            f", expected {' or '.join(JSON_TYPES[t] for t in wanted)}"
        ]
    if error.validator in bounds:
        return [
            f"{key}: {value!r} is out of range; it must be {bounds[error.validator]} {rule}"
        ]
    return [f"{key}: {error.message}"]


def validate_config():
    """Schema validation (with defaults filled in) that names every bad key and its allowed values."""
    try:
        validate(config, str(CONFIG_SCHEMA), set_default=True)
    except WorkflowError:
        schema = yaml.safe_load(CONFIG_SCHEMA.read_text())
        errors = jsonschema.Draft202012Validator(schema).iter_errors(config)
        errors = sorted(errors, key=lambda e: [str(part) for part in e.absolute_path])
        lines = [line for error in errors for line in describe_config_error(error)]
        if not lines:
            raise  # not a problem with the config's values: Snakemake's own message
        raise WorkflowError(
            f"invalid configuration (checked against {CONFIG_SCHEMA.relative_to(workflow.basedir)}):\n"
            + "\n".join(f"  - {line}" for line in lines)
        ) from None


def check_batch_fits_synthetic_data():
    """Generated data's size is known before any job runs; downloaded data is counted by train.py."""
    data, batch_size = config["dataset"], config["train"]["batch_size"]
    if data["source"] != "synthetic":
        return
    sizes = data["synthetic"]
    per_class = sizes["train_per_class"]
    if data["split"] == "all":
        per_class += sizes["test_per_class"]
    images = sizes["classes"] * per_class
    if batch_size > images:
        raise WorkflowError(
            f"invalid configuration: train.batch_size {batch_size} is larger than the synthetic "
            f"dataset: {images} images (dataset.synthetic.classes {sizes['classes']} x {per_class} "
            f"images per class in split {data['split']!r}); lower train.batch_size or raise "
            "dataset.synthetic.train_per_class"
        )


validate_config()
check_batch_fits_synthetic_data()

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
        raise WorkflowError(
            f"invalid configuration: modes.{name}: `mode` and `options` cannot be combined "
            "(torch.compile refuses both)"
        )
    if settings.get("mode") not in VALID_COMPILE_MODES | {None}:
        raise WorkflowError(
            f"invalid configuration: modes.{name}: no `mode` given and {name!r} is not a "
            f"torch.compile mode; set modes.{name}.mode to one of {sorted(VALID_COMPILE_MODES)}"
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


def repeat_suffix(repeat):
    """Repeat 1 keeps the plain name (`<mode>.csv`), so adding repeats never renames a result."""
    return "" if repeat == 1 else f".rep{repeat}"


def timing_outputs(kind):
    """Every training job's timing file, mode by mode, repeats 1..train.repeats in order."""
    return [
        f"{RESULTS}/timings/{mode}{repeat_suffix(repeat)}.{kind}"
        for mode in MODES
        for repeat in range(1, config["train"]["repeats"] + 1)
    ]


def summary_outputs():
    return [
        f"{RESULTS}/summary.csv",
        f"{RESULTS}/summary.md",
        f"{RESULTS}/repeats.csv",
        *expand(
            f"{RESULTS}/plots/{{plot}}.{{ext}}",
            plot=[*PLOTS, "vs_article"],
            ext=["png", "svg"],
        ),
        f"{RESULTS}/provenance.json",
        f"{RESULTS}/provenance.md",
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
