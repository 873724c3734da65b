"""What software and hardware a measurement ran on: versions, GPU, driver, CPU, other GPU users,
installed Python packages and the state of the workflow's git checkout."""


import importlib.metadata
import os
import platform
import shutil
import subprocess


def _run(command: list[str], cwd=None) -> str | None:
    if shutil.which(command[0]) is None:
        return None
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=True, cwd=cwd)
    except (subprocess.SubprocessError, OSError):
        return None
    return done.stdout.strip()


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def os_release() -> str:
    """The distribution's own name (`Debian GNU/Linux 12 (bookworm)`), else system and release."""
    try:
        return platform.freedesktop_os_release()["PRETTY_NAME"]
    except (OSError, KeyError):
        return f"{platform.system()} {platform.release()}".strip() or "unknown"


def gpu_driver() -> str | None:
    out = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    return out.splitlines()[0].strip() if out else None


def gpu_other_processes() -> list[int]:
    """PIDs of other processes holding a CUDA context on the GPUs (empty if unknown)."""
    out = _run(["nvidia-smi", "--query-compute-apps=pid", "--format=csv,noheader"])
    if not out:
        return []
    pids = [int(x) for x in out.split() if x.strip().isdigit()]
    return [pid for pid in pids if pid != os.getpid()]


def versions() -> dict:
    """Versions of everything a timing depends on; None where a component is absent."""
    import torch
    import torchvision

    try:
        import nvidia.dali as dali

        dali_version = dali.__version__
    except ImportError:
        dali_version = None
    cuda = torch.cuda.is_available()
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "dali": dali_version,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if cuda else None,
        "gpu": torch.cuda.get_device_name() if cuda else None,
        "gpu_count": torch.cuda.device_count() if cuda else 0,
        "driver": gpu_driver() if cuda else None,
        "cpu": cpu_model(),
        "cpu_cores": os.cpu_count(),
        "os": platform.platform(),
        "os_release": os_release(),
        "hostname": platform.node(),
    }


def installed_packages() -> dict[str, str]:
    """{distribution: version} of every Python package installed in this interpreter, by name."""
    packages = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            packages[name] = dist.version
    return dict(sorted(packages.items(), key=lambda item: item[0].lower()))


def git_state(path) -> dict:
    """Commit and dirty flag of the git checkout holding `path`; "unknown" outside one (or without git).

    Dirty means tracked files differ from the commit, or untracked files that git does not ignore
    exist: either way the code that ran is not exactly the commit's.
    """
    commit = _run(["git", "rev-parse", "HEAD"], cwd=path)
    status = _run(["git", "status", "--porcelain"], cwd=path) if commit else None
    if not commit or status is None:
        return {"commit": "unknown", "dirty": "unknown", "changed_files": []}
    changed = [line.split(maxsplit=1)[1] for line in status.splitlines() if line.strip()]
    return {"commit": commit, "dirty": bool(changed), "changed_files": changed}
