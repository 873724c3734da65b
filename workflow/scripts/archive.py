"""Bundle one run's results into results/<run>.tar.gz: one <run>/ folder, files in a fixed order,
a SHA256SUMS inside (check with `sha256sum -c SHA256SUMS`) and the archive's own sha256 beside it."""

# No `from __future__` import: Snakemake prepends code to scripts it runs.
import argparse
import gzip
import hashlib
import io
import logging
import os
import tarfile
from pathlib import Path

from common import PipelineError, atomic_path, atomic_write, setup_cli_logging, snakemake_log

SUMS_NAME = "SHA256SUMS"

log = logging.getLogger(__name__)


def sha256_of(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def archive_members(results_dir, result_files: list, extras: dict | None = None,
                    skip: list | None = None) -> dict[str, Path]:
    """{name inside the archive's <run>/ folder: source file}.

    `result_files` keep their path below `results_dir`; every log under `results_dir`/logs is added
    (except those in `skip`, such as this job's own log); `extras` are placed under the given names.
    """
    results_dir = Path(results_dir)
    skipped = {Path(p).resolve() for p in skip or []}
    members = {}
    for path in result_files:
        path = Path(path)
        try:
            members[path.relative_to(results_dir).as_posix()] = path
        except ValueError:
            raise PipelineError(f"{path} is not under {results_dir}") from None
    logs = results_dir / "logs"
    if logs.is_dir():
        for path in logs.rglob("*"):
            if path.is_file() and not path.name.startswith(".") and path.resolve() not in skipped:
                members[path.relative_to(results_dir).as_posix()] = path
    for name, path in (extras or {}).items():
        members[name] = Path(path)
    missing = [str(p) for p in members.values() if not p.is_file()]
    if missing:
        raise PipelineError(f"cannot archive missing file(s): {', '.join(missing)}")
    return members


def _tarinfo(name: str, size: int, mtime: float) -> tarfile.TarInfo:
    # Owner, group and mode normalised: the archive depends only on the files' contents and times.
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = size, int(mtime), 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def main(members: dict, out_tar, out_sha256=None, *, top: str) -> str:
    """Write `out_tar` with `top`/SHA256SUMS first, then every member by sorted name; returns the
    archive's sha256 (also written to `out_sha256` in `sha256sum` format when given)."""
    if SUMS_NAME in members:
        raise PipelineError(f"a member is named {SUMS_NAME}, which the archive writes itself")
    names = sorted(members)
    sums = "".join(f"{sha256_of(members[name])}  {name}\n" for name in names).encode()
    newest = max((os.stat(members[name]).st_mtime for name in names), default=0)
    with atomic_path(out_tar) as tmp:
        with open(tmp, "wb") as raw, \
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as zipped, \
                tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar:
            tar.addfile(_tarinfo(f"{top}/{SUMS_NAME}", len(sums), newest), io.BytesIO(sums))
            for name in names:
                stat = os.stat(members[name])
                with open(members[name], "rb") as handle:
                    tar.addfile(_tarinfo(f"{top}/{name}", stat.st_size, stat.st_mtime), handle)
        digest = sha256_of(tmp)
    if out_sha256 is not None:
        with atomic_write(out_sha256) as handle:
            handle.write(f"{digest}  {Path(out_tar).name}\n")
    log.info("archived %d files into %s (sha256 %s)", len(names), out_tar, digest)
    return digest


def _cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("results_dir", help="results/<run>: every file below it is archived")
    parser.add_argument("--out", required=True, help="results/<run>.tar.gz")
    args = parser.parse_args()
    results_dir = Path(args.results_dir)
    files = [p for p in sorted(results_dir.rglob("*"))
             if p.is_file() and not p.name.startswith(".") and "logs" not in p.relative_to(results_dir).parts]
    try:
        main(archive_members(results_dir, files), args.out, f"{args.out}.sha256", top=results_dir.name)
    except PipelineError as err:
        raise SystemExit(f"error: {err}") from None


if __name__ == "__main__":
    if "snakemake" in globals():
        with snakemake_log(snakemake):  # noqa: F821
            results = Path(snakemake.output.tar.removesuffix(".tar.gz"))  # noqa: F821
            extras = {f"envs/{Path(p).name}": p for p in snakemake.input.envs}  # noqa: F821
            extras["article/epoch_times.csv"] = snakemake.input.article  # noqa: F821
            extras["data/filelists_report.json"] = snakemake.input.filelists_report  # noqa: F821
            main(
                archive_members(results, list(snakemake.input.results), extras,  # noqa: F821
                                skip=list(snakemake.log)),  # noqa: F821
                snakemake.output.tar,  # noqa: F821
                snakemake.output.sha256,  # noqa: F821
                top=results.name,
            )
    else:
        setup_cli_logging()
        _cli()
