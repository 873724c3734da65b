"""What a reader of a run's report and archive relies on, checked without running the pipeline: the
article's numbers kept in the repository, plots that stay legible with repeats (no value label under
a whisker, no loss curve hidden under another), report captions that render for every config, the
provenance of a CPU run, and the archive docs kept in step with the README."""

import json
import re
from pathlib import Path
from types import SimpleNamespace

import jinja2
import matplotlib
import numpy as np
import pandas as pd
import pytest
import yaml
from docutils.core import publish_parts

matplotlib.use("Agg")

import plot  # noqa: E402
import provenance  # noqa: E402
import summarize  # noqa: E402
import sysinfo  # noqa: E402
import vs_article  # noqa: E402
from test_summary import ARTICLE, ARTICLE_CSV, run_repeats, run_summary  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED_ARTICLE = REPO.parent / "shared" / "ARTICLE.md"
VALUE_LABEL = re.compile(r"^\d+(\.\d+)?x?$")


# ---------------------------------------------------------------- the article's numbers
def test_article_reference_table_is_the_published_one():
    times, setup = summarize.read_article(ARTICLE_CSV)
    kept = {mode: rows.sort_values("epoch")["epoch_s"].tolist() for mode, rows in times.groupby("mode")}
    assert kept == ARTICLE
    assert (setup["gpu"], setup["torch"], setup["cpu"]) == ("GeForce RTX 3090", "2.1.0", "Ryzen 7 3700X")
    assert (setup["model"], setup["image_size"], setup["batch_size"], setup["precision"],
            setup["epochs"]) == ("resnet50", "224", "64", "fp16", "3")


@pytest.mark.skipif(not SHARED_ARTICLE.exists(), reason="../shared/ARTICLE.md is not beside the repo")
def test_article_reference_table_matches_the_article_text():
    """The Markdown table of ../shared/ARTICLE.md, cell by cell, against docs/article/epoch_times.csv."""
    published = {}
    for line in SHARED_ARTICLE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"\d+", cells[1]):
            published[cells[0].split()[0]] = [int(c) for c in cells[1:]]
    assert published == ARTICLE


# ---------------------------------------------------------------- plot legibility
def _overlaps(box, x0, x1, y0, y1) -> bool:
    return x0 <= box.x1 and x1 >= box.x0 and y0 <= box.y1 and y1 >= box.y0


def _value_labels(ax):
    return [t for t in ax.texts if VALUE_LABEL.match(t.get_text())]


def _segments_in_pixels(ax, lines, collections):
    """Every whisker as (x0, x1, y0, y1) in display coordinates; cap markers as short dashes."""
    to_px = ax.transData.transform
    out = []
    for line in lines:
        points = to_px(np.column_stack([line.get_xdata(), line.get_ydata()]))
        if line.get_linestyle() in ("None", "", " "):  # caps drawn as markers
            half = line.get_markersize()
            out += [(x - half, x + half, y, y) for x, y in points]
        else:
            out += [(min(a[0], b[0]), max(a[0], b[0]), min(a[1], b[1]), max(a[1], b[1]))
                    for a, b in zip(points[:-1], points[1:])]
    for collection in collections:
        for seg in collection.get_segments():
            (xa, ya), (xb, yb) = to_px(np.asarray(seg))
            out.append((min(xa, xb), max(xa, xb), min(ya, yb), max(ya, yb)))
    return out


def _labels_clear_of(fig, ax, segments) -> list[str]:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [t.get_text() for t in _value_labels(ax)
            if any(_overlaps(t.get_window_extent(renderer), *s) for s in segments)]


def test_epoch_time_labels_are_not_under_whiskers(tmp_path):
    _, csvs, _ = run_repeats(tmp_path)
    times, order = plot.read_epoch_times(csvs)
    fig = plot.epoch_times_figure(times, order, "none", "run article")
    ax = fig.axes[0]
    assert len(_value_labels(ax)) == 12
    whiskers = _segments_in_pixels(ax, ax.lines, [])  # seaborn draws whiskers and caps as lines
    assert whiskers
    assert _labels_clear_of(fig, ax, whiskers) == []
    plot.plt.close(fig)


