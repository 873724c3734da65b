"""benchmarks/step_vs_timm.py: arms in alternating processes, compared round by round."""
import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("step_vs_timm", REPO / "benchmarks" / "step_vs_timm.py")
step_vs_timm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(step_vs_timm)

CONFIG = {"train": {"model": "resnet50", "batch_size": 64, "image_size": 224, "device": "cuda",
                    "precision": "fp16", "channels_last": True, "cuda_max_connections": 32,
                    "cuda_sync": "blocking", "cuda_stream": "side"}}


def command(arm, mode="default"):
    return step_vs_timm.arm_command(arm, CONFIG, mode, steps=50, blocks=4, warmup=20, classes=101,
                                    out=Path("x.csv"), script=None, configfiles=["configs/p.yaml"])


def test_timm_runs_as_timm_does_unless_given_our_process_settings():
    timm = command("timm")
    assert timm[1].endswith("timm_bench.py") and timm[timm.index("--model") + 1] == "resnet50"
    for option, value in (("-b", "64"), ("--img-size", "224"), ("--num-classes", "101"),
                          ("--num-bench-iter", "200"), ("--amp-dtype", "float16"), ("--torchcompile-mode", "default")):
        assert timm[timm.index(option) + 1] == value
    assert "--channels-last" in timm and "--stream" not in timm and "--cuda-sync" not in timm
    ours = command("timm+ours")
    assert ours[:len(timm)] == timm
    assert ours[len(timm):] == ["--cuda-max-connections", "32", "--cuda-sync", "blocking", "--stream", "side"]
    assert "--torchcompile" not in command("timm", mode="none")


def test_our_step_runs_with_the_configs_settings_or_cudas_defaults():
    ours = command("ours")
    assert ours[1].endswith("loader_overhead.py") and ours[-2:] == ["--feeds", "synthetic"]
    assert "--no-dali-alone" in ours and "--no-timm-style" in ours and ours[ours.index("--modes") + 1] == "default"
    defaults = command("ours+cuda-defaults")
    assert defaults[defaults.index("--feeds") + 1] == "synthetic:stream=default"
    assert defaults[-4:] == ["--cuda-max-connections", "8", "--cuda-sync", "auto"]


def test_each_arm_is_compared_with_the_first_within_its_round():
    rows = [{"round": 1, "arm": "timm", "images_per_s": 100.0}, {"round": 1, "arm": "ours", "images_per_s": 90.0},
            {"round": 2, "arm": "timm", "images_per_s": 200.0}, {"round": 2, "arm": "ours", "images_per_s": 220.0},
            {"round": 3, "arm": "timm", "images_per_s": 150.0}]  # an unfinished round is left out
    timm, ours = step_vs_timm.summarize(rows, ["timm", "ours"], "default")
    assert timm["images_per_s"] == 150.0 and timm["rounds"] == 2 and "ratio_to_first" not in timm
    assert ours["ratio_to_first"] == 1.0 and ours["ratio_min"] == 0.9 and ours["ratio_max"] == 1.1
    assert ours["ahead"] == 1 and ours["paired"] == "0.9000 1.1000"


def test_a_failing_arm_stops_the_run_and_names_its_log(tmp_path, monkeypatch):
    monkeypatch.setattr(step_vs_timm, "data_paths", lambda config: (tmp_path / "all.txt", tmp_path))
    (tmp_path / "all.txt").write_text("a.jpg 0\nb.jpg 1\n")
    script = tmp_path / "benchmark.py"
    script.write_text("x = 1\n")  # not timm's benchmark.py: its process exits 1
    out = tmp_path / "vs.csv"
    with pytest.raises(SystemExit, match=r"arm timm \(round 1\) failed \(exit 1\); its output: .*timm-1.log"):
        step_vs_timm.main(["--configfile", str(REPO / "configs" / "smoke.yaml"), "--arms", "timm", "ours",
                           "--rounds", "1", "--script", str(script), "--out", str(out)])
    assert not out.exists()
    assert "is not timm's benchmark.py" in (tmp_path / "vs.csv.d" / "timm-1.log").read_text()


