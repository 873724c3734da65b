"""Training job: real DALI CPU pipeline, real torch.compile on the CPU, real files."""

import contextlib
import csv
import gc
import json
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from PIL import Image

import train
from common import PipelineError

CLASSES = 4
PER_CLASS = 10  # 40 images: with batch 8 -> 5 steps; with batch 6 -> 6 steps, 4 dropped


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """Class-sorted file list over real JPEGs, as filelists.py writes it."""
    root = tmp_path_factory.mktemp("data")
    rng = np.random.default_rng(0)
    lines = []
    for label in range(CLASSES):
        folder = root / "images" / f"class_{label}"
        folder.mkdir(parents=True)
        for index in range(PER_CLASS):
            pixels = (rng.random((40, 56, 3)) * 80 + label * 50).astype(np.uint8)
            Image.fromarray(pixels).save(folder / f"{index}.jpg", quality=85)
            lines.append(f"class_{label}/{index}.jpg {label}")
    filelist = root / "all.txt"
    filelist.write_text("\n".join(lines) + "\n")
    return filelist, root / "images"


def settings(**overrides):
    config = {
        "model": "resnet18",
        "image_size": 32,
        "batch_size": 8,
        "epochs": 2,
        "precision": "fp32",
        "device": "cpu",
        "channels_last": True,
        "seed": 0,
        "loader": "dali",
        "upper_bound_steps": 3,
        "optimizer": {"lr": 0.05, "momentum": 0.9, "weight_decay": 5e-5, "nesterov": True},
    }
    config.update(overrides)
    return config


LOADER = {"threads": 2, "prefetch": 2, "hw_decoder_load": 0.75}


