"""benchmarks/choose_loader.py: the best DALI feed of a loader-benchmark CSV as a config overlay
that passes the pipeline's config schema."""

import importlib.util
import sys
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))


def load(name):
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


choose = load("choose_loader")
bench = load("loader_overhead")


def ratio(mode, feed, value, low, high):
    return {"mode": mode, "feed": f"{feed}/synthetic", "images_per_s": value,
            "images_per_s_min": low, "images_per_s_max": high}


def write(path, rows, connections, sync):
    """As loader_overhead.main writes its CSV: every row with the process's CUDA settings."""
    bench.write_csv(path, [{**row, "cuda_max_connections": connections, "cuda_sync": sync} for row in rows])
    return str(path)


def merged_config(overlay_file) -> dict:
    """config.yaml with the overlay over it, merged as the benchmark merges presets (nested, as
    Snakemake's --configfile), checked by the pipeline's schema."""
    config = bench.load_config([str(overlay_file)])
    validate(config, str(REPO / "workflow" / "schemas" / "config.schema.yaml"), set_default=True)
    return config


def test_the_best_feed_across_processes_becomes_the_overlay(tmp_path, capsys):
    a = write(tmp_path / "a.csv", [
        {"mode": "-", "feed": "dali-alone threads=4 hw_decoder_load=1.0", "images_per_s": 24000.0},
        {"mode": "default", "feed": "synthetic", "images_per_s": 2500.0},
        ratio("default", "dali", 0.95, 0.8, 1.1),
        ratio("default", "dali-fetch-only", 0.999, 0.9, 1.1),  # not a loader: never chosen
        ratio("default", "dali:exec_dynamic=false", 0.998, 0.9, 1.1),  # not a training-job setting
        ratio("none", "dali:threads=8", 0.997, 0.9, 1.1),  # another mode
    ], "32", "blocking")
    b = write(tmp_path / "b.csv", [
        ratio("default", "dali:threads=2,fetch=inline,stream=side-high,decoder.preallocate_width_hint=256",
              0.975, 0.9, 1.05),
        ratio("default", "dali:reserve_cores=2", 0.96, 0.9, 1.05),
    ], "8 (CUDA's default)", "not set (CUDA's default: auto)")
    out = tmp_path / "configs" / "chosen.yaml"
    choose.main([a, b, "--mode", "default", "--run", "synthetic-food101-chosen", "--out", str(out)])
    printed = capsys.readouterr().out
    assert "skipped: feed 'dali:exec_dynamic=false': exec_dynamic is not a setting" in printed
    assert "dali-fetch-only" not in printed and "threads=8" not in printed
    text = out.read_text()
    assert text.startswith("# Chosen by benchmarks/choose_loader.py") and "0.975" in text
    overlay = yaml.safe_load(text)
    assert overlay == {
        "run": "synthetic-food101-chosen",
        "train": {"cuda_stream": "side-high", "cuda_max_connections": None, "cuda_sync": None},
        "loader": {"threads": 2, "fetch": "inline", "decoder_options": {"preallocate_width_hint": 256}},
    }
    config = merged_config(out)
    # the feed's decoder argument goes over the config's (as the benchmark merged it), the rest stays
    assert config["loader"]["decoder_options"] == {"preallocate_width_hint": 256, "preallocate_height_hint": 512}
    assert config["loader"]["hw_decoder_load"] == 1.0
    # the plain defaults measured best: only the process's CUDA settings are written
    choose.main([a, "--mode", "default", "--run", "r", "--out", str(out)])
    assert yaml.safe_load(out.read_text()) == {"run": "r", "train": {"cuda_max_connections": 32, "cuda_sync": "blocking"}}


def test_nothing_to_choose_is_an_error_and_writes_nothing(tmp_path):
    out = tmp_path / "chosen.yaml"
    with pytest.raises(SystemExit, match="cannot read the benchmark's CSV .*missing.csv"):
        choose.main([str(tmp_path / "missing.csv"), "--mode", "default", "--run", "r", "--out", str(out)])
    only_eager = write(tmp_path / "eager.csv", [ratio("none", "dali", 0.97, 0.9, 1.0)], "32", "blocking")
    with pytest.raises(SystemExit, match="no DALI feed of mode 'default'.*nothing written"):
        choose.main([only_eager, "--mode", "default", "--run", "r", "--out", str(out)])
    (tmp_path / "other.csv").write_text("a,b\n1,2\n")
    with pytest.raises(SystemExit, match="not a CSV of benchmarks/loader_overhead.py"):
        choose.main([str(tmp_path / "other.csv"), "--mode", "default", "--run", "r", "--out", str(out)])
    assert not out.exists() and not list(tmp_path.glob("*.tmp"))