def test_no_file_list_is_named_before_any_process_starts(tmp_path, monkeypatch):
    monkeypatch.setattr(step_vs_timm, "data_paths", lambda config: (tmp_path / "none.txt", tmp_path))
    with pytest.raises(SystemExit, match="no file list .*none.txt: make the preset's data first"):
        step_vs_timm.main(["--out", str(tmp_path / "vs.csv")])
    assert not (tmp_path / "vs.csv.d").exists()


needs_timm = pytest.mark.skipif(
    importlib.util.find_spec("timm") is None or not (REPO / ".gpu-extra" / "timm_benchmark.py").is_file(),
    reason="needs timm installed and timm's benchmark.py at .gpu-extra/timm_benchmark.py",
)


@needs_timm
def test_one_process_alternates_timms_step_and_ours_round_by_round(tmp_path, monkeypatch):
    monkeypatch.setattr(step_vs_timm, "data_paths", lambda config: (tmp_path / "all.txt", tmp_path))
    (tmp_path / "all.txt").write_text("".join(f"img{i}.jpg {i % 4}\n" for i in range(64)))
    out = tmp_path / "vs.csv"
    rows = step_vs_timm.main(["--configfile", str(REPO / "configs" / "smoke.yaml"), "--mode", "none",
                              "--one-process", "ours", "--rounds", "3", "--steps", "2", "--warmup", "1",
                              "--profile-steps", "2", "--out", str(out)])
    timed = [row for row in rows if row["round"] != "median"]
    assert [(row["round"], row["arm"]) for row in timed] == [
        (1, "timm"), (1, "ours"), (2, "ours"), (2, "timm"), (3, "timm"), (3, "ours")]
    assert all(row["images_per_s"] > 0 and row["process"] == "one (ours settings)" for row in timed)
    # each block's wall and host CPU time per step: the wall time is the block's rate, and on the
    # CPU both steps are all host work, the main thread's part of the whole process's
    for row in timed:
        # smoke: batch 8; images_per_s is rounded to 0.1
        assert row["images_per_s"] == pytest.approx(8e3 / row["wall_ms_per_step"], abs=0.051)
        assert 0 < row["main_cpu_ms_per_step"] <= row["cpu_ms_per_step"] + 1
        assert "alloc_retries" not in row  # the allocator's facts are CUDA's only
    ours = next(row for row in rows if row["round"] == "median" and row["arm"] == "ours")
    assert ours["rounds"] == 3 and len(ours["paired"].split()) == 3 and 0 <= ours["sign_test_p"] <= 1
    assert ours["cpu_ms_per_step"] == sorted(row["cpu_ms_per_step"] for row in timed if row["arm"] == "ours")[1]
    with open(out) as handle:
        header = next(step_vs_timm.csv.reader(handle))
    assert {"wall_ms_per_step", "cpu_ms_per_step", "main_cpu_ms_per_step"} <= set(header)
    assert out.is_file() and not (tmp_path / "vs.csv.d").exists()
    # after the rounds, each arm's steps under the profiler: its numbers and its trace (on the CPU:
    # the wall time per step only, no CUDA activity to split)
    with open(tmp_path / "vs-profile.csv") as handle:
        profiled = list(step_vs_timm.csv.DictReader(handle))
    assert [(row["arm"], row["steps"]) for row in profiled] == [("timm", "2"), ("ours", "2")]
    assert all(float(row["ms_per_step"]) > 0 for row in profiled)
    assert sorted(p.name for p in (tmp_path / "vs-profile").iterdir()) == ["ours.json.gz", "timm.json.gz"]


@needs_timm
def test_one_process_with_classes_needs_no_data(tmp_path, monkeypatch):
    monkeypatch.setattr(step_vs_timm, "data_paths", lambda config: (tmp_path / "none.txt", tmp_path))
    out = tmp_path / "vs.csv"
    rows = step_vs_timm.main(["--configfile", str(REPO / "configs" / "smoke.yaml"), "--mode", "none",
                              "--one-process", "ours", "--rounds", "1", "--steps", "2", "--warmup", "1",
                              "--classes", "7", "--out", str(out)])
    assert {row["arm"] for row in rows if row["round"] == 1} == {"timm", "ours"}
    assert out.is_file() and not (tmp_path / "none.txt").exists()


