"""benchmarks/paired_feeds.py: two DALI feeds of loader-benchmark CSVs, round by round, per file and pooled."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import loader_overhead as bench  # noqa: E402
import paired_feeds as paired  # noqa: E402


def csv_of(path, mode, rounds):
    """A loader-benchmark CSV with `dali` and `dali:threads=2` per-round ratios against one batch."""
    def row(feed, values):
        return {"mode": mode, "feed": f"{feed}/synthetic", "images_per_s": sorted(values)[len(values) // 2],
                "images_per_s_min": min(values), "images_per_s_max": max(values),
                "paired": " ".join(f"{value:.4f}" for value in values), "cuda_max_connections": "32",
                "cuda_sync": "blocking"}
    base = [0.9 + 0.01 * (i % 5) for i in range(len(rounds))]
    bench.write_csv(path, [{"mode": "-", "feed": "dali-alone threads=4 hw_decoder_load=1.0", "images_per_s": 2e4},
                           {"mode": mode, "feed": "synthetic", "images_per_s": 2500.0},
                           row("dali", base), row("dali:threads=2", [b * r for b, r in zip(base, rounds)])])
    return str(path)


def test_rounds_are_paired_per_file_and_pooled(tmp_path, capsys):
    a = csv_of(tmp_path / "a.csv", "none", [1.02] * 7 + [0.99] * 3)  # ahead in 7 of 10
    b = csv_of(tmp_path / "b.csv", "default", [1.05] * 9 + [0.98])  # ahead in 9 of 10
    paired.main([a, b, "--feed", "dali:threads=2"])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "dali:threads=2 over dali, round by round"
    # 7 of 10: P(X >= 7) = 176/1024; two-sided twice that
    assert out[1].startswith(f"{a} none: per round 1.0200 median") and "ahead in 7 of 10 rounds" in out[1]
    assert "p = 0.172 one-sided, 0.344 two-sided" in out[1]
    assert out[2].startswith(f"{b} default: per round 1.0500 median") and "ahead in 9 of 10" in out[2]
    assert out[3].startswith("all 2: per round 1.0200 median") and "ahead in 16 of 20 rounds" in out[3]
    assert "p = 0.006 one-sided, 0.012 two-sided" in out[3]


def test_feeds_missing_from_every_csv_are_named(tmp_path):
    a = csv_of(tmp_path / "a.csv", "none", [1.0] * 4)
    with pytest.raises(SystemExit, match="no CSV holds both 'dali:threads=8' and 'dali'"):
        paired.main([a, "--feed", "dali:threads=8"])
    with pytest.raises(SystemExit, match="cannot read .*missing.csv"):
        paired.main([str(tmp_path / "missing.csv"), "--feed", "dali:threads=2"])
