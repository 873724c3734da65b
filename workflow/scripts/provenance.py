"""Record what one run measured, on what, with which software: provenance.json, a readable
provenance.md and the resolved config.yaml (config files merged, schema defaults filled in)."""

# No `from __future__` import: Snakemake prepends code to scripts it runs.
import argparse
import datetime
import json
import logging
import platform
import sys
from pathlib import Path

import yaml

from common import PipelineError, atomic_write, repeat_of, setup_cli_logging, snakemake_log
from sysinfo import git_state, installed_packages

SOFTWARE_KEYS = ["python", "torch", "torchvision", "dali", "cuda", "cudnn"]
HARDWARE_KEYS = ["gpu", "gpu_count", "driver", "cpu", "cpu_cores", "os_release", "os", "hostname"]
LABELS = {
    "python": "Python", "torch": "PyTorch", "torchvision": "torchvision", "dali": "NVIDIA DALI",
    "cuda": "CUDA (PyTorch build)", "cudnn": "cuDNN", "gpu": "GPU", "gpu_count": "GPUs visible",
    "driver": "NVIDIA driver", "cpu": "CPU", "cpu_cores": "CPU cores (logical)", "os_release": "OS distribution",
    "os": "OS (kernel, C library)",
    "hostname": "host", "device": "device",
}

log = logging.getLogger(__name__)


def _utc(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp, datetime.timezone.utc).isoformat(timespec="seconds")


def training_jobs(timing_jsons: list) -> list[dict]:
    """Device and versions of every training job, read from its JSON (they ran on the GPU)."""
    jobs = []
    for path in timing_jsons:
        path = Path(path)
        try:
            meta = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as err:
            raise PipelineError(f"{path}: cannot read timing JSON: {err}") from err
        jobs.append({
            "mode": str(meta.get("mode", path.stem)),
            "repeat": repeat_of(path),
            "file": path.name,
            "finished_utc": _utc(path.stat().st_mtime),
            "device": meta.get("device", "unknown"),
            "versions": meta.get("versions") or {},
        })
    return jobs


def common_facts(jobs: list[dict], keys: list[str]) -> dict:
    """Each key's value if every job agrees on it; otherwise a note that it differs."""
    facts = {}
    for key in keys:
        values = {json.dumps(job["versions"].get(key, "unknown")) for job in jobs}
        facts[key] = (json.loads(values.pop()) if len(values) == 1
                      else "differs between training jobs (see training_jobs)")
    return facts


def build(timing_jsons: list, *, run_name: str, config: dict, workflow_dir, snakemake_version: str,
          filelists_report=None) -> dict:
    jobs = training_jobs(timing_jsons)
    git = git_state(workflow_dir)
    dataset = {key: config["dataset"].get(key) for key in ("source", "split", "url", "sha256")}
    if config["dataset"].get("source") == "synthetic":
        dataset = {"source": "synthetic", "split": config["dataset"].get("split"),
                   "synthetic": config["dataset"].get("synthetic")}
    if filelists_report is not None:
        dataset["filelists"] = json.loads(Path(filelists_report).read_text())
    return {
        "run": run_name,
        "written_utc": _utc(datetime.datetime.now().timestamp()),
        "workflow": {
            "git_commit": git["commit"],
            "git_dirty": git["dirty"],
            "git_changed_files": git["changed_files"],
            "snakemake": snakemake_version,
        },
        "software": common_facts(jobs, SOFTWARE_KEYS),
        "hardware": {"device": common_facts([{"versions": {"device": j["device"]}} for j in jobs],
                                            ["device"])["device"],
                     **common_facts(jobs, HARDWARE_KEYS)},
        "training_jobs": jobs,
        "dataset": dataset,
        "config": config,
        "python_packages": {
            "note": "installed where this rule ran: the training environment (envs/train.yaml under "
                    "--use-conda, else the interpreter that runs Snakemake)",
            "python": platform.python_version(),
            "prefix": sys.prefix,
            "packages": installed_packages(),
        },
    }


# ---------------------------------------------------------------- Markdown
def _table(header: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]


def _git_text(workflow: dict) -> str:
    if workflow["git_commit"] == "unknown":
        return "unknown (the workflow did not run from a git checkout)"
    if not workflow["git_dirty"]:
        return f"`{workflow['git_commit']}` (clean)"
    changed = workflow["git_changed_files"]
    shown = ", ".join(f"`{name}`" for name in changed[:10]) + (" ..." if len(changed) > 10 else "")
    return f"`{workflow['git_commit']}` **with uncommitted changes** in {len(changed)} file(s): {shown}"


