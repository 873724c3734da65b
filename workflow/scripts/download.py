"""Download a large archive resumably into `<output>.part`, check its sha256, then move it into place."""


import argparse
import hashlib
import http.client
import logging
import os
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import NoReturn

from tqdm import tqdm

from common import PipelineError, setup_cli_logging, snakemake_log

log = logging.getLogger(__name__)

CHUNK_BYTES = 1 << 20


class _Retryable(Exception):
    """A failure worth another attempt: a dropped connection, a timeout, HTTP 5xx or 429."""


def main(
    url: str,
    output: str | Path,
    sha256: str,
    *,
    retries: int = 5,
    timeout_s: float = 60.0,
    backoff_s: float = 1.0,
    progress: bool = True,
) -> None:
    """Download `url` to `output`; `output` appears only once complete and matching `sha256`."""
    output = Path(output)
    sha256 = sha256.strip().lower()
    if output.exists():
        _check_existing(url, output, sha256)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    part = output.with_name(output.name + ".part")
    log.info("downloading %s to %s", url, output)
    total_bytes = _download_with_retries(url, part, sha256, retries, timeout_s, backoff_s, progress)
    _check_size(url, part, total_bytes)
    _check_sha256(url, part, sha256)
    os.replace(part, output)
    log.info("saved %s: %d bytes, sha256 %s", output, output.stat().st_size, sha256)


def _check_existing(url: str, output: Path, sha256: str) -> None:
    got = sha256_of(output)
    if got != sha256:
        # Not ours to delete: it was there before this run.
        raise PipelineError(
            f"existing {output} (from {url}) does not match: expected sha256 {sha256}, got {got}; "
            "delete it to download again"
        )
    log.info("%s already present and verified (sha256 %s)", output, sha256)


def _download_with_retries(
    url: str, part: Path, sha256: str, retries: int, timeout_s: float, backoff_s: float, progress: bool
) -> int | None:
    """Fetch into `part` until complete; returns the size the server announced (None if it did not).

    `retries` bounds the failed attempts in a row that added nothing to the part file: a 5 GB
    download that drops every few minutes keeps resuming, a server that keeps failing is given up on.
    """
    failures = 0
    while True:
        size_before = _part_size(part)
        try:
            return _fetch_once(url, part, sha256, timeout_s, progress)
        except _Retryable as err:
            last_error = err
        if _part_size(part) > size_before:
            failures = 0
            log.warning("connection lost (%s) after progress: %d bytes so far; resuming, retry budget reset",
                        last_error, _part_size(part))
            time.sleep(backoff_s)
            continue
        failures += 1
        if failures >= max(retries, 1):
            raise PipelineError(
                f"download of {url} failed after {failures} attempts without progress; last error: {last_error}"
            )
        delay_s = backoff_s * 2 ** (failures - 1)
        log.warning("attempt %d/%d failed (%s); retrying in %.2f s", failures, retries, last_error, delay_s)
        time.sleep(delay_s)


def _part_size(part: Path) -> int:
    return part.stat().st_size if part.exists() else 0


def _fetch_once(url: str, part: Path, sha256: str, timeout_s: float, progress: bool) -> int | None:
    offset_bytes = part.stat().st_size if part.exists() else 0
    headers = {"Range": f"bytes={offset_bytes}-"} if offset_bytes else {}
    if offset_bytes:
        log.info("resuming from byte %d", offset_bytes)
    try:
        request = urllib.request.Request(url, headers=headers)
        response = urllib.request.urlopen(request, timeout=timeout_s)
    except urllib.error.HTTPError as err:
        if err.code == 416 and offset_bytes:
            return _accept_complete_part(part, sha256)
        _raise_for_status(url, err)
    except (OSError, http.client.HTTPException) as err:  # URLError, refused, reset, timeout
        raise _Retryable(f"{type(err).__name__}: {err}") from err
    with response:
        offset_bytes = _body_offset(response, part, offset_bytes)
        total_bytes = _announced_total(response, offset_bytes)
        _stream_to_part(response, part, offset_bytes, total_bytes, progress)
    size_bytes = part.stat().st_size
    if total_bytes is not None and size_bytes < total_bytes:
        raise _Retryable(f"connection closed early at {size_bytes} of {total_bytes} bytes")
    return total_bytes


