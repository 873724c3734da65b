"""benchmarks/loss_spread.py: compiled modes' last-epoch loss against eager's, run by run and pooled."""

import csv
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import loss_spread  # noqa: E402
from summarize import LOSS_DRIFT  # noqa: E402  (on the path loss_spread put it on)

FIELDS = ["mode", "epoch", "epoch_s", "steps", "images", "images_per_s", "loss_mean", "loss_last"]


def run_dir(root: Path, name: str, last: dict[str, float], repeat2: dict[str, float] | None = None) -> Path:
    """A run folder like results/<run>/: timings/<mode>.csv of 2 epochs, the last with these losses."""
    timings = root / name / "timings"
    timings.mkdir(parents=True)
    for repeat, losses in ((1, last), (2, repeat2 or {})):
        for mode, loss in losses.items():
            path = timings / (f"{mode}.csv" if repeat == 1 else f"{mode}.rep{repeat}.csv")
            with open(path, "w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=FIELDS)
                writer.writeheader()
                for epoch, value in ((2, loss), (1, 2.5)):  # out of order: the last epoch is the highest
                    writer.writerow({"mode": mode, "epoch": epoch, "epoch_s": 10.0, "steps": 10, "images": 640,
                                     "images_per_s": 64.0, "loss_mean": value, "loss_last": value})
    return root / name


def test_gaps_are_per_run_and_repeat_and_pooled_per_mode(tmp_path, capsys):
    a = run_dir(tmp_path, "a", {"none": 0.30, "default": 0.34, "max-autotune": 0.28},
                repeat2={"none": 0.25, "default": 0.30})
    b = run_dir(tmp_path, "b", {"none": 0.20, "default": 0.19, "reduce-overhead": 0.23})
    c = run_dir(tmp_path, "c", {"default": 0.5})  # no eager: left out
    out_csv = tmp_path / "out" / "gaps.csv"
    rows = loss_spread.main([str(a), str(b), str(c), "--out", str(out_csv)])
    text = capsys.readouterr().out
    assert f"{a}  default  1  0.3400  +13.3%" in text
    assert f"{a}  default  2  0.3000  +20.0%" in text  # against eager's repeat 2, not repeat 1
    assert f"{a}  max-autotune  1  0.2800  -6.7%" in text
    assert f"{b}  default  1  0.1900  -5.0%" in text and f"{b}  reduce-overhead  1  0.2300  +15.0%" in text
    assert str(c) not in text
    assert "eager over 3 jobs: last-epoch loss 0.2500 median, 0.2000-0.3000" in text
    # default: +13.3%, +20%, -5%: above in 2 of 3; two-sided sign test 1.0; beyond 10%: two
    assert ("default over 3 runs: vs eager +13.3% median (-5.0% to +20.0%); above eager in 2 of 3 "
            "(two-sided sign test p = 1); beyond 10% in 2") in text
    assert ("all compiled over 5 runs: vs eager +13.3% median (-6.7% to +20.0%); above eager in 3 of 5 "
            "(two-sided sign test p = 1); beyond 10% in 3") in text
    written = list(csv.DictReader(open(out_csv)))
    assert len(written) == len(rows) == 8
    assert {r["mode"] for r in written} == {"none", "default", "max-autotune", "reduce-overhead"}
    assert float(next(r for r in written if r["run"] == str(b) and r["mode"] == "default")["gap_vs_eager"]) == -0.05


def test_runs_without_eager_or_with_bad_csvs_are_named(tmp_path):
    lone = run_dir(tmp_path, "lone", {"default": 0.5})
    with pytest.raises(SystemExit, match="no run among 1 has eager's timings"):
        loss_spread.main([str(lone)])
    bad = tmp_path / "bad" / "timings"
    bad.mkdir(parents=True)
    (bad / "none.csv").write_text("mode,epoch\nnone,1\n")
    with pytest.raises(SystemExit, match=r"bad/timings/none.csv: not a timing CSV .*loss_mean"):
        loss_spread.main([str(tmp_path / "bad")])


def test_the_reference_runs_show_no_mode_above_eager_more_often_than_below(capsys):
    runs = sorted(Path(__file__).resolve().parents[1].glob("docs/reference/*/2026-*"))
    rows = loss_spread.main([str(run) for run in runs])
    compiled = [r for r in rows if r["mode"] != "none"]
    assert len(compiled) >= 36  # the figures summarize.py's LOSS_DRIFT cites
    assert max(abs(r["gap_vs_eager"]) for r in compiled) < LOSS_DRIFT == 0.25