def read_csv(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


def test_cuda_without_gpu_fails_before_building_and_names_smoke_config(dataset, tmp_path):
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    filelist, images = dataset
    with pytest.raises(PipelineError, match="configs/smoke.yaml"):
        train.main(filelist, images, tmp_path / "t.csv", tmp_path / "t.json", mode_name="none",
                   compile_settings={"mode": "none"}, train=settings(device="cuda"), loader=LOADER)
    assert not (tmp_path / "t.csv").exists()


def test_compile_kwargs():
    assert train.compile_kwargs({"mode": "none"}) is None
    assert train.compile_kwargs(None) is None
    assert train.compile_kwargs({"mode": "max-autotune"}) == {
        "backend": "inductor", "fullgraph": False, "mode": "max-autotune"}
    with_options = train.compile_kwargs({"mode": None, "options": {"shape_padding": True}, "dynamic": False})
    assert with_options == {"backend": "inductor", "fullgraph": False, "dynamic": False,
                            "options": {"shape_padding": True}}


def test_eager_with_dali_writes_one_row_per_epoch(dataset, tmp_path):
    filelist, images = dataset
    facts = train.main(filelist, images, tmp_path / "none.csv", tmp_path / "none.json", mode_name="none",
                       compile_settings={"mode": "none"}, train=settings(batch_size=6), loader=LOADER,
                       progress=False)
    rows = read_csv(tmp_path / "none.csv")
    assert [r["epoch"] for r in rows] == ["1", "2"]
    for row in rows:
        assert row["mode"] == "none"
        assert int(row["steps"]) == 40 // 6  # the last partial batch is dropped
        assert int(row["images"]) == 6 * (40 // 6)
        assert float(row["epoch_s"]) > 0
        assert np.isfinite(float(row["loss_mean"]))
        # images_per_s is rounded to 0.01: on a slow, busy CPU that is more than 0.1 % of it
        rate = int(row["images"]) / float(row["epoch_s"])
        assert float(row["images_per_s"]) == pytest.approx(rate, rel=1e-3, abs=0.006)
    saved = json.loads((tmp_path / "none.json").read_text())
    assert saved["compile"] is None and saved["graphs_compiled"] == 0
    assert saved["device"] == "cpu" and saved["peak_gpu_mem_gib"] is None and saved["alloc_retries"] is None
    assert saved["alloc_ooms"] is None
    assert saved["loss_scaler"] is None and saved["loss_scale_final"] is None  # fp32: no loss scaling
    assert saved["num_classes"] == CLASSES and saved["dataset_images"] == 40
    assert 0 < saved["compile_s"] < sum(float(r["epoch_s"]) for r in rows)
    assert saved["versions"]["dali"] and saved["versions"]["torch"] == torch.__version__
    assert len(saved["loss_curve"]["loss"]) == 2 * (40 // 6)
    assert saved["synthetic_batch_images_per_s"] > 0
    # upper_bound_steps 3: three blocks of one step (at most 5 blocks), their median recorded
    blocks = saved["synthetic_batch_block_images_per_s"]
    assert len(blocks) == 3 and all(rate > 0 for rate in blocks)
    assert saved["synthetic_batch_images_per_s"] == pytest.approx(sorted(blocks)[1], abs=0.01)
    # and three blocks fed by the job's DALI loader, paired with those round by round
    fed = saved["fed_block_images_per_s"]
    assert len(fed) == 3 and all(rate > 0 for rate in fed)
    ratios = saved["fed_vs_one_batch_paired_blocks"]
    assert ratios == pytest.approx([a / b for a, b in zip(fed, blocks)], abs=1e-3)
    assert saved["fed_vs_one_batch_paired"] == pytest.approx(sorted(ratios)[1], abs=1e-4)
    # the host's work per step in both kinds of block: the main thread ran every step of them
    host = saved["paired_blocks_host_per_step"]
    assert set(host) == {"one", "fed"}
    for kind in host.values():
        assert kind["main_cpu_ms"] > 0 and kind["machine_busy_ms"] >= kind["machine_irq_ms"] >= 0
        assert {f"{role}_cpu_ms" for role in train.THREAD_ROLES} | {"main_voluntary_switches",
                "machine_steal_ms"} <= set(kind)
    assert saved["cuda_stream"] == "none (cpu)"
    assert saved["cuda_max_connections"] is None  # a CUDA setting: not recorded for a CPU run
    assert saved["cuda_sync"] is None and saved["loader_cpus"] is None
    assert facts["mode"] == "none"


def test_loader_overhead_benchmark_compares_feeds_on_the_training_code(dataset, tmp_path, monkeypatch):
    """benchmarks/loader_overhead.py on the CPU: every feed is timed and compared with the first."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "loader_overhead", Path(__file__).resolve().parents[1] / "benchmarks" / "loader_overhead.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    filelist, images = dataset
    allowed = os.sched_getaffinity(0)
    config = {"train": settings(cuda_stream="side"), "loader": LOADER}
    feeds = ["synthetic", "synthetic-rotating:count=2", "dali:threads=1", "dali:stream=default",
             "dali:fetch=thread,stream=side-high", "dali-fetch-only", "dali:resize_antialias=false,decoder=cpu,threads=1",
             "dali:pipelines=2,threads=1", "dali:decoder=cpu,threads=1,decoder.use_fast_idct=true",
             "dali:fetch=thread,batches_per_fetch=2,threads=1", "synthetic:burn=1,burn_duty=0.5,burn_kind=memory"]
    if len(train.cpu_cores(os.sched_getaffinity(0))) > 1:
        feeds += ["dali:reserve_cores=1,threads=1", "synthetic:reserve_cores=1,pin_training=true",
                  "dali:reserve_cores=1,pin_training=true,threads=1"]
    # one step per block (two blocks: a min and a max), one profiled step: a resnet18 step is ~0.2 s on
    # a 2-core CPU, and what is checked is each feed's rows, not how steady the numbers are
    cpus_seen = []  # the training thread's CPUs at each run of steps (warm-ups, then blocks)
    burners = []  # the burn feed's processes: burning during its blocks only, gone afterwards

    class Counted(bench.Burners):
        starts = 0

        def start(self):
            self.starts += 1
            super().start()

    monkeypatch.setattr(bench, "Burners", lambda *a: burners.append(Counted(*a)) or burners[-1])
    run_steps = bench.run_steps
    monkeypatch.setattr(bench, "run_steps", lambda *a, **k: cpus_seen.append(os.sched_getaffinity(0)) or run_steps(*a, **k))
    rows, profiles = bench.bench_mode("none", config, filelist, images, feeds=feeds, steps=1, warmup=1,
                                      blocks=2, timm=False, profile_dir=tmp_path, profile_steps=1,
                                      profile_feeds=["synthetic", "dali:threads=1"])
    timed = {row["feed"]: row for row in rows if "/" not in row["feed"]}
    assert list(timed) == feeds
    assert all(row["blocks"] == 2 for row in rows)  # every round ran: no deadline
    for row in timed.values():
        assert row["images_per_s_min"] <= row["images_per_s"] <= row["images_per_s_max"]
        assert row["host_cpu_ms_per_step"] > 0 and row["fetch_ms_per_step"] >= 0
        assert row["process_cpu_ms_per_step"] >= row["host_cpu_ms_per_step"] * 0.9  # all threads >= main
        # per role of thread, from /proc/self/task: the main thread's CPU time as thread_time() has it
        assert row["main_cpu_ms_per_step"] >= row["host_cpu_ms_per_step"] * 0.9
        assert all(row[f"{role}_{field}_per_step"] >= 0 for role in bench.ROLES for field in bench.THREAD_FIELDS
                   if not (field == "migrations" and not Path("/proc/self/sched").exists()))
        assert row["main_voluntary_switches_per_step"] + row["main_forced_switches_per_step"] >= 0
        # the machine's CPUs from /proc/stat: busy at least this process's threads' time, to its ticks
        assert row["machine_busy_ms_per_step"] >= row["machine_irq_ms_per_step"] >= 0
        assert row["machine_steal_ms_per_step"] >= 0
        assert row["machine_busy_ms_per_step"] >= row["process_cpu_ms_per_step"] * 0.8 - 20
    assert os.sched_getaffinity(0) == allowed  # pinned feeds gave the training thread its CPUs back
    assert len(burners) == 1 and burners[0].starts == 2  # on for its 2 timed blocks, not its warm-up
    assert all(process.poll() is not None for process in burners[0].processes)
    pinned = [cpus for cpus in cpus_seen if cpus != allowed]
    if "synthetic:reserve_cores=1,pin_training=true" in feeds:  # 2 pinned feeds x 2 blocks; warm-ups on all CPUs
        assert pinned == [train.cpu_cores(allowed)[0]] * 4
    else:
        assert pinned == []
    # the fetch thread's own CPU time is counted under "fetch", DALI's threads' under "other"
    assert timed["dali:fetch=thread,stream=side-high"]["fetch_cpu_ms_per_step"] > 0
    assert timed["dali:threads=1"]["other_cpu_ms_per_step"] > 0
    ratios = {row["feed"]: row for row in rows if "/" in row["feed"]}
    assert set(ratios) == {f"{feed}/synthetic" for feed in feeds[1:]}
    # the median of the blocks' paired ratios (each block against the synthetic block of its round)
    ratio, dali, fixed = ratios["dali:threads=1/synthetic"], timed["dali:threads=1"], timed["synthetic"]
    assert ratio["images_per_s_min"] <= ratio["images_per_s"] <= ratio["images_per_s_max"]
    # rates are written to 0.1 images/s (a CPU step makes ~16-30), ratios to 1e-4: bounds with that slack
    assert (dali["images_per_s_min"] - 0.05) / (fixed["images_per_s_max"] + 0.05) - 1e-4 <= ratio["images_per_s_min"]
    assert ratio["images_per_s_max"] <= (dali["images_per_s_max"] + 0.05) / (fixed["images_per_s_min"] - 0.05) + 1e-4
    # the benchmark's own CSV (as its main() writes it on the CPU) feeds benchmarks/choose_loader.py:
    # the DALI feed with the best ratio becomes the overlay's loader settings
    bench.write_csv(tmp_path / "loader.csv", [{**row, "cuda_max_connections": "8 (CUDA's default)",
                                              "cuda_sync": None} for row in rows])
    choose_spec = importlib.util.spec_from_file_location(
        "choose_loader", Path(__file__).resolve().parents[1] / "benchmarks" / "choose_loader.py")
    choose = importlib.util.module_from_spec(choose_spec)
    choose_spec.loader.exec_module(choose)
    choose.main([str(tmp_path / "loader.csv"), "--mode", "none", "--run", "chosen",
                 "--out", str(tmp_path / "chosen.yaml")])
    best = max((row for feed, row in ratios.items() if feed.startswith("dali:")), key=lambda row: row["images_per_s"])
    overlay = yaml.safe_load((tmp_path / "chosen.yaml").read_text())
    _, chosen = bench.parse_feed(best["feed"].rpartition("/")[0])
    assert overlay["run"] == "chosen" and overlay["train"]["cuda_max_connections"] is None
    chosen_loader = bench.split_overrides(chosen)[0]
    assert {key: overlay["loader"][key] for key in chosen_loader} == chosen_loader
    with pytest.raises(SystemExit, match="unknown feed"):
        bench.parse_feed("pytorch-dataloader")
    # a deadline already passed (--time-limit on a host that lends a command a fixed time): one
    # round of blocks still runs, its rows are written and say so
    late, _ = bench.bench_mode("none", config, filelist, images, feeds=["synthetic", "dali:threads=1"], steps=1,
                               warmup=1, blocks=3, timm=False, deadline=time.monotonic() - 1)
    assert [row["blocks"] for row in late] == [1, 1, 1]
    with pytest.raises(PipelineError, match="decoder_options"):  # decoder.NAME reaches DALI's decoder
        bench.make_feed("dali:decoder.no_such_hint=1", config, filelist, images, torch.device("cpu"), CLASSES, 40)
    # DALI alone, here with two pipelines (one shard each): batches taken from both in turn
    alone = bench.bench_dali_alone(config, filelist, images, batches=3, threads=1, hw_load=0.0, pipelines=2)
    assert alone["feed"] == "dali-alone threads=1 hw_decoder_load=0.0 pipelines=2" and alone["images_per_s"] > 0
    # profiled feeds: a real profiler trace each, summarised per step (no GPU here: wall time only)
    assert [p["feed"] for p in profiles] == ["synthetic", "dali:threads=1"]
    for profile in profiles:
        assert profile["ms_per_step"] > 0 and "gpu_training_stream_ms_per_step" not in profile
        assert (tmp_path / profile["trace"]).stat().st_size > 0


def test_dali_stages_benchmark_cuts_the_training_pipeline_after_each_stage(dataset, tmp_path):
    """benchmarks/dali_stages.py on the CPU: each stage's own DALI threads' CPU time, cumulative."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "dali_stages", Path(__file__).resolve().parents[1] / "benchmarks" / "dali_stages.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    filelist, images = dataset
    # batches of 2 training batches cut by the loader, on a fetch thread: the whole job's path
    config = {"train": settings(), "loader": {**LOADER, "decoder": "cpu", "batches_per_fetch": 2, "fetch": "thread"}}
    rows = bench.run(config, filelist, images, stages=bench.STAGES, images=64, rounds=3)
    assert not any(t.name == "loader-fetch" and t.is_alive() for t in threading.enumerate())  # stopped
    assert [row["stage"] for row in rows] == ["read", "decode", "resize", "normalize", "loader"]
    for row in rows:
        assert row["blocks"] == 3 and row["images_per_s_min"] <= row["images_per_s"] <= row["images_per_s_max"]
        assert row["dali_threads"] >= 2 and row["dali_cpu_ms"] > 0 and row["main_cpu_ms"] > 0
        assert row["all_cpu_ms"] >= row["dali_cpu_ms"]
    cpu = {row["stage"]: row["dali_cpu_ms"] for row in rows}
    assert cpu["decode"] > cpu["read"]  # decoding on the CPU costs more than reading the files
    # what each cut pipeline gives: the files' bytes, decoded crops of any size, then the training size
    for stage, shape in (("read", None), ("decode", None), ("resize", (32, 32, 3)), ("normalize", (32, 32, 3))):
        (pipe,) = train.dali_pipelines(filelist, images, settings(), {**LOADER, "decoder": "cpu"},
                                       torch.device("cpu"), until=stage)
        pipe.build()
        out, labels = pipe.run()
        assert len(out) == 8 and np.asarray(labels.as_tensor()).dtype == np.int64
        if stage == "read":
            assert np.asarray(out[0]).dtype == np.uint8 and np.asarray(out[0])[:2].tolist() == [0xFF, 0xD8]  # JPEG
        elif shape:
            assert all(tuple(np.asarray(out[i]).shape) == shape for i in range(len(out)))
    with pytest.raises(PipelineError, match="stage 'crop': use one of read, decode, resize, normalize"):
        train.dali_pipeline(str(filelist), str(images), image_size=32, batch_size=8, device=torch.device("cpu"),
                            dtype="fp32", threads=1, prefetch=2, hw_decoder_load=0, seed=0, until="crop")
    with pytest.raises(SystemExit):  # a setting that is not the loader's is named, not guessed
        bench.main(["--set", "no_such=1", "--out", str(tmp_path / "x.csv")])
    assert not (tmp_path / "x.csv").exists()


def test_burners_burn_only_while_on_and_die_with_the_benchmark():
    """loader_overhead.Burners: CPU load beside a feed's blocks, as much as asked, none when off."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "loader_overhead", Path(__file__).resolve().parents[1] / "benchmarks" / "loader_overhead.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    def cpu_s(processes):  # user + system CPU of the burner processes so far (/proc/PID/stat)
        fields = [open(f"/proc/{p.pid}/stat").read().rpartition(")")[2].split() for p in processes]
        return sum(int(f[11]) + int(f[12]) for f in fields) / os.sysconf("SC_CLK_TCK")

    def states(processes):  # T: stopped (SIGSTOP takes effect when the process next runs)
        return {open(f"/proc/{p.pid}/stat").read().rpartition(")")[2].split()[0] for p in processes}

    for kind in ("spin", "memory"):
        burners = bench.Burners(2, 0.25, kind)
        deadline = time.monotonic() + 5
        while states(burners.processes) != {"T"} and time.monotonic() < deadline:
            time.sleep(0.01)
        assert states(burners.processes) == {"T"}
        before = cpu_s(burners.processes)
        time.sleep(0.5)
        # stopped: nothing, to the 10 ms tick each of the 4 counters is truncated to (on: ~0.25 s)
        assert cpu_s(burners.processes) - before <= 0.04
        with burners.on():
            before = cpu_s(burners.processes)
            time.sleep(1.0)
            burned = cpu_s(burners.processes) - before
        assert 0.25 <= burned <= 0.9, (kind, burned)  # 2 processes x 25% x 1 s = 0.5 s, to the 10 ms tick
        burners.close()
        assert all(p.poll() is not None for p in burners.processes)
    with pytest.raises(SystemExit, match="burn_kind spin or memory"):
        bench.Burners(1, 0.5, "disk")
    with pytest.raises(SystemExit, match="burn_duty without burn=N"):
        bench.burn_settings({"burn_duty": 0.5})
    assert bench.burn_settings({"burn": 2}) == (2, 1.0, "spin") and bench.burn_settings({"threads": 2}) is None
    assert bench.split_overrides(bench.parse_feed("dali:burn=2,threads=1")[1])[0] == {"threads": 1}


def test_trace_summary_splits_training_stream_from_loader_streams():
    """GPU time per stream from a Kineto-style trace: the busiest stream is the training stream."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "loader_overhead", Path(__file__).resolve().parents[1] / "benchmarks" / "loader_overhead.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    def event(name, cat, ts, dur, tid=1, stream=None):
        return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "tid": tid,
                "args": {} if stream is None else {"stream": stream}}

    trace = {"traceEvents": [
        event("timed-steps", "user_annotation", 0, 2000),  # 2 steps, 1 ms each
        event("k1", "kernel", 0, 600, tid=7, stream=13),
        event("k2", "kernel", 500, 700, tid=7, stream=13),  # overlaps k1: busy 0..1200
        event("k3", "kernel", 1500, 300, tid=7, stream=13),  # busy 1500..1800 -> 1500 us in all
        event("void dali::kernels::ResampleHorz<float, (int)3>(dali::Sample const*, int)", "kernel",
              1100, 600, tid=7, stream=99),  # 1100..1700, 300 us beside training
        event("cudaStreamSynchronize", "cuda_runtime", 100, 400, tid=1),
        event("cudaLaunchKernel", "cuda_runtime", 50, 10, tid=1),
        event("cudaEventSynchronize", "cuda_runtime", 100, 200, tid=5),
        event("late", "kernel", 5000, 100, tid=7, stream=13),  # outside the window: ignored
    ]}
    row = bench.trace_summary(trace, steps=2)
    assert row["ms_per_step"] == 1.0
    assert row["gpu_training_stream_ms_per_step"] == 0.75
    assert row["training_stream_idle_ms_per_step"] == 0.25
    assert row["gpu_other_streams_ms_per_step"] == 0.3
    assert row["gpu_other_beside_training_ms_per_step"] == 0.15
    assert row["kernels_per_step"] == 1.5 and row["other_streams"] == 1
    assert row["cuda_calls_main_thread"].startswith("cudaStreamSynchronize 0.200")
    assert row["cuda_calls_other_thread"] == "cudaEventSynchronize 0.100"
    assert row["other_streams_top_kernels"] == "dali::kernels::ResampleHorz 0.300 ms x0.5"


def dali_loader(dataset, **kwargs):
    filelist, images = dataset
    pipe = train.dali_pipeline(str(filelist), str(images), image_size=32, batch_size=8,
                               device=torch.device("cpu"), dtype="fp32", threads=1, prefetch=2,
                               hw_decoder_load=0.0, seed=0)
    return train.DaliLoader(pipe, channels_last=True, **kwargs)


def test_fetching_on_a_thread_gives_the_same_batches_in_the_same_order(dataset):
    inline, threaded = dali_loader(dataset), dali_loader(dataset, fetch="thread")
    for _ in range(2):  # two epochs: the thread ends with each epoch and starts again
        expected = [(images.clone(), labels.clone()) for images, labels in inline]
        got = [(images.clone(), labels.clone()) for images, labels in threaded]
        assert len(got) == len(expected) == 40 // 8
        for (a, la), (b, lb) in zip(expected, got):
            assert torch.equal(la, lb) and torch.equal(a, b)
    with pytest.raises(PipelineError, match="loader.fetch 'process'"):
        dali_loader(dataset, fetch="process")


def test_fetching_thread_raises_loader_errors_here_and_stops_when_left():
    import threading

    def failing():
        yield 1, 1
        raise OSError("disk gone")

    batches = train.fetched_on_thread(failing(), 2, torch.device("cpu"))
    assert next(batches) == (1, 1)
    with pytest.raises(OSError, match="disk gone"):
        next(batches)

    def endless():
        while True:
            yield 0, 0

    batches = train.fetched_on_thread(endless(), 2, torch.device("cpu"))
    next(batches)
    batches.close()  # leaving the loop early: the thread must stop, not block on a full queue
    assert not any(t.name == "loader-fetch" and t.is_alive() for t in threading.enumerate())


def test_dali_batches_mix_classes_and_are_channels_last(dataset):
    filelist, images = dataset
    pipe = train.dali_pipeline(str(filelist), str(images), image_size=32, batch_size=8,
                               device=torch.device("cpu"), dtype="fp32", threads=1, prefetch=2,
                               hw_decoder_load=0.0, seed=0)
    loader = train.DaliLoader(pipe, channels_last=True)
    batch, labels = next(iter(loader))
    assert batch.shape == (8, 3, 32, 32) and batch.dtype == torch.float32
    assert batch.is_contiguous(memory_format=torch.channels_last)
    assert labels.dtype == torch.int64 and labels.shape == (8,)
    # the file list is sorted by class: a shuffling reader must still mix classes in a batch
    assert len(set(labels.tolist())) > 1
    # normalised: roughly zero-centred, not 0..255
    assert batch.abs().max() < 10


def test_resize_without_antialias_keeps_the_crops_and_changes_only_the_filter(dataset):
    """loader.resize_antialias false: the same crops, flips and labels (same seed), resized with
    plain linear interpolation: the pixels differ where the crop is shrunk."""
    filelist, images = dataset

    def first_batch(antialias):
        pipe = train.dali_pipeline(str(filelist), str(images), image_size=8, batch_size=8,
                                   device=torch.device("cpu"), dtype="fp32", threads=1, prefetch=2,
                                   hw_decoder_load=0.0, seed=0, resize_antialias=antialias)
        return next(iter(train.DaliLoader(pipe, channels_last=True)))

    (smooth, labels), (sharp, same_labels) = first_batch(True), first_batch(False)
    assert torch.equal(labels, same_labels)
    assert smooth.shape == sharp.shape == (8, 3, 8, 8)
    assert (smooth - sharp).abs().max() > 0.05
    assert (smooth.mean() - sharp.mean()).abs() < 0.1  # the same crops: only the filter differs


def test_loader_decoder_setting_is_checked_and_cpu_decoding_matches_on_the_cpu(dataset):
    """loader.decoder cpu decodes with DALI's CPU threads (on a GPU host, resizing stays on the GPU);
    on a CPU-only host both settings are the same pipeline; anything else is a clear error."""
    filelist, images = dataset

    def first_batch(decoder):
        pipe = train.dali_pipeline(str(filelist), str(images), image_size=16, batch_size=8,
                                   device=torch.device("cpu"), dtype="fp32", threads=1, prefetch=2,
                                   hw_decoder_load=0.0, seed=0, decoder=decoder)
        return next(iter(train.DaliLoader(pipe, channels_last=True)))

    (mixed, labels), (cpu, same_labels) = first_batch("mixed"), first_batch("cpu")
    assert torch.equal(labels, same_labels) and torch.equal(mixed, cpu)
    with pytest.raises(PipelineError, match="loader.decoder 'gpu'"):
        first_batch("gpu")


def test_decoder_options_reach_dalis_decoder_and_unknown_ones_are_named(dataset):
    """loader.decoder_options go to decoders.image_random_crop as they are: the fast IDCT of the
    CPU decoder changes the decoded pixels (same seed, same crops); a name DALI does not know is a
    PipelineError naming the option."""
    filelist, images = dataset

    def first_batch(options):
        pipe = train.dali_pipeline(str(filelist), str(images), image_size=32, batch_size=8,
                                   device=torch.device("cpu"), dtype="fp32", threads=1, prefetch=2,
                                   hw_decoder_load=0.0, seed=0, decoder="cpu", decoder_options=options)
        return next(iter(train.DaliLoader(pipe, channels_last=True)))[0].clone()

    plain, again = first_batch(None), first_batch({"use_fast_idct": False})
    assert torch.equal(plain, again)
    assert not torch.equal(plain, first_batch({"use_fast_idct": True}))
    with pytest.raises(PipelineError, match=r"loader.decoder_options .*no_such_hint.*not defined"):
        first_batch({"no_such_hint": 512})


def test_cuda_max_connections_is_set_before_cuda_starts_and_checked(monkeypatch):
    monkeypatch.delenv(train.CONNECTIONS_ENV, raising=False)
    assert train.cuda_max_connections(None) == "8 (CUDA's default)"
    assert train.CONNECTIONS_ENV not in os.environ
    monkeypatch.setenv(train.CONNECTIONS_ENV, "4")
    assert train.cuda_max_connections(None) == "4"  # the environment's, untouched
    assert train.cuda_max_connections(32) == "32" and os.environ[train.CONNECTIONS_ENV] == "32"
    for bad in (0, 33, 1.5, True, "32"):
        with pytest.raises(PipelineError, match="train.cuda_max_connections"):
            train.cuda_max_connections(bad)
    # once CUDA has started, a different value could not take effect: say so instead of recording it
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    assert train.cuda_max_connections(32) == "32"
    with pytest.raises(PipelineError, match="already initialised.*CUDA_DEVICE_MAX_CONNECTIONS=32"):
        train.cuda_max_connections(16)


def thread_cpus(tid: int) -> set[int]:
    """The CPUs a thread of this process may run on, from /proc."""
    for line in Path(f"/proc/self/task/{tid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return train.parse_cpu_list(line.split(":", 1)[1])
    raise AssertionError(f"no Cpus_allowed_list for thread {tid}")


def test_reserved_cores_keep_the_loaders_threads_off_them(dataset):
    """loader.reserve_cores 1: every thread DALI starts, and the fetch thread, may run only on the
    other cores; the training thread keeps all its CPUs; too many reserved cores is a clear error."""
    filelist, images = dataset
    allowed = os.sched_getaffinity(0)
    cores = train.cpu_cores(allowed)
    assert set().union(*cores) == allowed
    assert train.loader_cpus(0) is None
    for bad in (-1, 1.5, True):
        with pytest.raises(PipelineError, match="loader.reserve_cores"):
            train.loader_cpus(bad)
    with pytest.raises(PipelineError, match=f"loader.reserve_cores {len(cores)}: .*{len(cores)} physical cores"):
        train.loader_cpus(len(cores))
    assert train.parse_cpu_list(train.cpu_list({0, 1, 2, 3, 8, 10, 11})) == {0, 1, 2, 3, 8, 10, 11}
    assert train.cpu_list({0, 1, 2, 3, 8}) == "0-3,8"
    if len(cores) < 2:
        pytest.skip(f"one physical core here (CPUs {sorted(allowed)}): nothing to keep free")
    cpus = train.loader_cpus(1)
    assert cpus == allowed - cores[0]
    before = set(os.listdir("/proc/self/task"))
    t = settings(batch_size=8, image_size=16)
    batches = train.build_loader(filelist, images, t, {**LOADER, "threads": 2, "fetch": "thread",
                                                        "reserve_cores": 1},
                                 torch.device("cpu"), CLASSES, 40)
    started = set(os.listdir("/proc/self/task")) - before
    assert started, "DALI started no threads"
    for tid in started:
        assert thread_cpus(int(tid)) <= cpus, f"DALI thread {tid} may run on a reserved core"
    assert os.sched_getaffinity(0) == allowed  # the training thread is not limited
    for index, (images_batch, _) in enumerate(batches):
        if index == 0:
            fetch = next(thread for thread in threading.enumerate() if thread.name == "loader-fetch")
            assert thread_cpus(fetch.native_id) == cpus
        assert images_batch.shape[0] == 8
    assert index == 40 // 8 - 1


def test_pinned_training_threads_run_on_the_reserved_cores_after_the_compile(dataset, tmp_path, monkeypatch):
    """loader.pin_training: epoch 1 (the compile) runs on every CPU, epochs 2.. and the one-batch
    upper bound on the reserved core only, and the thread gets its CPUs back after the job; the
    JSON says where. Without reserved cores, or not a boolean: a clear error before any work."""
    filelist, images = dataset
    allowed = os.sched_getaffinity(0)
    for bad, message in (({"pin_training": True}, "loader.pin_training needs loader.reserve_cores"),
                         ({"pin_training": "yes", "reserve_cores": 1}, "loader.pin_training 'yes'")):
        with pytest.raises(PipelineError, match=message):
            train.main(filelist, images, tmp_path / "p.csv", tmp_path / "p.json", mode_name="none",
                       compile_settings={"mode": "none"}, train=settings(), loader={**LOADER, **bad})
        assert not (tmp_path / "p.csv").exists() and not (tmp_path / "p.json").exists()
    cores = train.cpu_cores(allowed)
    if len(cores) < 2:
        pytest.skip(f"one physical core here (CPUs {sorted(allowed)}): nothing to reserve")
    seen = []  # the training thread's CPUs as each epoch, and the upper bound, starts
    run_epoch, rates = train.run_epoch, train.synthetic_batch_rates
    monkeypatch.setattr(train, "run_epoch", lambda *a, **k: seen.append(os.sched_getaffinity(0)) or run_epoch(*a, **k))
    monkeypatch.setattr(train, "synthetic_batch_rates",
                        lambda *a, **k: seen.append(os.sched_getaffinity(0)) or rates(*a, **k))
    facts = train.main(filelist, images, tmp_path / "p.csv", tmp_path / "p.json", mode_name="default",
                       compile_settings={"mode": "default"}, train=settings(epochs=3),
                       loader={**LOADER, "fetch": "thread", "reserve_cores": 1, "pin_training": True})
    assert seen == [allowed, cores[0], cores[0], cores[0]]
    assert os.sched_getaffinity(0) == allowed
    written = json.loads((tmp_path / "p.json").read_text())
    assert written["training_cpus"] == train.cpu_list(cores[0]) == facts["training_cpus"]
    # this thread, and PyTorch's autograd device threads where the process has started them (on
    # the CPU the backward pass runs on this thread; whether pt_autograd_N exist depends on what
    # ran in the process before: 8 of them when this test runs alone, none in the whole file)
    assert written["training_threads_pinned"] == len(train.training_thread_ids()) >= 1
    assert written["loader_cpus"] == train.cpu_list(allowed - cores[0])
    assert len(read_csv(tmp_path / "p.csv")) == 3
    # off (the default): nothing pinned, and the JSON says so
    with train.training_threads_on(None) as tids:
        assert tids == [] and os.sched_getaffinity(0) == allowed


def test_epochs_after_the_compile_run_with_the_heap_frozen(dataset, tmp_path, monkeypatch):
    """After epoch 1 (the compile) every object then alive is kept out of Python's cyclic collector,
    so that a full collection coming due in a timed epoch does not walk torch's whole heap (on an
    H100, 0.2-0.6 s); the JSON says how many objects, and the job leaves nothing frozen behind."""
    filelist, images = dataset
    assert gc.get_freeze_count() == 0
    seen = []  # objects frozen as each epoch, and the upper bound, starts
    run_epoch, rates = train.run_epoch, train.synthetic_batch_rates
    monkeypatch.setattr(train, "run_epoch", lambda *a, **k: seen.append(gc.get_freeze_count()) or run_epoch(*a, **k))
    monkeypatch.setattr(train, "synthetic_batch_rates",
                        lambda *a, **k: seen.append(gc.get_freeze_count()) or rates(*a, **k))
    facts = train.main(filelist, images, tmp_path / "g.csv", tmp_path / "g.json", mode_name="none",
                       compile_settings={"mode": "none"}, train=settings(epochs=3), loader=LOADER)
    frozen = json.loads((tmp_path / "g.json").read_text())["gc_frozen_objects"]
    assert frozen == facts["gc_frozen_objects"] > 10_000  # torch alone has more
    assert seen[0] == 0 and seen[1] == frozen and min(seen[2:]) > 10_000  # a frozen object may still die
    assert gc.get_freeze_count() == 0


class FakeDriver:
    """The four CUDA driver calls train.cuda_sync makes, on a primary context's (flags, active)."""

    def __init__(self, flags: int, active: bool):
        self.flags, self.active, self.sets = flags, active, []

    def cuInit(self, flags):
        return 0

    def cuDeviceGet(self, handle, ordinal):
        handle._obj.value = ordinal
        return 0

    def cuDevicePrimaryCtxGetState(self, handle, flags, active):
        flags._obj.value, active._obj.value = self.flags, int(self.active)
        return 0

    def cuDevicePrimaryCtxSetFlags_v2(self, handle, flags):
        self.sets.append(flags)
        self.flags = flags
        return 0


def test_cuda_sync_sets_the_primary_contexts_flag_before_cuda_starts():
    """train.cuda_sync: validated everywhere, nothing done on the CPU; on CUDA the primary context's
    scheduling flag is replaced (other flags kept), and a context already running with another
    setting is an error rather than a silently ignored setting. The driver here is a stand-in with
    the driver's calls (no GPU in CI); the real one is exercised on the GPU host."""
    cuda = torch.device("cuda")
    with pytest.raises(PipelineError, match="train.cuda_sync 'sleep'"):
        train.cuda_sync("sleep", torch.device("cpu"))
    assert train.cuda_sync("blocking", torch.device("cpu")) is None
    assert train.cuda_sync(None, cuda, driver=None) == "not set (CUDA's default: auto)"  # no driver needed
    driver = FakeDriver(flags=0x08 | 0x00, active=False)  # CU_CTX_LMEM_RESIZE_TO_MAX, sched auto
    assert train.cuda_sync("auto", cuda, driver) == "auto" and driver.sets == []  # already so
    assert train.cuda_sync("blocking", cuda, driver) == "blocking" and driver.sets == [0x08 | 0x04]
    assert train.cuda_sync("blocking", cuda, driver) == "blocking" and len(driver.sets) == 1
    driver.active = True
    assert train.cuda_sync("blocking", cuda, driver) == "blocking"  # already so: fine
    with pytest.raises(PipelineError, match="train.cuda_sync spin: CUDA is already running"):
        train.cuda_sync("spin", cuda, driver)

    class Failing(FakeDriver):
        def cuInit(self, flags):
            return 100  # CUDA_ERROR_NO_DEVICE

    with pytest.raises(PipelineError, match="cuInit failed with CUDA driver error 100"):
        train.cuda_sync("yield", cuda, Failing(0, False))


def test_several_pipelines_read_their_shards_in_turn_and_each_image_once_an_epoch(dataset, tmp_path):
    """loader.pipelines 2: the batches come from the two pipelines in turn and an epoch holds each
    image once (every image has its own label here); one pipeline gives the same epoch in one
    stream; a shard smaller than a batch, or a count that is not a whole number, is a clear error."""
    filelist, images = dataset
    lines = filelist.read_text().split()[0::2]  # image paths, labels dropped
    unique = tmp_path / "unique.txt"

    def loader(pipelines, count=32, batch_size=8, fetch="inline"):
        unique.write_text("".join(f"{path} {label}\n" for label, path in enumerate(lines[:count])))
        t = settings(batch_size=batch_size, image_size=16)
        cfg = {**LOADER, "threads": 1, "pipelines": pipelines}
        return train.build_loader(unique, images, t, cfg, torch.device("cpu"), count, count) \
            if fetch == "inline" else train.DaliLoader(
                train.dali_pipelines(unique, images, t, cfg, torch.device("cpu")), True, fetch=fetch)

    two = loader(2)
    assert two.images == 32 and two.steps_per_epoch == 4
    epochs = [[labels.tolist() for _, labels in two] for _ in range(3)]  # each shard's epoch restarts
    for batches in epochs:
        assert len(batches) == 4
        assert sorted(sum(batches, [])) == list(range(32))
    # the batches alternate between the pipelines: each pipeline run on its own gives every other one
    t = settings(batch_size=8, image_size=16)
    for shard, pipe in enumerate(train.dali_pipelines(unique, images, t, {**LOADER, "threads": 1, "pipelines": 2},
                                                      torch.device("cpu"))):
        pipe.build()
        alone = [pipe.run()[1].as_array().ravel().tolist() for _ in range(2)]
        assert alone == epochs[0][shard::2]
    one = [labels.tolist() for _, labels in loader(1)]
    assert len(one) == 4 and sorted(sum(one, [])) == list(range(32))
    # uneven shards (15 and 16 images; DALI's iterators give each pipeline one batch of 8 every
    # epoch, dropping the rest): every epoch as long as the training job expects
    uneven = loader(2, count=31)
    assert uneven.steps_per_epoch == 2
    assert [len(list(uneven)) for _ in range(3)] == [2, 2, 2]
    threaded = [labels.tolist() for _, labels in loader(2, fetch="thread")]
    assert sorted(sum(threaded, [])) == list(range(32))
    with pytest.raises(PipelineError, match="loader.pipelines 4.*8 images.*batch"):
        loader(4, count=32, batch_size=10)
    with pytest.raises(PipelineError, match="loader.pipelines 0"):
        loader(0)


# A compiled mode's training job (one graph, no graph break or recompile, epoch 1 holding the compile,
# loss falling, a cold cache) is checked on the quick start's jobs, which compile every mode anyway:
# test_workflow.py::test_compiled_modes_compile_once_into_a_cold_cache_and_learn.


def test_diverging_loss_fails_with_epoch_and_step_and_writes_nothing(dataset, tmp_path):
    filelist, images = dataset
    opt = {"lr": 1e12, "momentum": 0.9, "weight_decay": 0.0, "nesterov": False}
    with pytest.raises(PipelineError, match=r"epoch 1, step \d+"):
        train.main(filelist, images, tmp_path / "n.csv", tmp_path / "n.json", mode_name="none",
                   compile_settings=None, train=settings(loader="synthetic", optimizer=opt), loader=LOADER,
                   progress=False)
    assert not (tmp_path / "n.csv").exists() and not (tmp_path / "n.json").exists()


def test_batch_larger_than_dataset_is_refused(dataset, tmp_path):
    filelist, images = dataset
    with pytest.raises(PipelineError, match="batch_size 64 is larger than the dataset"):
        train.main(filelist, images, tmp_path / "b.csv", tmp_path / "b.json", mode_name="none",
                   compile_settings=None, train=settings(batch_size=64), loader=LOADER)


def test_unknown_model_is_named(dataset, tmp_path):
    filelist, images = dataset
    with pytest.raises(PipelineError, match="resnet5000"):
        train.main(filelist, images, tmp_path / "m.csv", tmp_path / "m.json", mode_name="none",
                   compile_settings=None, train=settings(model="resnet5000", loader="synthetic"), loader=LOADER)


def test_fused_sgd_survives_a_skipped_first_step():
    """fp16 loss scaling skips the first steps; fused SGD must not then read garbage momentum."""
    model = torch.nn.Linear(64, 8)
    optimizer = train.build_optimizer(model, settings()["optimizer"], torch.device("cpu"))
    assert all(torch.equal(optimizer.state[p]["momentum_buffer"], torch.zeros_like(p))
               for p in model.parameters())
    fused = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, fused=True)
    train.zero_momentum_buffers(fused)
    for p in model.parameters():
        p.grad = torch.full_like(p, float("inf"))
    fused.grad_scale, fused.found_inf = torch.ones(()), torch.ones(())  # what GradScaler hands it
    fused.step()  # skipped: found_inf is set
    for p in model.parameters():
        p.grad = torch.ones_like(p)
    fused.found_inf = torch.zeros(())
    fused.step()
    assert all(torch.isfinite(p).all() for p in model.parameters())


def fused_sgd(model: torch.nn.Module) -> torch.optim.SGD:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-5, fused=True)
    train.zero_momentum_buffers(optimizer)
    return optimizer


def test_fused_loss_scaler_steps_exactly_as_torchs_grad_scaler():
    """GradScaler's math: the same parameters, scale and skipped steps, through an inf gradient, the
    backoff, and growth after growth_interval finite steps (fused SGD on the CPU, as on CUDA)."""
    torch.manual_seed(0)
    ours, theirs = torch.nn.Linear(16, 4), torch.nn.Linear(16, 4)
    theirs.load_state_dict(ours.state_dict())
    ours_opt, theirs_opt = fused_sgd(ours), fused_sgd(theirs)
    fused = train.FusedLossScaler(ours_opt, torch.device("cpu"), init_scale=1024.0, growth_interval=3)
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=3)
    images, labels = torch.randn(8, 16), torch.randint(0, 4, (8,))
    scales = []
    for i in range(9):
        before = ours.weight.detach().clone()
        for model, scale in ((ours, fused.scale_loss), (theirs, scaler.scale)):
            model.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(images), labels)
            scale(loss).backward()
            if i == 4:  # an overflow: the step is skipped, the scale halves
                model.weight.grad[0, 0] = float("inf")
        fused.step()
        scaler.step(theirs_opt)
        scaler.update()
        assert all(torch.equal(a, b) for a, b in zip(ours.parameters(), theirs.parameters())), f"step {i}"
        assert torch.equal(ours.weight, before) == (i == 4)
        assert fused.scale.item() == scaler.get_scale()
        assert not hasattr(ours_opt, "found_inf") and not hasattr(ours_opt, "grad_scale")
        scales.append(fused.scale.item())
    assert scales == [1024, 1024, 2048, 2048, 1024, 1024, 1024, 2048, 2048]


