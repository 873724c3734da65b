"""Helpers for the tests that run the pipeline with Snakemake in a temporary folder.

The pipeline runs themselves are session fixtures in conftest.py: each one trains real models
(torch.compile on the CPU takes most of a minute per mode), so every test that needs a finished run
shares one instead of training its own.
"""

import csv
import functools
import hashlib
import http.server
import re
import shutil
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
COPIED = ["Snakefile", "config.yaml", "configs", "workflow", "envs", "profiles", "docs", "requirements.txt"]
MODES = ["none", "default", "reduce-overhead", "max-autotune"]
# What any change to the training jobs reruns after them.
AFTER_TRAINING = {"summary": 1, "plots": 1, "vs_article": 1, "provenance": 1, "all": 1}


def copy_workflow(dest: Path) -> Path:
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, dest / name)
    return dest


def snakemake(workdir: Path, *args: str, check: bool = True, timeout_s: float | None = None
              ) -> subprocess.CompletedProcess:
    done = subprocess.run([*SNAKEMAKE, "--cores", "2", *args], cwd=workdir, capture_output=True, text=True,
                          timeout=timeout_s)
    if check and done.returncode != 0:
        raise AssertionError(f"snakemake {args} failed:\n{done.stdout[-5000:]}\n{done.stderr[-5000:]}")
    return done


def job_stats(text: str) -> dict[str, int]:
    """{rule: count} from a dry run's output; {} when it has nothing to do."""
    if "Nothing to be done" in text:
        return {}
    stats = text.split("Job stats:", 1)[1]
    return {rule: int(n) for rule, n in re.findall(r"^(\w+)\s+(\d+)\s*$", stats, re.M) if rule != "total"}


def planned_jobs(workdir: Path, *configfiles: str) -> dict[str, int]:
    """{rule: count} Snakemake would run now (a dry run's job stats)."""
    done = snakemake(workdir, "-n", "--configfile", *configfiles)
    return job_stats(done.stdout + done.stderr)


def read_csv(path: Path) -> list[dict]:
    with open(path) as handle:
        return list(csv.DictReader(handle))


def fingerprint(paths: list[Path]) -> dict[str, tuple[str, int]]:
    """{name: (sha256, mtime)}: equal only if a file was neither rewritten nor touched."""
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in paths}


@contextmanager
def served(directory: Path):
    """A real HTTP server on 127.0.0.1 serving `directory`; yields its base URL."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