def test_vs_article_labels_are_not_under_whiskers(tmp_path):
    paths, _, _ = run_repeats(tmp_path)
    table = vs_article.comparison_table(pd.read_csv(paths["csv"]), summarize.read_article(ARTICLE_CSV)[0],
                                        "none")
    fig = vs_article.figure(table, "none", "this run: x", "article: y", "run article")
    ax = fig.axes[0]
    bars = [c for c in ax.containers if hasattr(c, "datavalues")]
    whiskers = [c for c in ax.containers if c not in bars]
    assert len(whiskers) == 1
    _, caps, cols = whiskers[0].lines
    assert _labels_clear_of(fig, ax, _segments_in_pixels(ax, caps, cols)) == []
    assert len(_value_labels(ax)) == 8
    plot.plt.close(fig)


def test_vs_article_legend_names_both_setups_with_their_protocols(tmp_path):
    _, _, _, jsons = run_summary(tmp_path)
    for path in jsons:
        meta = json.loads(path.read_text())
        meta.update(device="cpu", versions={"torch": "2.14.1", "cpu": "Xeon"},
                    train={"model": "resnet18", "image_size": 64, "batch_size": 8, "precision": "fp32",
                           "epochs": 3})
        path.write_text(json.dumps(meta))
    vs_article.main(tmp_path / "summary.csv", ARTICLE_CSV, jsons, tmp_path / "plots", run_name="x")
    svg = (tmp_path / "plots" / "vs_article.svg").read_text()
    assert "this run: CPU (Xeon), PyTorch 2.14.1 — resnet18, 64 px, batch 8, fp32, 3 epochs" in svg
    assert "article: GeForce RTX 3090, PyTorch 2.1.0 — resnet50, 224 px, batch 64, fp16, 3 epochs" in svg


def test_coinciding_loss_curves_stay_visible(tmp_path):
    """Compiled modes often compute the very same losses: each mode's colour must still show."""
    steps = list(range(1, 41))
    curve = [3.0 + ((s * 7) % 5) * 0.3 for s in steps]
    curves = pd.DataFrame([{"mode": m, "repeat": 1, "step": s, "loss": v}
                           for m in ARTICLE for s, v in zip(steps, curve)])
    fig = plot.loss_figure(curves, [20, 20], list(ARTICLE), "none", "run x")
    ax = fig.axes[0]
    ax.get_legend().remove()  # count the curves' pixels, not the legend's
    fig.canvas.draw()
    pixels = np.asarray(fig.canvas.buffer_rgba())[..., :3].reshape(-1, 3).astype(int)
    palette = plot.mode_palette(list(ARTICLE), "none")
    for mode in ARTICLE:
        if mode == "none":
            continue
        colour = np.array([round(255 * c) for c in palette[mode][:3]])
        visible = (np.abs(pixels - colour).max(axis=1) <= 12).sum()
        assert visible > 500, f"{mode}'s curve is hidden ({visible} pixels of its colour)"
    widths = [line.get_linewidth() for line in ax.lines if line.get_label() in ARTICLE]
    assert widths == sorted(widths, reverse=True) and len(set(widths)) == len(widths)
    plot.plt.close(fig)


# ---------------------------------------------------------------- report captions
class Wildcards(dict):
    __getattr__ = dict.__getitem__


def report_categories() -> set[str]:
    """Every report category the rules give their outputs (the report's sections)."""
    rules = "".join(p.read_text() for p in (REPO / "workflow" / "rules").glob("*.smk"))
    names = set(re.findall(r'category="([^"]+)"', rules))
    plots = rules.split("PLOT_CATEGORIES = {", 1)[1].split("}", 1)[0]
    return names | set(re.findall(r'"\w+": "([^"]+)"', plots))