def test_an_fp16_job_records_its_loss_scaler_and_final_scale(dataset, tmp_path):
    filelist, images = dataset  # on the CPU SGD is foreach, not fused: torch's GradScaler scales
    train.main(filelist, images, tmp_path / "h.csv", tmp_path / "h.json", mode_name="none", compile_settings=None,
               train=settings(precision="fp16", loader="synthetic", epochs=1), loader=LOADER, progress=False)
    saved = json.loads((tmp_path / "h.json").read_text())
    assert saved["loss_scaler"] == "torch.amp.GradScaler"
    assert 0 < saved["loss_scale_final"] <= 65536.0


def test_fused_loss_scaler_needs_a_fused_optimizer():
    model = torch.nn.Linear(4, 2)
    with pytest.raises(ValueError, match="SGD does not unscale in its step.*GradScaler"):
        train.FusedLossScaler(torch.optim.SGD(model.parameters(), lr=0.1, foreach=True), torch.device("cpu"))


def test_train_step_picks_its_loss_scaler_and_says_which():
    model = torch.nn.Linear(16, 4)
    images, labels = torch.randn(8, 16), torch.randint(0, 4, (8,))
    cpu = torch.device("cpu")
    picked = {}
    for precision, optimizer, scaler in (("fp16", fused_sgd(model), "fused"), ("fp16", fused_sgd(model), "torch"),
                                         ("fp16", fused_sgd(model), "none"), ("fp32", fused_sgd(model), "fused"),
                                         ("fp16", torch.optim.SGD(model.parameters(), lr=0.1, foreach=True), "fused")):
        step = train.make_train_step(model, optimizer, precision, cpu, loss_scaler=scaler)
        assert torch.isfinite(step(images, labels))
        picked[precision, optimizer.defaults["fused"] or False, scaler] = (step.loss_scaler, step.loss_scale())
    assert picked == {("fp16", True, "fused"): ("train.FusedLossScaler", 65536.0),
                      ("fp16", True, "torch"): ("torch.amp.GradScaler", 65536.0),
                      ("fp16", True, "none"): (None, None), ("fp32", True, "fused"): (None, None),
                      ("fp16", False, "fused"): ("torch.amp.GradScaler", 65536.0)}  # not fused: torch's
    with pytest.raises(ValueError, match="no such loss scaler 'lean'"):
        train.make_train_step(model, fused_sgd(model), "fp16", cpu, loss_scaler="lean")