def _software_text(key: str, value, device) -> str:
    """A version for the table; PyTorch's CUDA version says whether the jobs used CUDA at all."""
    if value is None:
        return "none"
    if key == "cuda" and device == "cpu":
        return f"{value} (not used: the jobs ran on the CPU)"
    return str(value)


def render_markdown(prov: dict) -> str:
    workflow, packages = prov["workflow"], prov["python_packages"]
    lines = [f"# Provenance of run {prov['run']}", "",
             f"Written {prov['written_utc']} by the pipeline's `provenance` rule; the same facts are in "
             "`provenance.json`, the resolved configuration in `config.yaml`. Software and hardware "
             "are those the training jobs recorded in their JSONs.", "",
             "## Workflow", ""]
    lines += _table(["", "value"], [["git commit", _git_text(workflow)], ["Snakemake", workflow["snakemake"]]])
    lines += ["", "## Software of the training jobs", ""]
    lines += _table(["component", "version"],
                    [[LABELS[k], _software_text(k, v, prov["hardware"].get("device"))]
                     for k, v in prov["software"].items()])
    lines += ["", "## Hardware of the training jobs", ""]
    lines += _table(["", "value"],
                    [[LABELS[k], v if v is not None else "none"] for k, v in prov["hardware"].items()])
    lines += ["", "## Training jobs", ""]
    lines += _table(["mode", "repeat", "device", "GPU", "finished (UTC)"],
                    [[j["mode"], j["repeat"], j["device"], j["versions"].get("gpu") or "none",
                      j["finished_utc"]] for j in prov["training_jobs"]])
    lines += ["", "## Dataset", "", "```json", json.dumps(prov["dataset"], indent=2), "```", "",
              "## Configuration (resolved: config files merged, defaults filled in)", "",
              "```yaml", yaml.safe_dump(prov["config"], sort_keys=False).rstrip(), "```", "",
              f"## Python packages ({len(packages['packages'])}, Python {packages['python']})", "",
              f"Installed in `{packages['prefix']}`: {packages['note']}.", ""]
    lines += _table(["package", "version"], [[name, v] for name, v in packages["packages"].items()])
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- entry
def main(timing_jsons: list, out_json, out_md, out_config, *, run_name: str, config: dict,
         workflow_dir, snakemake_version: str, filelists_report=None) -> dict:
    prov = build(list(timing_jsons), run_name=run_name, config=config, workflow_dir=workflow_dir,
                 snakemake_version=snakemake_version, filelists_report=filelists_report)
    with atomic_write(out_json) as handle:
        json.dump(prov, handle, indent=2, default=str)
        handle.write("\n")
    with atomic_write(out_md, encoding="utf-8") as handle:
        handle.write(render_markdown(prov))
    with atomic_write(out_config) as handle:
        handle.write(f"# Resolved configuration of run {run_name}: every config file merged, schema "
                     "defaults filled in.\n# Rerun with: snakemake --cores all --configfile <this file>\n")
        yaml.safe_dump(config, handle, sort_keys=False)
    log.info("git %s (dirty: %s), %d training jobs, %d packages", prov["workflow"]["git_commit"],
             prov["workflow"]["git_dirty"], len(prov["training_jobs"]),
             len(prov["python_packages"]["packages"]))
    return prov


def _cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", nargs="+", required=True, help="results/<run>/timings/*.json")
    parser.add_argument("--config", required=True, help="resolved config as YAML")
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--workflow-dir", default=".")
    parser.add_argument("--filelists-report", default=None)
    parser.add_argument("--snakemake-version", default="unknown")
    args = parser.parse_args()
    config = yaml.safe_load(Path(args.config).read_text())
    out = Path(args.out_dir)
    try:
        main(args.json, out / "provenance.json", out / "provenance.md", out / "config.yaml",
             run_name=config["run"], config=config, workflow_dir=args.workflow_dir,
             snakemake_version=args.snakemake_version, filelists_report=args.filelists_report)
    except PipelineError as err:
        raise SystemExit(f"error: {err}") from None


if __name__ == "__main__":
    if "snakemake" in globals():
        with snakemake_log(snakemake):  # noqa: F821
            main(
                list(snakemake.input.json),  # noqa: F821
                snakemake.output.json,  # noqa: F821
                snakemake.output.md,  # noqa: F821
                snakemake.output.config,  # noqa: F821
                run_name=snakemake.params.run,  # noqa: F821
                config=snakemake.params.config,  # noqa: F821
                workflow_dir=snakemake.params.workflow_dir,  # noqa: F821
                snakemake_version=snakemake.params.snakemake_version,  # noqa: F821
                filelists_report=snakemake.input.filelists_report,  # noqa: F821
            )
    else:
        setup_cli_logging()
        _cli()
