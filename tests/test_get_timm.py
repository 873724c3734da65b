"""benchmarks/get_timm.py: timm's benchmark.py fetched over real HTTP (127.0.0.1), checked by sha256."""

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(Path(__file__).parent))

import get_timm  # noqa: E402
from snakemake_runs import served  # noqa: E402

SCRIPT = b"print('a benchmark')\n"


def test_the_script_is_written_whole_only_when_its_sha256_is_the_pinned_one(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "benchmark.py").write_bytes(SCRIPT)
    target = tmp_path / "extra" / "timm_benchmark.py"
    right = hashlib.sha256(SCRIPT).hexdigest()
    with served(site) as url:
        with pytest.raises(SystemExit, match=f"has sha256 {right}, not {'0' * 64}: not written"):
            get_timm.fetch_script(f"{url}/benchmark.py", target, "0" * 64)
        assert not target.parent.exists() or list(target.parent.iterdir()) == []
        assert get_timm.fetch_script(f"{url}/benchmark.py", target, right) == "fetched"
        assert target.read_bytes() == SCRIPT and list(target.parent.iterdir()) == [target]
        assert target.stat().st_mode & 0o777 == 0o644
        (site / "benchmark.py").write_bytes(b"changed upstream\n")
        assert get_timm.fetch_script(f"{url}/benchmark.py", target, right) == "kept"  # not downloaded again
        assert target.read_bytes() == SCRIPT
        with pytest.raises(SystemExit, match="cannot download .*/missing.py: HTTP Error 404"):
            get_timm.fetch_script(f"{url}/missing.py", tmp_path / "other.py", right)
    assert not (tmp_path / "other.py").exists()


def test_the_command_refuses_a_script_that_is_not_the_pinned_one(tmp_path):
    """The command line checks against the pinned commit's sha256: anything else is refused and
    an older good copy stays untouched."""
    (tmp_path / "benchmark.py").write_bytes(SCRIPT)
    dest = tmp_path / "extra"
    dest.mkdir()
    (dest / "timm_benchmark.py").write_bytes(b"an older copy\n")
    with served(tmp_path) as url:
        done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "get_timm.py"), "--dest", str(dest),
                               "--url", f"{url}/benchmark.py", "--no-wheel"], capture_output=True, text=True,
                              timeout=120)
    assert done.returncode == 1
    assert f"not {get_timm.SHA256}: not written" in done.stderr
    assert (dest / "timm_benchmark.py").read_bytes() == b"an older copy\n" and len(list(dest.iterdir())) == 1