def test_cold_compile_cache_is_new_empty_used_and_removed(monkeypatch, tmp_path):
    shared = tmp_path / "shared"
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(shared))
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    with train.compile_cache("cold", "default") as facts:
        folder = Path(facts["dir"])
        assert facts["policy"] == "cold" and facts["was_empty"]
        assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(folder) and not any(folder.iterdir())
        torch._dynamo.reset()
        compiled = torch.compile(lambda x: torch.sin(x) * 3 + 1)
        compiled(torch.ones(5))
        assert any(path.is_file() for path in folder.rglob("*")), "torch.compile did not write into the cold cache"
    assert not folder.exists()
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(shared) and "TRITON_CACHE_DIR" not in os.environ


def test_shared_compile_cache_records_whether_it_was_warm(monkeypatch, tmp_path):
    shared = tmp_path / "shared"
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(shared))
    with train.compile_cache("shared", "default") as facts:
        assert facts == {"policy": "shared", "dir": str(shared), "was_empty": True}
    (shared / "entry").write_text("compiled before")
    with train.compile_cache("shared", "default") as facts:
        assert facts["was_empty"] is False
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(shared)


def test_batches_per_fetch_cuts_dali_batches_into_training_batches(dataset, tmp_path):
    """loader.batches_per_fetch k: DALI makes batches of k training batches, cut into training
    batches; an epoch has the same steps as k = 1 and the first the same images in the same order
    (later epochs start where DALI's reader wrapped, which depends on its batch), on the training
    thread or fetched on a thread of its own; a bad k is a clear error."""
    filelist, images = dataset
    lines = filelist.read_text().split()[0::2]
    unique = tmp_path / "unique.txt"
    unique.write_text("".join(f"{path} {label}\n" for label, path in enumerate(lines[:37])))  # 4 full batches + 5

    def epochs(k, fetch="inline", count=2):
        cfg = {**LOADER, "threads": 1, "batches_per_fetch": k, "fetch": fetch}
        loader = train.dali_loader(unique, images, settings(batch_size=8, image_size=16), cfg, torch.device("cpu"))
        got = [[(batch.shape, labels.tolist()) for batch, labels in loader] for _ in range(count)]
        return loader, got

    one, expected = epochs(1)
    assert one.steps_per_epoch == 4 and [len(epoch) for epoch in expected] == [4, 4]
    two, cut = epochs(2)
    assert two.steps_per_epoch == 4 and two.batch_size == 8
    assert [len(epoch) for epoch in cut] == [4, 4]
    assert [labels for _, labels in cut[0]] == [labels for _, labels in expected[0]]
    assert {shape for epoch in cut for shape, _ in epoch} == {torch.Size([8, 3, 16, 16])}
    _, threaded = epochs(2, fetch="thread")
    assert threaded == cut
    three, thirds = epochs(3, count=3)  # fetches of 24: one whole, then the 13 left give one batch
    assert three.steps_per_epoch == 4 and [len(epoch) for epoch in thirds] == [4, 4, 4]
    first = sum((labels for _, labels in thirds[0]), [])
    assert len(set(first)) == 32 and first == sum((labels for _, labels in expected[0]), [])
    for bad in (0, 1.5, True, "2"):
        with pytest.raises(PipelineError, match=f"loader.batches_per_fetch {bad!r}"):
            epochs(bad)
    pipe = train.dali_pipeline(str(unique), str(images), image_size=16, batch_size=12, device=torch.device("cpu"),
                               dtype="fp32", threads=1, prefetch=2, hw_decoder_load=0.0, seed=0)
    with pytest.raises(PipelineError, match="batches_per_fetch 5: the pipelines' batch of 12"):
        train.DaliLoader(pipe, channels_last=True, batches_per_fetch=5)


