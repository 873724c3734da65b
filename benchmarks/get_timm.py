"""Fetch what the comparisons with timm need into .gpu-extra (git-ignored, carried to a lent GPU host):
timm's benchmark.py at the commit every comparison in docs/reference ran (checked against its
sha256) as .gpu-extra/timm_benchmark.py, and timm's wheel (pip download, no dependencies: torch and
torchvision are already on the host).

    python benchmarks/get_timm.py                # both, into .gpu-extra
    python benchmarks/get_timm.py --no-wheel     # the script only

Needs GitHub (raw.githubusercontent.com) and the package index; the lent GPU host has neither,
which is why the files are carried. A file whose sha256 differs is refused and nothing is written;
one already there with the right sha256 is kept as it is.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMIT = "6c376d81397976c0560049aca2037abdc4475351"
URL = f"https://raw.githubusercontent.com/huggingface/pytorch-image-models/{COMMIT}/benchmark.py"
SHA256 = "7cc5d534f850cedd85b9e39d9f98939251267307c96a1f393b442f12a30ac39c"
TIMM = "timm==1.0.29"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch_script(url: str, target: Path, expected: str = SHA256, timeout: float = 60) -> str:
    """Download `url` to `target` (written whole, or not at all) if its sha256 is `expected`;
    'kept', 'fetched'."""
    if target.is_file() and sha256(target.read_bytes()) == expected:
        return "kept"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data = response.read()
    except (urllib.error.URLError, OSError) as error:
        raise SystemExit(f"get_timm: cannot download {url}: {error}") from None
    if sha256(data) != expected:
        raise SystemExit(f"get_timm: {url} has sha256 {sha256(data)}, not {expected}: not written")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, prefix=target.name, suffix=".tmp", delete=False) as tmp:
        tmp.write(data)
    os.chmod(tmp.name, 0o644)  # not the temporary file's 0600
    os.replace(tmp.name, target)
    return "fetched"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=REPO / ".gpu-extra", help="folder (default .gpu-extra)")
    parser.add_argument("--url", default=URL, help="where benchmark.py is (default: GitHub at the pinned commit)")
    parser.add_argument("--no-wheel", action="store_true", help="skip timm's wheel")
    args = parser.parse_args()
    target = args.dest / "timm_benchmark.py"
    print(f"{target}: {fetch_script(args.url, target)} (sha256 {SHA256[:12]}...)", flush=True)
    if not args.no_wheel:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                               TIMM, "-d", str(args.dest)])
        if done.returncode:
            raise SystemExit(f"get_timm: pip download {TIMM} failed (exit {done.returncode})")
    print(f"carry {args.dest.relative_to(REPO) if args.dest.is_relative_to(REPO) else args.dest} "
          "to the GPU host (README, 'Comparing with timm')")


if __name__ == "__main__":
    main()