def paired_ratio(feed, median, paired):
    return {**ratio("default", feed, median, min(paired), max(paired)),
            "paired": " ".join(f"{value:.4f}" for value in paired)}


def test_a_variant_must_beat_the_configurations_loader_round_by_round(tmp_path, capsys):
    """The highest median is kept only if it beat `dali` (the configuration's loader, same process)
    in more rounds than chance gives; otherwise the overlay keeps the configuration's loader."""
    base = [0.90 + 0.002 * (i % 25) for i in range(50)]
    lucky = [b + (0.01 if i < 27 else -0.004) for i, b in enumerate(base)]  # above in 27 of 50: chance
    better = [b + (0.01 if i < 40 else -0.004) for i, b in enumerate(base)]  # above in 40 of 50
    assert choose.sign_test(lucky, base)[:2] == (27, 50) and choose.sign_test(better, base)[:2] == (40, 50)
    out = tmp_path / "chosen.yaml"
    csv = write(tmp_path / "a.csv", [paired_ratio("dali", 0.927, base),
                                     paired_ratio("dali:reserve_cores=2", 0.939, lucky)], "32", "blocking")
    choose.main([csv, "--mode", "default", "--run", "r", "--out", str(out)])
    assert "only 27 of 50 rounds" in capsys.readouterr().out
    assert yaml.safe_load(out.read_text()) == {"run": "r", "train": {"cuda_max_connections": 32, "cuda_sync": "blocking"}}
    assert "the configuration's own loader" in out.read_text()
    csv = write(tmp_path / "b.csv", [paired_ratio("dali", 0.927, base),
                                     paired_ratio("dali:reserve_cores=2", 0.939, better)], "32", "blocking")
    choose.main([csv, "--mode", "default", "--run", "r", "--out", str(out)])
    assert "above dali in 40 of 50 rounds" in capsys.readouterr().out
    assert yaml.safe_load(out.read_text())["loader"] == {"reserve_cores": 2}
    # CSVs written before the per-round column: the highest median, as before, and the header says why
    old = write(tmp_path / "old.csv", [ratio("default", "dali", 0.927, 0.78, 1.22),
                                       ratio("default", "dali:reserve_cores=2", 0.939, 0.77, 1.26)], "32", "blocking")
    choose.main([old, "--mode", "default", "--run", "r", "--out", str(out)])
    assert yaml.safe_load(out.read_text())["loader"] == {"reserve_cores": 2}
    assert "no per-round ratios" in out.read_text()


def test_a_reader_argument_goes_over_the_configurations_reader_options(tmp_path):
    """`reader.NAME` feeds become loader.reader_options.NAME, merged over config.yaml's (which reads
    the files, dont_use_mmap true): a chosen mapping feed turns it off, nothing else changes."""
    base = [0.90 + 0.002 * (i % 25) for i in range(50)]
    better = [b + (0.01 if i < 40 else -0.004) for i, b in enumerate(base)]
    csv = write(tmp_path / "a.csv", [paired_ratio("dali", 0.927, base),
                                     paired_ratio("dali:reader.dont_use_mmap=false", 0.939, better)], "32", "blocking")
    out = tmp_path / "chosen.yaml"
    choose.main([csv, "--mode", "default", "--run", "r", "--out", str(out)])
    assert yaml.safe_load(out.read_text())["loader"] == {"reader_options": {"dont_use_mmap": False}}
    assert bench.load_config([])["loader"]["reader_options"] == {"dont_use_mmap": True}
    config = merged_config(out)
    assert config["loader"]["reader_options"] == {"dont_use_mmap": False}
    assert config["loader"]["decoder_options"] == {"preallocate_width_hint": 512, "preallocate_height_hint": 512}