def test_paired_blocks_alternate_and_leave_the_loader_closed():
    """After the epochs: one-batch and loader-fed blocks in rounds of alternating order, the loader
    read across its epochs, and its last epoch closed (a fetch thread stopped) at the end."""
    events = []

    class Loader:
        def __iter__(self):
            events.append("epoch")
            try:
                for index in range(3):
                    yield torch.full((2, 3, 4, 4), float(index)), torch.zeros(2, dtype=torch.int64)
            finally:
                events.append("closed")

    used = []
    fixed_ids = set()

    def step(images, labels):
        used.append("one" if images.data_ptr() in fixed_ids else "fed")

    original = train.SyntheticLoader

    class Recording(original):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            fixed_ids.add(self.batch.data_ptr())

    try:
        train.SyntheticLoader = Recording
        one, fed = train.synthetic_batch_rates(step, steps=4, batch_size=2, image_size=4, num_classes=3,
                                               device=torch.device("cpu"), dtype="fp32", channels_last=False,
                                               seed=0, blocks=2, fed=Loader())
    finally:
        train.SyntheticLoader = original
    assert len(one) == len(fed) == 2 and all(rate > 0 for rate in one + fed)
    assert used == ["one", "fed"] * 4 + ["one"] * 2 + ["fed"] * 2 + ["fed"] * 2 + ["one"] * 2
    # 4 warm-up + 4 timed fed steps over epochs of 3: three epochs begun, each closed
    assert events == ["epoch", "closed", "epoch", "closed", "epoch", "closed"]
    assert train.synthetic_batch_rates(step, steps=0, batch_size=2, image_size=4, num_classes=3,
                                       device=torch.device("cpu"), dtype="fp32", channels_last=False,
                                       seed=0) == ([], [])
    with pytest.raises(PipelineError, match="the loader gave no batches"):
        train.synthetic_batch_rates(step, steps=2, batch_size=2, image_size=4, num_classes=3,
                                    device=torch.device("cpu"), dtype="fp32", channels_last=False,
                                    seed=0, fed=[])


