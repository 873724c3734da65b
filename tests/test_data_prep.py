"""Tests of data preparation: synthetic archive, safe extraction and DALI file lists, with real parts."""

from __future__ import annotations

import gzip
import io
import json
import re
import shutil
import sys
import tarfile
from pathlib import Path

import pytest
from PIL import Image

SCRIPTS = Path(__file__).resolve().parents[1] / "workflow" / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

import extract  # noqa: E402
import filelists  # noqa: E402
import make_synthetic  # noqa: E402
from common import PipelineError  # noqa: E402

SMALL = dict(classes=3, train_per_class=4, test_per_class=2, max_side=64, seed=0, workers=1)
SMALL_CLASSES = ["apple_pie", "baby_back_ribs", "baklava"]
OUTPUT_NAMES = ["train.txt", "test.txt", "all.txt", "classes.txt", "report.json"]


@pytest.fixture(scope="session")
def small_archive(tmp_path_factory) -> Path:
    archive = tmp_path_factory.mktemp("archive") / "food-101.tar.gz"
    make_synthetic.main(archive, **SMALL)
    return archive


@pytest.fixture(scope="session")
def extracted_once(tmp_path_factory, small_archive) -> Path:
    root = tmp_path_factory.mktemp("extracted") / "food-101"
    extract.main(small_archive, root)
    return root


@pytest.fixture
def food101(tmp_path, extracted_once) -> Path:
    """A private copy of the small extracted dataset, free to be damaged by a test."""
    return Path(shutil.copytree(extracted_once, tmp_path / "food-101"))


def archive_members(archive: Path) -> dict[str, bytes | None]:
    """{name: file bytes, or None for a folder}."""
    with tarfile.open(archive, "r:*") as tar:
        return {m.name: tar.extractfile(m).read() if m.isfile() else None for m in tar.getmembers()}


# --- make_synthetic ---------------------------------------------------------------------------


def test_class_names_are_food101s_sorted_101():
    names = make_synthetic.FOOD101_CLASSES
    assert len(names) == len(set(names)) == 101
    assert list(names) == sorted(names)
    assert (names[0], names[16], names[17], names[-1]) == (
        "apple_pie", "cheese_plate", "cheesecake", "waffles"
    )


def test_synthetic_archive_has_food101_layout(small_archive):
    members = archive_members(small_archive)
    meta = {name: members[f"food-101/meta/{name}"].decode() for name in
            ["classes.txt", "labels.txt", "train.txt", "test.txt", "train.json", "test.json"]}
    assert meta["classes.txt"] == "".join(f"{c}\n" for c in SMALL_CLASSES)
    assert meta["labels.txt"] == "Apple pie\nBaby back ribs\nBaklava\n"
    entries = {}
    for split, per_class in [("train", 4), ("test", 2)]:
        lines = meta[f"{split}.txt"].splitlines()
        assert len(lines) == 3 * per_class
        assert all(re.fullmatch(r"[a-z_]+/\d{6,7}", line) for line in lines)
        by_class = json.loads(meta[f"{split}.json"])
        assert sorted(by_class) == SMALL_CLASSES
        assert [e for c in SMALL_CLASSES for e in by_class[c]] == lines
        assert all(e.startswith(f"{c}/") for c in SMALL_CLASSES for e in by_class[c])
        entries[split] = lines
    all_entries = entries["train"] + entries["test"]
    assert len({e.split("/")[1] for e in all_entries}) == len(all_entries)  # distinct ids
    folders = {"food-101", "food-101/images", "food-101/meta"} | {f"food-101/images/{c}" for c in SMALL_CLASSES}
    files = {f"food-101/meta/{name}" for name in meta} | {f"food-101/images/{e}.jpg" for e in all_entries}
    assert {name for name, data in members.items() if data is None} == folders
    assert {name for name, data in members.items() if data is not None} == files


