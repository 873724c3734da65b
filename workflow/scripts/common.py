"""Helpers shared by the pipeline's scripts: logging under Snakemake and atomic file writes."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import IO, Iterator


class PipelineError(RuntimeError):
    """A problem with the user's input or environment, reported without a traceback's noise."""


def repeat_of(path: str | os.PathLike) -> int:
    """Which repeat of its mode a timing file holds, from the train rules' file names:
    `<mode>.csv` (or .json) is repeat 1, `<mode>.rep3.csv` repeat 3."""
    head, _, number = Path(path).stem.rpartition(".rep")
    return int(number) if head and number.isdigit() else 1


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; it replaces `path` only if the block succeeds.

    A killed or failed job therefore never leaves a plausible-looking partial output behind.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes owner-only files; outputs should be normal ones
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", **kwargs) -> Iterator[IO]:
    """Open a temporary file beside `path` for writing; rename it over `path` on success."""
    with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as handle:
        yield handle


@contextlib.contextmanager
def snakemake_log(snakemake) -> Iterator[None]:
    """Send stdout, stderr and `logging` of a script run by Snakemake to the rule's log file.

    Errors are logged with their message (and a traceback for unexpected ones) and the rule fails;
    a PipelineError's message is also printed on Snakemake's terminal, without a traceback.
    """
    log_path = snakemake.log[0] if snakemake.log else None
    if log_path is None:
        yield
        return
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w", buffering=1) as log:
        old_out, old_err = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = log
        logging.basicConfig(
            stream=log, level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", force=True
        )
        try:
            yield
        except PipelineError as err:
            logging.error("%s", err)
            print(f"PipelineError: {err}", file=old_err, flush=True)
            raise SystemExit(1) from None
        except BaseException:
            logging.exception("job failed")
            raise
        finally:
            sys.stdout, sys.stderr = old_out, old_err


def setup_cli_logging() -> None:
    """Logging for a script run from the command line."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")


def warn_user(message: str) -> None:
    """Log a warning; under Snakemake (log sent to a file) also print it on Snakemake's terminal."""
    logging.warning("%s", message)
    if sys.__stderr__ is not None and sys.stderr is not sys.__stderr__:
        print(f"WARNING: {message}", file=sys.__stderr__, flush=True)