def test_upper_bound_steps_split_into_blocks_of_about_50():
    """More upper-bound steps give more paired rounds, not longer blocks; never fewer than 5."""
    assert [train.upper_bound_blocks(steps) for steps in (3, 250, 299, 300, 1000)] == [5, 5, 5, 6, 20]


@pytest.mark.skipif("tlb_shootdowns" not in train.machine_interrupts() or len(os.sched_getaffinity(0)) < 2,
                    reason="needs x86's TLB line in /proc/interrupts and 2 CPUs")
def test_unmapping_a_file_while_another_thread_runs_counts_tlb_shootdowns(tmp_path):
    """What machine_tlb_shootdowns counts: a file mapped and unmapped (as DALI's reader does with
    each image by default) while another thread of the process runs on another CPU. The two
    threads are pinned to two different CPUs: left to the scheduler, both can share one CPU (it
    did once in a full run of the suite on a 2-CPU VM: 0 shootdowns), and then none is sent."""
    import hashlib
    import mmap

    path = tmp_path / "image.jpg"
    path.write_bytes(b"x" * 65536)
    stop, started, data = threading.Event(), threading.Event(), b"y" * (1 << 22)
    main_cpu, other_cpu = sorted(os.sched_getaffinity(0))[:2]
    saved = os.sched_getaffinity(0)

    def busy():  # hashing releases the GIL: this thread really runs beside the main one
        os.sched_setaffinity(0, {other_cpu})  # 0: this thread only (Linux)
        started.set()
        while not stop.is_set():
            hashlib.sha256(data).digest()

    os.sched_setaffinity(0, {main_cpu})
    other = threading.Thread(target=busy)
    other.start()
    try:
        assert started.wait(10)
        before = train.machine_interrupts()["tlb_shootdowns"]
        with open(path, "rb") as handle:
            for _ in range(2000):
                with mmap.mmap(handle.fileno(), 0, prot=mmap.PROT_READ) as mapped:
                    mapped[::4096]
        shootdowns = train.machine_interrupts()["tlb_shootdowns"] - before
    finally:
        stop.set()
        other.join()
        os.sched_setaffinity(0, saved)
    assert shootdowns >= 100  # 1998 of 2000 on a 2-CPU VM (903 unpinned; 0 with both on one CPU)