def test_synthetic_images_are_rgb_jpegs_with_max_side(small_archive):
    for name, data in archive_members(small_archive).items():
        if name.endswith(".jpg"):
            with Image.open(io.BytesIO(data)) as image:
                assert (image.format, image.mode) == ("JPEG", "RGB")
                assert max(image.size) == 64 and min(image.size) >= 0.6 * 64 - 1


def test_synthetic_archive_is_deterministic(tmp_path, small_archive):
    in_pool = tmp_path / "pool.tar.gz"
    make_synthetic.main(in_pool, **{**SMALL, "workers": 2})
    assert in_pool.read_bytes() == small_archive.read_bytes()  # same seed, any worker count
    assert small_archive.read_bytes()[:2] == b"\x1f\x8b"  # .tar.gz is gzip
    other_seed = tmp_path / "seed1.tar.gz"
    make_synthetic.main(other_seed, **{**SMALL, "seed": 1})
    assert other_seed.read_bytes() != small_archive.read_bytes()
    plain = tmp_path / "plain.tar"
    make_synthetic.main(plain, **SMALL)
    assert plain.read_bytes() == gzip.decompress(small_archive.read_bytes())  # .tar is uncompressed


# --- extract ----------------------------------------------------------------------------------


def make_tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    with tarfile.open(path, "w") as tar:
        for info, data in members:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data else None)
    return path