def _raise_for_status(url: str, err: urllib.error.HTTPError) -> NoReturn:
    reason = f"HTTP {err.code} {err.reason}"
    if err.code == 429 or err.code >= 500:
        raise _Retryable(reason) from err
    # Other 4xx (404, 403, ...) will not get better by asking again.
    raise PipelineError(f"download of {url} failed: {reason}") from err


def _accept_complete_part(part: Path, sha256: str) -> int:
    """HTTP 416 to `Range: bytes=N-`: the part file is already whole (a run killed while hashing)
    or longer than the file."""
    size_bytes = part.stat().st_size
    if sha256_of(part) == sha256:
        log.info("HTTP 416: the part file is already complete (%d bytes, sha256 matches)", size_bytes)
        return size_bytes
    part.unlink()
    raise _Retryable("HTTP 416 and the part file does not match the sha256; restarting from zero")


def _body_offset(response: http.client.HTTPResponse, part: Path, offset_bytes: int) -> int:
    """Where in the file the body starts: `offset_bytes` if the server honoured Range, else 0."""
    if not offset_bytes:
        return 0
    if response.status != 206:
        log.warning("server ignored the Range header (HTTP %d); restarting from zero", response.status)
        return 0
    content_range = response.headers.get("Content-Range", "")
    start = content_range.removeprefix("bytes ").partition("-")[0].strip()
    if start != str(offset_bytes):
        # Appending a body that starts elsewhere would corrupt the file.
        part.unlink()
        raise _Retryable(f"asked for bytes {offset_bytes}- but got Content-Range {content_range!r}")
    return offset_bytes


def _announced_total(response: http.client.HTTPResponse, offset_bytes: int) -> int | None:
    """Size of the whole file from Content-Range (206) or Content-Length; None if not given."""
    content_range = response.headers.get("Content-Range", "")
    total = content_range.rpartition("/")[2].strip()
    if total.isdigit():
        return int(total)
    length = response.headers.get("Content-Length", "").strip()
    return offset_bytes + int(length) if length.isdigit() else None


def _stream_to_part(
    response: http.client.HTTPResponse,
    part: Path,
    offset_bytes: int,
    total_bytes: int | None,
    progress: bool,
) -> None:
    # Without a terminal (a Snakemake log file) a bar every 30 s keeps the log readable.
    interval_s = 0.1 if sys.stderr.isatty() else 30.0
    bar = tqdm(
        total=total_bytes, initial=offset_bytes, unit="B", unit_scale=True, unit_divisor=1024,
        desc=part.name, file=sys.stderr, disable=not progress, mininterval=interval_s,
    )
    with open(part, "ab" if offset_bytes else "wb") as sink, bar:
        while chunk := _read_chunk(response):
            sink.write(chunk)
            bar.update(len(chunk))


def _read_chunk(response: http.client.HTTPResponse) -> bytes:
    # Only errors from the network are retried; a full disk while writing must fail at once.
    try:
        return response.read(CHUNK_BYTES)
    except (OSError, http.client.HTTPException) as err:  # reset, timeout, IncompleteRead
        raise _Retryable(f"{type(err).__name__}: {err}") from err


def _check_size(url: str, part: Path, total_bytes: int | None) -> None:
    size_bytes = part.stat().st_size
    if total_bytes is not None and size_bytes != total_bytes:
        # Too long to resume from; the next run should start afresh.
        part.unlink()
        raise PipelineError(f"size mismatch for {url}: expected {total_bytes} bytes, got {size_bytes}")


def _check_sha256(url: str, part: Path, sha256: str) -> None:
    got = sha256_of(part)
    if got != sha256:
        # A wrong file must not be resumed from next time.
        part.unlink()
        raise PipelineError(f"sha256 mismatch for {url}: expected {sha256}, got {got}")


def sha256_of(path: str | Path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks so a 5 GB archive needs no memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("output")
    parser.add_argument("--sha256", required=True, help="expected sha256 of the whole file (hex)")
    parser.add_argument("--retries", type=int, default=5,
                        help="failed attempts in a row without progress before giving up")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds without data, then retry")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    args = parser.parse_args()
    try:
        main(args.url, args.output, args.sha256, retries=args.retries, timeout_s=args.timeout,
             progress=not args.no_progress)
    except PipelineError as err:
        raise SystemExit(f"error: {err}") from None


if __name__ == "__main__":
    if "snakemake" in globals():
        with snakemake_log(snakemake):  # noqa: F821
            main(snakemake.params.url, snakemake.output[0], snakemake.params.sha256)  # noqa: F821
    else:
        setup_cli_logging()
        _cli()