def test_reader_options_reach_dalis_file_reader_and_unknown_ones_are_named(dataset):
    """loader.reader_options go to readers.file as they are: read() instead of mapping each file
    gives the same batches in the same order; a name DALI does not know is a PipelineError."""
    filelist, images = dataset

    def first_batches(options):
        (pipe,) = train.dali_pipelines(filelist, images, settings(), {**LOADER, "decoder": "cpu",
                                                                     "reader_options": options}, torch.device("cpu"))
        pipe.build()
        return [[np.asarray(out.as_tensor()) for out in pipe.run()] for _ in range(3)]

    mapped, read = first_batches({}), first_batches({"dont_use_mmap": True})
    for (images_a, labels_a), (images_b, labels_b) in zip(mapped, read):
        assert np.array_equal(images_a, images_b) and np.array_equal(labels_a, labels_b)
    with pytest.raises(PipelineError, match=r"loader.reader_options .*no_such_option"):
        first_batches({"no_such_option": 1})


def test_host_per_step_from_snapshots_and_without_proc(monkeypatch):
    """Per step between two snapshots: the threads' CPU by role and the machine's busy, steal and
    interrupt time; a host without /proc gives what it has, and the summary takes medians per kind."""
    before = train.host_snapshot()
    sum(i * i for i in range(300_000))  # some CPU time on the main thread
    after = train.host_snapshot()
    per_step = train.host_per_step(before, after, 2)
    assert per_step["main_cpu_ms"] > 0 and per_step["main_voluntary_switches"] >= 0
    assert per_step["machine_busy_ms"] >= per_step["machine_irq_ms"] >= 0 and per_step["machine_steal_ms"] >= 0
    assert train.host_per_step(({}, {}), ({}, {}), 2) == {}
    if "tlb_shootdowns" in train.machine_interrupts():  # x86: counted in the machine's fields too
        assert per_step["machine_tlb_shootdowns"] >= 0 and per_step["machine_call_interrupts"] >= 0
    real_open = open
    monkeypatch.setattr("builtins.open", lambda path, *a, **k: (_ for _ in ()).throw(OSError("no /proc"))
                        if path == "/proc/stat" else real_open(path, *a, **k))
    assert train.machine_cpu_ms() == {}
    monkeypatch.setattr("builtins.open", lambda path, *a, **k: (_ for _ in ()).throw(OSError("no /proc"))
                        if path == "/proc/interrupts" else real_open(path, *a, **k))
    assert train.machine_interrupts() == {}
    reading = train.machine_cpu_ms()
    assert "busy_ms" in reading and "tlb_shootdowns" not in reading  # what the host has
    assert train.machine_deltas(reading, reading) == {"busy_ms": 0, "steal_ms": 0, "irq_ms": 0}
    summary = train.paired_host({"one": [{"a": 1.0, "b": 2.0}, {"a": 3.0}, {"a": 2.0, "b": 4.0}],
                                 "fed": [{"a": 5.0}], "none": []})
    assert summary == {"one": {"a": 2.0}, "fed": {"a": 5.0}}  # a field missing in one block is left out
    assert train.paired_host({}) is None