def folder(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, 0o755
    return info


def link(name: str, target: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


def device(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
    return info


def food101_start() -> list[tuple[tarfile.TarInfo, bytes]]:
    """The beginning of a valid archive, so a bad member comes after something was extracted."""
    return [(folder("food-101"), b""), (folder("food-101/images"), b""), (folder("food-101/meta"), b""),
            (tarfile.TarInfo("food-101/meta/classes.txt"), b"apple_pie\n")]


def test_extract_gives_food101_folder(tmp_path, small_archive):
    output_dir = tmp_path / "resources" / "synthetic" / "food-101"
    extract.main(small_archive, output_dir)
    assert sorted(p.name for p in output_dir.iterdir()) == ["images", "meta"]
    assert len(list((output_dir / "images").glob("*/*.jpg"))) == 18
    assert [p.name for p in output_dir.parent.iterdir()] == ["food-101"]  # no temporary left


@pytest.mark.parametrize(
    "bad_member",
    [
        "absolute",
        "food-101/../evil",
        "food-101/images/passwd",
        "food-101/images/outside",
        "food-101/hardlink",
        "food-101/null",
    ],
)
def test_extract_rejects_unsafe_members(tmp_path, bad_member):
    work = tmp_path / "work"
    evil = tmp_path / "evil"
    bad = {
        "absolute": (tarfile.TarInfo(str(evil)), b"owned"),
        "food-101/../evil": (tarfile.TarInfo("food-101/../evil"), b"owned"),
        "food-101/images/passwd": (link("food-101/images/passwd", "/etc/passwd", tarfile.SYMTYPE), b""),
        "food-101/images/outside": (link("food-101/images/outside", "../../..", tarfile.SYMTYPE), b""),
        "food-101/hardlink": (link("food-101/hardlink", "../../etc/passwd", tarfile.LNKTYPE), b""),
        "food-101/null": (device("food-101/null"), b""),
    }[bad_member]
    archive = make_tar(tmp_path / "bad.tar", food101_start() + [bad])
    output_dir = work / "food-101"
    with pytest.raises(PipelineError, match=re.escape(bad[0].name)):
        extract.main(archive, output_dir)
    assert not output_dir.exists()
    assert list(work.iterdir()) == []  # the temporary folder was removed
    assert not evil.exists() and not (work / "evil").exists()


@pytest.mark.parametrize("data_filter", [True, False], ids=["data-filter", "own-checks-only"])
@pytest.mark.parametrize(
    "links",
    [
        [("food-101/hardlink", "/etc/passwd", tarfile.LNKTYPE)],
        [("food-101/up", "..", tarfile.SYMTYPE), ("food-101/up2", "up/..", tarfile.SYMTYPE)],
        [("food-101/up", "..", tarfile.SYMTYPE), ("food-101/h", "food-101/up/../x", tarfile.LNKTYPE)],
    ],
    ids=["absolute-hardlink", "symlink-chain", "hardlink-through-symlink"],
)
def test_extract_rejects_links_leading_outside(tmp_path, monkeypatch, data_filter, links):
    """Links that look inside on paper but lead out through an earlier link; with and without
    tarfile's data filter (Pythons before 3.11.4 lack it)."""
    monkeypatch.setattr(extract, "HAS_DATA_FILTER", data_filter)
    (tmp_path / "x").write_text("outside")
    members = [(link(name, target, kind), b"") for name, target, kind in links]
    archive = make_tar(tmp_path / "bad.tar", food101_start() + members)
    before = sorted(tmp_path.rglob("*"))
    work = tmp_path / "work"
    with pytest.raises(PipelineError, match=rf"unsafe member '{re.escape(links[-1][0])}'"):
        extract.main(archive, work / "food-101")
    assert list(work.iterdir()) == []
    assert sorted(p for p in tmp_path.rglob("*") if p != work) == before


def test_extract_requires_food101_top_folder(tmp_path):
    archive = make_tar(tmp_path / "other.tar", [(folder("data"), b""), (folder("data/images"), b"")])
    with pytest.raises(PipelineError, match="no top-level food-101/"):
        extract.main(archive, tmp_path / "out" / "food-101")
    assert list((tmp_path / "out").iterdir()) == []


def test_extract_requires_images_and_meta(tmp_path):
    archive = make_tar(tmp_path / "half.tar", [(folder("food-101"), b""), (folder("food-101/meta"), b"")])
    with pytest.raises(PipelineError, match="no images/ folder"):
        extract.main(archive, tmp_path / "out" / "food-101")


# --- filelists --------------------------------------------------------------------------------


def read_dali_batch(images_dir: Path, file_list: Path):
    from nvidia.dali import fn, pipeline_def

    @pipeline_def
    def reader():
        jpegs, labels = fn.readers.file(file_root=str(images_dir), file_list=str(file_list))
        return fn.decoders.image(jpegs, device="cpu"), labels

    pipe = reader(batch_size=2, num_threads=1, device_id=None)
    pipe.build()
    images, labels = pipe.run()
    return [images.at(i) for i in range(2)], [int(labels.at(i)[0]) for i in range(2)]


def test_filelists_counts_labels_and_dali_reads_them(tmp_path, food101):
    out_dir = tmp_path / "filelists"
    filelists.main(food101, out_dir, workers=2)
    lines = {name: (out_dir / f"{name}.txt").read_text().splitlines() for name in ["train", "test", "all"]}
    assert [len(lines[name]) for name in ["train", "test", "all"]] == [12, 6, 18]
    assert lines["all"] == lines["train"] + lines["test"]
    assert (out_dir / "classes.txt").read_text().splitlines() == SMALL_CLASSES
    for line in lines["all"]:
        path, label = line.split(" ")
        assert SMALL_CLASSES[int(label)] == path.split("/")[0]
        assert (food101 / "images" / path).is_file()
    meta_train = (food101 / "meta" / "train.txt").read_text().splitlines()
    assert [line.split(" ")[0] for line in lines["train"]] == [f"{e}.jpg" for e in meta_train]
    report = json.loads((out_dir / "report.json").read_text())
    assert report["classes"] == 3 and report["counts"] == {"train": 12, "test": 6, "all": 18}
    assert report["excluded_count"] == 0

    images, labels = read_dali_batch(food101 / "images", out_dir / "train.txt")
    assert labels == [int(line.split(" ")[1]) for line in lines["train"][:2]]
    assert all(image.shape[2] == 3 and max(image.shape[:2]) == 64 for image in images)


def first_image(food101: Path, split: str = "train") -> str:
    return (food101 / "meta" / f"{split}.txt").read_text().splitlines()[0] + ".jpg"


def assert_no_outputs(out_dir: Path) -> None:
    assert not any((out_dir / name).exists() for name in OUTPUT_NAMES)


def test_filelists_truncated_jpeg_fails_naming_it(tmp_path, food101):
    name = first_image(food101)
    path = food101 / "images" / name
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(PipelineError, match=rf"{re.escape(name)}: truncated JPEG"):
        filelists.main(food101, tmp_path / "out", workers=2)
    assert_no_outputs(tmp_path / "out")


def test_filelists_excludes_bad_images_when_asked(tmp_path, food101):
    truncated, not_jpeg = first_image(food101, "train"), first_image(food101, "test")
    path = food101 / "images" / truncated
    path.write_bytes(path.read_bytes()[:100])
    (food101 / "images" / not_jpeg).write_text("<html>not found</html>")
    out_dir = tmp_path / "out"
    filelists.main(food101, out_dir, on_bad_image="exclude", workers=1)
    report = json.loads((out_dir / "report.json").read_text())
    assert report["counts"] == {"train": 11, "test": 5, "all": 16}
    assert report["excluded_count"] == 2
    reasons = {row["path"]: row["reason"] for row in report["excluded"]}
    assert reasons.keys() == {truncated, not_jpeg}
    assert "truncated" in reasons[truncated] and "not a JPEG" in reasons[not_jpeg]
    assert truncated not in (out_dir / "all.txt").read_text()


def test_filelists_rejects_non_jpeg_with_jpg_name(tmp_path, food101):
    name = first_image(food101, "test")
    Image.new("RGB", (8, 8)).save(food101 / "images" / name, "PNG")
    with pytest.raises(PipelineError, match=rf"{re.escape(name)}: not a JPEG"):
        filelists.main(food101, tmp_path / "out", workers=1)


def test_filelists_rejects_empty_class_folder(tmp_path, food101):
    for image in (food101 / "images" / "baklava").iterdir():
        image.unlink()
    with pytest.raises(PipelineError, match="empty class folders: baklava"):
        filelists.main(food101, tmp_path / "out", workers=1)


def test_filelists_rejects_meta_naming_missing_file(tmp_path, food101):
    name = first_image(food101, "test")
    (food101 / "images" / name).unlink()
    with pytest.raises(PipelineError, match=rf"test.txt: 1 listed images do not exist.*{re.escape(name)}"):
        filelists.main(food101, tmp_path / "out", workers=1)
    assert_no_outputs(tmp_path / "out")


def test_filelists_rejects_whitespace_in_paths(tmp_path, food101):
    entry = first_image(food101).removesuffix(".jpg")
    spaced = entry.replace("/", "/my ")
    (food101 / "images" / f"{entry}.jpg").rename(food101 / "images" / f"{spaced}.jpg")
    for suffix in ["txt", "json"]:
        meta = food101 / "meta" / f"train.{suffix}"
        meta.write_text(meta.read_text().replace(entry, spaced))
    with pytest.raises(PipelineError, match=rf"train.txt: paths with whitespace.*{re.escape(spaced)}"):
        filelists.main(food101, tmp_path / "out", workers=1)


def test_filelists_rejects_classes_not_matching_folders(tmp_path, food101):
    (food101 / "images" / "zucchini").mkdir()
    with pytest.raises(PipelineError, match=r"folders not listed: \[zucchini\]"):
        filelists.main(food101, tmp_path / "out", workers=1)


def test_filelists_rejects_json_disagreeing_with_txt(tmp_path, food101):
    meta = food101 / "meta" / "test.json"
    by_class = json.loads(meta.read_text())
    dropped = by_class["apple_pie"].pop()
    meta.write_text(json.dumps(by_class))
    with pytest.raises(PipelineError, match=rf"lists 6 images.*test.json 5.*only in the .txt: \[{dropped}\]"):
        filelists.main(food101, tmp_path / "out", workers=1)