def test_classes_is_refused_without_one_process_and_below_two(tmp_path):
    with pytest.raises(SystemExit, match="--classes needs --one-process"):
        step_vs_timm.main(["--classes", "101", "--out", str(tmp_path / "vs.csv")])
    with pytest.raises(SystemExit, match="--classes 1: a classifier needs at least 2 classes"):
        step_vs_timm.main(["--one-process", "ours", "--classes", "1", "--out", str(tmp_path / "vs.csv")])
    assert not (tmp_path / "vs.csv").exists()


def test_the_sign_test_is_two_sided_and_leaves_ties_out():
    assert step_vs_timm.two_sided_sign_test([1.1, 1.2, 1.3]) == 0.25  # 3 of 3 ahead: 2 x 1/8
    assert step_vs_timm.two_sided_sign_test([0.9, 0.8, 0.7]) == 0.25
    assert step_vs_timm.two_sided_sign_test([1.1, 0.9, 1.0]) == 1.0


def test_one_process_under_cuda_graphs_needs_timms_steps_marked_before_anything_starts(tmp_path):
    for mode in ("reduce-overhead", "max-autotune"):
        with pytest.raises(SystemExit, match=f"--one-process under {mode} needs --mark-timm-steps: .*processes"):
            step_vs_timm.main(["--mode", mode, "--one-process", "ours", "--classes", "101",
                               "--out", str(tmp_path / "vs.csv")])
    with pytest.raises(SystemExit, match="--mark-timm-steps needs --one-process"):
        step_vs_timm.main(["--mode", "reduce-overhead", "--mark-timm-steps", "--out", str(tmp_path / "vs.csv")])
    assert not (tmp_path / "vs.csv").exists()


@needs_timm
def test_mark_timm_steps_marks_the_start_of_each_of_timms_steps(tmp_path, monkeypatch):
    import torch

    marks = []
    mark = torch.compiler.cudagraph_mark_step_begin
    monkeypatch.setattr(torch.compiler, "cudagraph_mark_step_begin", lambda: (marks.append(1), mark())[1])
    counted = []
    for extra in ([], ["--mark-timm-steps"]):
        marks.clear()
        step_vs_timm.main(["--configfile", str(REPO / "configs" / "smoke.yaml"), "--mode", "none",
                           "--one-process", "ours", "--rounds", "1", "--steps", "2", "--warmup", "1",
                           "--classes", "5", "--out", str(tmp_path / "vs.csv"), *extra])
        counted.append(len(marks))
    # timm's steps: its warm-up (1 untimed + 1 timed step, when made) and one block of 2
    assert counted[1] - counted[0] == 4


