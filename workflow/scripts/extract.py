"""Safely extract the Food-101 archive (.tar or .tar.gz) so that output_dir appears only when complete."""


import argparse
import logging
import os
import posixpath
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

from tqdm import tqdm

from common import PipelineError, setup_cli_logging, snakemake_log

TOP_FOLDER = "food-101"
# tarfile's "data" filter (Python 3.11.4+, 3.12) adds its own checks; our checks run either way.
HAS_DATA_FILTER = hasattr(tarfile, "data_filter")
FILTER_ERROR = getattr(tarfile, "FilterError", ())


def escapes_root(path: str) -> bool:
    """Whether a normalised archive-relative path leaves the extraction root."""
    normalised = posixpath.normpath(path)
    return posixpath.isabs(path) or normalised == ".." or normalised.startswith("../")


def unsafe_reason(member: tarfile.TarInfo) -> str | None:
    """Why extracting `member` could write outside the target (or create a device), else None."""
    name = member.name
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return "has an absolute path"
    if ".." in name.replace("\\", "/").split("/"):
        return "has a '..' component"
    if member.ischr() or member.isblk() or member.isfifo():
        return "is a device file or pipe"
    if member.issym():
        # A symlink's target is relative to the folder holding the link.
        target = posixpath.join(posixpath.dirname(name), member.linkname)
        if posixpath.isabs(member.linkname) or escapes_root(target):
            return f"is a symlink pointing outside the target ({member.linkname})"
    if member.islnk() and (posixpath.isabs(member.linkname) or escapes_root(member.linkname)):
        return f"is a hard link pointing outside the target ({member.linkname})"
    return None


def resolved_link_reason(member: tarfile.TarInfo, target: Path) -> str | None:
    """Why a link leaves `target` once resolved through links extracted before it, else None.

    `a -> ..` then `b -> a/..` looks inside on paper but leads out; tarfile's data filter catches
    this too, where the Python has it.
    """
    if not (member.issym() or member.islnk()):
        return None
    base = target / posixpath.dirname(member.name) if member.issym() else target
    root = os.path.realpath(target)
    if os.path.commonpath([root, os.path.realpath(base / member.linkname)]) != root:
        kind = "symlink" if member.issym() else "hard link"
        return f"is a {kind} leading outside the target through other links ({member.linkname})"
    return None


def extract_members(archive: Path, target: Path) -> int:
    """Check and extract each member in one pass over the archive; return the member count.

    One pass matters for .tar.gz: listing members first would decompress 5 GB twice.
    """
    extract_kwargs = {"filter": "data"} if HAS_DATA_FILTER else {}
    count = 0
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in tqdm(tar, unit="file", desc="extracting", file=sys.stderr):
                reason = unsafe_reason(member) or resolved_link_reason(member, target)
                if reason:
                    raise PipelineError(f"{archive}: unsafe member {member.name!r} {reason}")
                if posixpath.normpath(member.name).split("/")[0] != TOP_FOLDER:
                    logging.warning("%s: ignoring %r outside %s/", archive, member.name, TOP_FOLDER)
                tar.extract(member, target, **extract_kwargs)
                count += 1
    except FILTER_ERROR as err:
        raise PipelineError(f"{archive}: unsafe member {err.tarinfo.name!r}: {err}") from err
    except (tarfile.TarError, EOFError, OSError) as err:
        raise PipelineError(f"{archive}: cannot extract: {err}") from err
    return count


def check_layout(archive: Path, extracted: Path) -> None:
    if not extracted.is_dir():
        raise PipelineError(f"{archive}: no top-level {TOP_FOLDER}/ folder in the archive")
    missing = [part for part in ("images", "meta") if not (extracted / part).is_dir()]
    if missing:
        raise PipelineError(f"{archive}: {TOP_FOLDER}/ has no {' or '.join(missing)}/ folder")


def replace_dir(new: Path, output_dir: Path) -> None:
    """Move `new` to `output_dir`, replacing an older copy only once the new one is in place."""
    old = None
    if output_dir.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{output_dir.name}.old.", dir=output_dir.parent))
        os.replace(output_dir, old / output_dir.name)
    os.replace(new, output_dir)
    if old is not None:
        shutil.rmtree(old)


def main(archive: str | os.PathLike, output_dir: str | os.PathLike) -> None:
    archive, output_dir = Path(archive), Path(output_dir)
    if not archive.is_file():
        raise PipelineError(f"{archive}: archive not found")
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    # Beside output_dir, so the final rename stays on one file system (atomic).
    tmp = Path(tempfile.mkdtemp(prefix=f".{output_dir.name}.", suffix=".tmp", dir=output_dir.parent))
    try:
        count = extract_members(archive, tmp)
        check_layout(archive, tmp / TOP_FOLDER)
        replace_dir(tmp / TOP_FOLDER, output_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    logging.info("extracted %d members of %s into %s", count, archive, output_dir)


if __name__ == "__main__":
    if "snakemake" in globals():
        with snakemake_log(snakemake):  # noqa: F821
            main(snakemake.input[0], snakemake.output[0])  # noqa: F821
    else:
        setup_cli_logging()
        parser = argparse.ArgumentParser(description=__doc__)
        parser.add_argument("archive", help="food-101.tar.gz or a synthetic .tar")
        parser.add_argument("output_dir", help="becomes the archive's food-101/ folder")
        args = parser.parse_args()
        try:
            main(args.archive, args.output_dir)
        except PipelineError as err:
            sys.exit(f"error: {err}")