def test_the_allocators_facts_are_read_from_its_stats_on_cuda_only(monkeypatch):
    stats = {"reserved_bytes.all.current": 3 * 2**30 + 2**20, "num_alloc_retries": 2, "num_ooms": 1}
    monkeypatch.setattr(train.torch.cuda, "memory_stats", lambda device: stats)
    assert train.allocator_facts(torch.device("cuda")) == {"gpu_reserved_gib": 3.001, "alloc_retries": 2,
                                                           "alloc_ooms": 1}
    assert train.allocator_facts(torch.device("cpu")) == {}


def test_the_side_stream_is_made_once_and_reused_by_every_block(monkeypatch):
    """The caching allocator reuses memory only on the stream that allocated it: a new side stream
    per block of steps (the benchmarks enter training_stream once per block) held the step's whole
    working set anew each block until the GPU was full (2026-12-07g). No GPU here: CUDA's stream
    calls are stood in for, recording what training_stream asks of them."""
    made, entered = [], []

    class Stream:
        def __init__(self, device, priority=0):
            self.priority = priority
            made.append(self)

        def wait_stream(self, other):
            pass

    @contextlib.contextmanager
    def stream(s):
        entered.append(s)
        yield

    monkeypatch.setattr(train, "_SIDE_STREAMS", {})
    monkeypatch.setattr(train.torch.cuda, "Stream", Stream)
    monkeypatch.setattr(train.torch.cuda, "stream", stream)
    monkeypatch.setattr(train.torch.cuda, "current_stream", lambda device=None: Stream(device))
    cuda = torch.device("cuda", 0)
    for policy in ("side", "side", "side-high", "side", "side-high"):
        with train.training_stream(cuda, policy) as used:
            assert used == policy
    side, high = entered[0], entered[2]
    assert entered == [side, side, high, side, high] and side is not high
    assert (side.priority, high.priority) == (0, train.HIGH_PRIORITY)
    with train.training_stream(cuda, "default") as used:
        assert used == "default" and len(entered) == 5  # the legacy default stream: nothing entered