@needs_timm
def test_more_arms_tell_the_model_from_the_scaler_each_against_timms_step(tmp_path, monkeypatch):
    import timm
    import torch

    # fp16, so that our step scales its loss (smoke trains in fp32): ours and ours:timm-model keep the
    # scaler, ours:no-scaler has it off, ours:torch-scaler has torch's (on the CPU, where SGD is not fused,
    # so are the others'); ours:timm-model's model is timm's, built as timm's benchmark does
    preset = tmp_path / "fp16.yaml"
    preset.write_text("train:\n  precision: fp16\n  image_size: 32\n  batch_size: 2\n")
    scalers, built = [], []
    scaler, create = torch.amp.GradScaler, timm.create_model
    monkeypatch.setattr(torch.amp, "GradScaler",
                        lambda *args, **kwargs: (scalers.append(kwargs["enabled"]), scaler(*args, **kwargs))[1])
    monkeypatch.setattr(timm, "create_model", lambda *args, **kwargs: (built.append(args), create(*args, **kwargs))[1])
    out = tmp_path / "vs.csv"
    rows = step_vs_timm.main(["--configfile", str(REPO / "configs" / "smoke.yaml"), str(preset), "--mode", "none",
                              "--one-process", "ours", "--rounds", "3", "--steps", "2", "--warmup", "1",
                              "--classes", "5", "--also", "ours:timm-model", "ours:no-scaler", "ours:torch-scaler", "--out", str(out)])
    arms = ["timm", "ours", "ours:timm-model", "ours:no-scaler", "ours:torch-scaler"]
    timed = [(row["round"], row["arm"]) for row in rows if row["round"] != "median"]
    # the order turns by one arm a round, so that no arm always follows the same one
    assert timed == [(1, arm) for arm in arms] + [(2, arm) for arm in arms[1:] + arms[:1]] + [
        (3, arm) for arm in arms[2:] + arms[:2]]
    summary = {row["arm"]: row for row in rows if row["round"] == "median"}
    assert list(summary) == arms and "ratio_to_first" not in summary["timm"]
    for arm in arms[1:]:  # each against timm's, round by round
        assert summary[arm]["rounds"] == 3 and len(summary[arm]["paired"].split()) == 3
    # ours:timm-model's model came from timm (resnet18: smoke's model; timm's benchmark holds its own
    # reference to create_model, so its model is not counted here)
    assert [args[0] for args in built] == ["resnet18"]
    # timm's runner has no scaler of ours; ours, ours:timm-model, ours:torch-scaler scale the loss,
    # ours:no-scaler does not
    assert scalers == [True, True, False, True]
    with open(out) as handle:
        assert {row["arm"] for row in step_vs_timm.csv.DictReader(handle)} == set(arms)


def test_more_arms_need_one_process(tmp_path):
    with pytest.raises(SystemExit, match="--also needs --one-process"):
        step_vs_timm.main(["--also", "ours:no-scaler", "--out", str(tmp_path / "vs.csv")])
    with pytest.raises(SystemExit, match="named twice"):
        step_vs_timm.main(["--one-process", "ours", "--classes", "5", "--also", "ours:no-scaler", "ours:no-scaler",
                           "--out", str(tmp_path / "vs.csv")])


def test_a_csv_is_summarized_again_against_any_arm(tmp_path, capsys):
    rows = []
    for round_ in range(1, 6):  # ours 10% ahead of ours:torch-scaler every round, timm level with it
        for arm, rate, held in (("timm", 100.0, 6.9), ("ours", 110.0, 7.0 + round_), ("ours:torch-scaler", 100.0, 7.0)):
            rows.append({"round": round_, "arm": arm, "mode": "default", "images_per_s": rate * (1 + round_ / 100),
                         "wall_ms_per_step": 10.0, "cpu_ms_per_step": 9.0, "main_cpu_ms_per_step": 5.0,
                         "gpu_reserved_gib": held, "alloc_retries": int(round_ == 5 and arm == "ours"),
                         "alloc_ooms": 0})
    out = tmp_path / "vs.csv"
    step_vs_timm.write_csv(out, rows + step_vs_timm.summarize(rows, ["timm", "ours", "ours:torch-scaler"], "default"))
    summary = step_vs_timm.main(["--again", str(out), "--first", "ours:torch-scaler"])
    assert [row["arm"] for row in summary] == ["ours:torch-scaler", "timm", "ours"]
    assert summary[2]["ratio_to_first"] == 1.1 and summary[2]["ahead"] == 5 and summary[1]["ahead"] == 0
    printed = capsys.readouterr().out
    assert "ours                 median" in printed and "/ ours:torch-scaler per round: median 1.100" in printed
    assert "held after its blocks 8.000-12.000 GiB; the allocator's retries by its last block 1" in printed
    assert step_vs_timm.main(["--again", str(out)])[1]["arm"] == "ours"  # the CSV's first arm by default
    with pytest.raises(SystemExit, match="no arm 'ours:no-scaler'.*its arms: timm, ours, ours:torch-scaler"):
        step_vs_timm.main(["--again", str(out), "--first", "ours:no-scaler"])
    with pytest.raises(SystemExit, match="no CSV"):
        step_vs_timm.main(["--again", str(tmp_path / "none.csv")])
    with pytest.raises(SystemExit, match="--first needs --again"):
        step_vs_timm.main(["--first", "ours"])
