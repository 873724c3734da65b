"""Check an extracted Food-101 folder and write DALI file lists (train, test, all) with a report."""


import argparse
import contextlib
import json
import logging
import multiprocessing
import os
import sys
from collections import Counter
from pathlib import Path

from PIL import Image
from tqdm import tqdm

from common import PipelineError, atomic_write, setup_cli_logging, snakemake_log, warn_user

SPLITS = ("train", "test")
ON_BAD_IMAGE = ("fail", "exclude")
# Enough of the end of a file to find the EOI marker behind any zero padding some encoders add.
TAIL_BYTES = 4096
NAMES_SHOWN = 10


def first_names(names: list[str]) -> str:
    """'a, b, c (and 7 more)': error messages name a few items without flooding the log."""
    shown = ", ".join(names[:NAMES_SHOWN])
    more = len(names) - NAMES_SHOWN
    return shown + (f" (and {more} more)" if more > 0 else "")


def read_lines(path: Path) -> list[str]:
    if not path.is_file():
        raise PipelineError(f"{path}: missing")
    # Only the ends are stripped: a space inside a name must be seen, and rejected.
    return [line.strip() for line in path.read_text().splitlines() if line.strip()]


def reject_whitespace(names: list[str], source: Path) -> None:
    """DALI's file-list format separates path and label by whitespace, so paths must have none."""
    bad = [name for name in names if any(char.isspace() for char in name)]
    if bad:
        names = first_names([repr(name) for name in bad])
        raise PipelineError(f"{source}: paths with whitespace (DALI file lists cannot hold them): {names}")


def check_classes(root: Path) -> list[str]:
    """meta/classes.txt must name exactly the folders under images/, sorted; return the names."""
    classes_file = root / "meta" / "classes.txt"
    listed = read_lines(classes_file)
    reject_whitespace(listed, classes_file)
    folders = sorted(entry.name for entry in (root / "images").iterdir() if entry.is_dir())
    missing, extra = sorted(set(listed) - set(folders)), sorted(set(folders) - set(listed))
    if missing or extra:
        raise PipelineError(
            f"{classes_file} does not match the folders of {root / 'images'}: "
            f"classes without a folder: [{first_names(missing)}]; "
            f"folders not listed: [{first_names(extra)}]"
        )
    if listed != folders:
        raise PipelineError(f"{classes_file}: classes are not sorted or are repeated")
    empty = [name for name in folders if not any((root / "images" / name).iterdir())]
    if empty:
        raise PipelineError(f"{root / 'images'}: empty class folders: {first_names(empty)}")
    return folders


def read_split(root: Path, split: str, classes: list[str]) -> list[str]:
    """Entries ('<class>/<id>') of meta/<split>.txt, checked against meta/<split>.json."""
    txt_path, json_path = root / "meta" / f"{split}.txt", root / "meta" / f"{split}.json"
    entries = read_lines(txt_path)
    reject_whitespace(entries, txt_path)
    known = set(classes)
    unknown = [entry for entry in entries if entry.count("/") != 1 or entry.split("/")[0] not in known]
    if unknown:
        raise PipelineError(
            f"{txt_path}: entries not of the form <class>/<id> with a known class: {first_names(unknown)}"
        )
    duplicates = sorted(entry for entry, count in Counter(entries).items() if count > 1)
    if duplicates:
        raise PipelineError(f"{txt_path}: repeated entries: {first_names(duplicates)}")
    check_json_agrees(json_path, txt_path, entries)
    return entries


def check_json_agrees(json_path: Path, txt_path: Path, entries: list[str]) -> None:
    if not json_path.is_file():
        raise PipelineError(f"{json_path}: missing")
    try:
        by_class = json.loads(json_path.read_text())
        json_entries = [entry for names in by_class.values() for entry in names]
    except (ValueError, AttributeError, TypeError) as err:
        raise PipelineError(f"{json_path}: not a JSON object of class -> entries ({err})") from err
    if len(json_entries) != len(entries) or set(json_entries) != set(entries):
        only_txt = sorted(set(entries) - set(json_entries))
        only_json = sorted(set(json_entries) - set(entries))
        raise PipelineError(
            f"{txt_path} lists {len(entries)} images, {json_path} {len(json_entries)}; "
            f"only in the .txt: [{first_names(only_txt)}]; only in the .json: [{first_names(only_json)}]"
        )


def check_files_exist(root: Path, split: str, entries: list[str]) -> None:
    missing = [f"{entry}.jpg" for entry in entries if not (root / "images" / f"{entry}.jpg").is_file()]
    if missing:
        raise PipelineError(
            f"{root / 'meta' / f'{split}.txt'}: {len(missing)} listed images do not exist under "
            f"{root / 'images'}: {first_names(missing)}"
        )


def jpeg_problem(path: str) -> str | None:
    """Why `path` is not a complete JPEG, or None. Markers plus header parse: no full decode (fast)."""
    try:
        with open(path, "rb") as handle:
            if handle.read(2) != b"\xff\xd8":
                return "not a JPEG (no SOI marker at the start)"
            size_bytes = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size_bytes - TAIL_BYTES))
            tail = handle.read().rstrip(b"\x00")
            if not tail and size_bytes > TAIL_BYTES:
                handle.seek(0)
                tail = handle.read().rstrip(b"\x00")
            if not tail.endswith(b"\xff\xd9"):
                return "truncated JPEG (no EOI marker at the end)"
            handle.seek(0)
            with Image.open(handle) as image:
                image.verify()
                if image.format not in ("JPEG", "MPO"):
                    return f"not a JPEG ({image.format})"
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as err:
        return f"unreadable: {err}"
    return None