def rst_links() -> str:
    """The link targets Snakemake appends to every caption and to the workflow description."""
    lines = [".. _Workflow: javascript:show_panel('workflow')",
             ".. _Statistics: javascript:show_panel('statistics')"]
    lines += [f".. _{name}: javascript:app.showCategory('{name}')" for name in sorted(report_categories())]
    return "\n\n" + "\n".join(lines) + "\n"


def test_report_has_one_category_per_kind_of_result():
    assert report_categories() == {"Summary", "Epoch times", "Speedup", "Training loss",
                                   "Article comparison", "Timings per job", "Provenance"}


def _config(**train):
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["train"].update(train)
    return config


@pytest.mark.parametrize("train", [{"epochs": 3, "repeats": 1}, {"epochs": 2, "repeats": 2}])
@pytest.mark.parametrize("caption", sorted((REPO / "workflow" / "report").glob("*.rst")),
                         ids=lambda p: p.name)
def test_captions_render_as_clean_restructuredtext(caption, train):
    wildcards = Wildcards(mode="reduce-overhead", **({"repeat": "2"} if train["repeats"] > 1 else {}))
    snakemake = SimpleNamespace(config=_config(**train), wildcards=wildcards)
    text = jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(
        caption.read_text() + rst_links()).render(snakemake=snakemake)
    assert "2..2" not in text  # "epoch 2", not "epochs 2..2"
    body = publish_parts(text, writer="html",
                         settings_overrides={"report_level": 2, "halt_level": 5})["body"]
    assert "system-message" not in body, body
    words = " ".join(text.split())
    if caption.name == "timings.rst":
        assert f"repeat {wildcards.get('repeat', '1')} of {train['repeats']}." in words
    if caption.name == "provenance.rst":
        assert "--configfile results/food101-resnet50/config.yaml --config run=recheck" in words


# ---------------------------------------------------------------- provenance of a CPU run
def test_provenance_of_a_cpu_run_says_none_and_that_cuda_was_unused(tmp_path):
    versions = {"python": "3.11.7", "torch": "2.14.1+cu130", "torchvision": "0.29.1", "dali": "2.4.0",
                "cuda": "13.0", "cudnn": None, "gpu": None, "gpu_count": 0, "driver": None,
                "cpu": "Xeon", "cpu_cores": 2, "os_release": "Debian GNU/Linux 12 (bookworm)",
                "os": "Linux-6.1-x86_64-with-glibc2.36", "hostname": "vm"}
    path = tmp_path / "none.json"
    path.write_text(json.dumps({"mode": "none", "device": "cpu", "versions": versions}))
    prov = provenance.build([path], run_name="r", config={"dataset": {}}, workflow_dir=tmp_path,
                            snakemake_version="9")
    assert prov["hardware"]["gpu"] is None and prov["hardware"]["driver"] is None
    assert prov["software"]["cudnn"] is None
    md = provenance.render_markdown(prov)
    assert "| GPU | none |" in md and "| NVIDIA driver | none |" in md and "| cuDNN | none |" in md
    assert "| CUDA (PyTorch build) | 13.0 (not used: the jobs ran on the CPU) |" in md
    assert "| OS distribution | Debian GNU/Linux 12 (bookworm) |" in md


def test_versions_name_the_os_distribution():
    release = sysinfo.os_release()
    assert release and release != "unknown"
    assert sysinfo.versions()["os_release"] == release


# ---------------------------------------------------------------- docs
def test_readme_archive_section_is_docs_archive_md():
    readme = (REPO / "README.md").read_text()
    doc = (REPO / "docs" / "archive.md").read_text()
    start = readme.index("## Citing a run")
    end = readme.index("\n## ", start + 1)
    assert readme[start:end].strip() == doc.strip()