def find_bad_images(paths: list[str], workers: int) -> dict[str, str]:
    """{path: problem} over all paths, checked in a process pool (header parsing holds the GIL)."""
    progress = tqdm(total=len(paths), unit="img", desc="checking JPEGs", file=sys.stderr)
    with contextlib.ExitStack() as stack:
        if workers > 1:
            pool = stack.enter_context(multiprocessing.Pool(workers))
            problems = pool.imap(jpeg_problem, paths, chunksize=256)
        else:
            problems = map(jpeg_problem, paths)
        bad = {}
        for path, problem in zip(paths, problems):
            if problem:
                bad[path] = problem
            progress.update()
    progress.close()
    return bad


def handle_bad_images(root: Path, bad: dict[str, str], on_bad_image: str) -> list[dict]:
    """Fail on bad images, or return them as report rows for exclusion."""
    relative = {str(Path(path).relative_to(root / "images")): problem for path, problem in bad.items()}
    if bad and on_bad_image == "fail":
        lines = [f"{name}: {problem}" for name, problem in sorted(relative.items())]
        raise PipelineError(
            f"{len(bad)} unreadable images under {root / 'images'} "
            f"(on_bad_image: exclude would skip them): {first_names(lines)}"
        )
    return [{"path": name, "reason": problem} for name, problem in sorted(relative.items())]


def file_list_lines(entries: list[str], labels: dict[str, int], excluded: set[str]) -> list[str]:
    """DALI file_list lines: '<class>/<id>.jpg <label>' relative to images/."""
    lines = []
    for entry in entries:
        if f"{entry}.jpg" not in excluded:
            lines.append(f"{entry}.jpg {labels[entry.split('/')[0]]}\n")
    return lines


def write_outputs(out_dir: Path, lists: dict[str, list[str]], classes: list[str], report: dict) -> None:
    """Write every output to a temporary file first; all are renamed only if all were written."""
    with contextlib.ExitStack() as stack:
        for name, lines in lists.items():
            stack.enter_context(atomic_write(out_dir / f"{name}.txt")).writelines(lines)
        stack.enter_context(atomic_write(out_dir / "classes.txt")).writelines(f"{c}\n" for c in classes)
        json.dump(report, stack.enter_context(atomic_write(out_dir / "report.json")), indent=2)


def main(
    root: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    on_bad_image: str = "fail",
    workers: int | None = None,
) -> None:
    root, out_dir = Path(root), Path(out_dir)
    if on_bad_image not in ON_BAD_IMAGE:
        raise PipelineError(f"on_bad_image must be one of {ON_BAD_IMAGE}, got {on_bad_image!r}")
    for folder in (root / "images", root / "meta"):
        if not folder.is_dir():
            raise PipelineError(f"{folder}: missing (is {root} an extracted food-101 folder?)")
    classes = check_classes(root)
    splits = {split: read_split(root, split, classes) for split in SPLITS}
    overlap = sorted(set(splits["train"]) & set(splits["test"]))
    if overlap:
        raise PipelineError(f"{root / 'meta'}: images in both train and test: {first_names(overlap)}")
    for split, entries in splits.items():
        check_files_exist(root, split, entries)
    paths = [str(root / "images" / f"{entry}.jpg") for split in SPLITS for entry in splits[split]]
    bad = find_bad_images(paths, workers or os.cpu_count() or 1)
    excluded_rows = handle_bad_images(root, bad, on_bad_image)
    excluded = {row["path"] for row in excluded_rows}
    labels = {name: label for label, name in enumerate(classes)}
    lists = {split: file_list_lines(splits[split], labels, excluded) for split in SPLITS}
    lists["all"] = lists["train"] + lists["test"]
    report = {
        "classes": len(classes),
        "listed": {split: len(splits[split]) for split in SPLITS},
        "counts": {name: len(lines) for name, lines in lists.items()},
        "excluded_count": len(excluded_rows),
        "excluded": excluded_rows,
    }
    write_outputs(out_dir, lists, classes, report)
    if excluded_rows:
        warn_user(f"excluded {len(excluded_rows)} unreadable images from the file lists "
                  f"(on_bad_image: exclude); names and reasons in {out_dir / 'report.json'}")
    logging.info("%d classes; images: %s; excluded: %d", len(classes), report["counts"], len(excluded_rows))


if __name__ == "__main__":
    if "snakemake" in globals():
        with snakemake_log(snakemake):  # noqa: F821
            main(
                snakemake.input[0],  # noqa: F821
                Path(snakemake.output[0]).parent,  # noqa: F821
                on_bad_image=snakemake.params.on_bad_image,  # noqa: F821
                workers=snakemake.threads,  # noqa: F821
            )
    else:
        setup_cli_logging()
        parser = argparse.ArgumentParser(description=__doc__)
        parser.add_argument("root", help="the extracted food-101 folder (with images/ and meta/)")
        parser.add_argument("out_dir", help="gets train.txt, test.txt, all.txt, classes.txt, report.json")
        parser.add_argument("--on-bad-image", choices=ON_BAD_IMAGE, default="fail")
        parser.add_argument("--workers", type=int, default=None)
        args = parser.parse_args()
        try:
            main(args.root, args.out_dir, on_bad_image=args.on_bad_image, workers=args.workers)
        except PipelineError as err:
            sys.exit(f"error: {err}")
