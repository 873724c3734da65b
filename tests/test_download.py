"""download.py against a real HTTP server on 127.0.0.1 that can drop, stall, reset, refuse Range
and fail on purpose."""

from __future__ import annotations

import hashlib
import random
import socket
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "workflow" / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

import download  # noqa: E402
from common import PipelineError  # noqa: E402

MIB = 1 << 20
PAYLOAD = random.Random(0).randbytes(3 * MIB + 12345)  # not a multiple of the read size
PAYLOAD_SHA256 = hashlib.sha256(PAYLOAD).hexdigest()
FAST = {"backoff_s": 0.01, "timeout_s": 5.0, "progress": False}


@dataclass
class Behaviour:
    """What the server does; tests change it before downloading."""

    body: bytes = PAYLOAD
    honour_range: bool = True
    status: int | None = None  # answer every request with this error
    errors: int = 0  # answer the first `errors` requests with `error_status`, then succeed
    error_status: int = 503
    cuts: int = 0  # cut the first `cuts` bodies after `cut_after_bytes`, in the manner `cut`
    cut_after_bytes: int = MIB + MIB // 2
    cut: str = "eof"  # eof: close cleanly; reset: TCP RST; stall: send nothing more for 1 s
    claimed_total: int | None = None  # a lie in Content-Range's total
    ranges: list[str | None] = field(default_factory=list)  # Range header of each request


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        b: Behaviour = self.server.behaviour
        range_header = self.headers.get("Range")
        b.ranges.append(range_header)
        if b.status:
            self.send_error(b.status)
            return
        if b.errors > 0:
            b.errors -= 1
            self.send_error(b.error_status)
            return
        start = int(range_header[len("bytes="):].rstrip("-")) if range_header and b.honour_range else 0
        total = len(b.body)
        if start >= total:
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{total}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{total - 1}/{b.claimed_total or total}")
        self.send_header("Content-Length", str(total - start))
        self.end_headers()
        if b.cuts > 0:
            b.cuts -= 1
            self.wfile.write(b.body[start : start + b.cut_after_bytes])
            self._cut(b.cut)
        else:
            self.wfile.write(b.body[start:])

    def _cut(self, how: str) -> None:
        # Give the client time to take in what was sent, so what it keeps is predictable.
        time.sleep(1.0 if how == "stall" else 0.2)
        if how == "reset":
            # Linger 0: close() sends RST, the client's read fails with ConnectionResetError.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()


@dataclass
class Server:
    url: str
    behaviour: Behaviour


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.behaviour = Behaviour()
    # A short poll keeps shutdown() quick.
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield Server(f"http://127.0.0.1:{httpd.server_port}/food-101.tar.gz", httpd.behaviour)
    httpd.shutdown()
    httpd.server_close()


def part_of(output: Path) -> Path:
    return output.with_name(output.name + ".part")


def test_plain_download(server, tmp_path):
    out = tmp_path / "sub" / "food-101.tar.gz"
    download.main(server.url, out, PAYLOAD_SHA256, **FAST)
    assert out.read_bytes() == PAYLOAD
    assert not part_of(out).exists()
    assert server.behaviour.ranges == [None]


@pytest.mark.parametrize("cut", ["eof", "reset", "stall"])
def test_resumes_after_dropped_connection(server, tmp_path, cut):
    server.behaviour.cuts, server.behaviour.cut = 1, cut
    out = tmp_path / "food-101.tar.gz"
    download.main(server.url, out, PAYLOAD_SHA256, **{**FAST, "timeout_s": 0.3})
    assert out.read_bytes() == PAYLOAD
    first, second = server.behaviour.ranges
    assert first is None
    assert second is not None and second.startswith("bytes=")
    assert int(second[len("bytes="):].rstrip("-")) >= MIB  # at least one whole chunk was kept


def test_server_without_range_support_restarts_from_zero(server, tmp_path):
    server.behaviour.honour_range, server.behaviour.cuts = False, 2
    out = tmp_path / "food-101.tar.gz"
    download.main(server.url, out, PAYLOAD_SHA256, **FAST)
    assert out.read_bytes() == PAYLOAD
    assert server.behaviour.ranges[0] is None
    assert all(r and r.startswith("bytes=") for r in server.behaviour.ranges[1:])
    assert len(server.behaviour.ranges) == 3


def test_existing_part_file_is_resumed(server, tmp_path):
    out = tmp_path / "food-101.tar.gz"
    part_of(out).write_bytes(PAYLOAD[:1000])
    download.main(server.url, out, PAYLOAD_SHA256, **FAST)
    assert out.read_bytes() == PAYLOAD
    assert server.behaviour.ranges == ["bytes=1000-"]


def test_complete_part_file_answered_416_is_verified_and_kept(server, tmp_path):
    out = tmp_path / "food-101.tar.gz"
    part_of(out).write_bytes(PAYLOAD)
    download.main(server.url, out, PAYLOAD_SHA256, **FAST)
    assert out.read_bytes() == PAYLOAD
    assert server.behaviour.ranges == [f"bytes={len(PAYLOAD)}-"]


def test_wrong_part_file_answered_416_restarts_from_zero(server, tmp_path):
    out = tmp_path / "food-101.tar.gz"
    part_of(out).write_bytes(bytes(len(PAYLOAD) + 10))
    download.main(server.url, out, PAYLOAD_SHA256, **FAST)
    assert out.read_bytes() == PAYLOAD
    assert server.behaviour.ranges == [f"bytes={len(PAYLOAD) + 10}-", None]


def test_404_fails_at_once(server, tmp_path):
    server.behaviour.status = 404
    out = tmp_path / "food-101.tar.gz"
    with pytest.raises(PipelineError, match="404") as err:
        download.main(server.url, out, PAYLOAD_SHA256, **FAST)
    assert server.url in str(err.value)
    assert len(server.behaviour.ranges) == 1
    assert not out.exists() and not part_of(out).exists()


@pytest.mark.parametrize("status", [503, 429])
def test_temporary_errors_are_retried(server, tmp_path, caplog, status):
    server.behaviour.errors, server.behaviour.error_status = 2, status
    out = tmp_path / "food-101.tar.gz"
    download.main(server.url, out, PAYLOAD_SHA256, **FAST)
    assert out.read_bytes() == PAYLOAD
    assert len(server.behaviour.ranges) == 3
    assert sum(f"HTTP {status}" in r.getMessage() for r in caplog.records) == 2


def test_persistent_503_fails_after_retries(server, tmp_path):
    server.behaviour.status = 503
    out = tmp_path / "food-101.tar.gz"
    with pytest.raises(PipelineError, match="after 3 attempts.*HTTP 503") as err:
        download.main(server.url, out, PAYLOAD_SHA256, retries=3, **FAST)
    assert server.url in str(err.value)
    assert len(server.behaviour.ranges) == 3
    assert not out.exists()


def test_connection_refused_fails_after_retries(tmp_path):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/food-101.tar.gz"
    with pytest.raises(PipelineError, match="after 2 attempts.*refused"):
        download.main(url, tmp_path / "x.tar.gz", PAYLOAD_SHA256, retries=2, **FAST)


def test_server_that_never_answers_times_out_after_retries(tmp_path):
    with socket.socket() as silent:  # accepts connections (the kernel does) but never replies
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/food-101.tar.gz"
        with pytest.raises(PipelineError, match="after 2 attempts without progress.*timed out") as err:
            download.main(url, tmp_path / "x.tar.gz", PAYLOAD_SHA256, retries=2,
                          **{**FAST, "timeout_s": 0.3})
    assert url in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_drops_that_make_progress_do_not_use_up_the_retries(server, tmp_path, caplog):
    """A long download over a flaky link: five drops, two retries allowed, each drop after progress."""
    server.behaviour.cuts, server.behaviour.cut_after_bytes = 5, MIB // 2
    out = tmp_path / "food-101.tar.gz"
    download.main(server.url, out, PAYLOAD_SHA256, retries=2, **FAST)
    assert out.read_bytes() == PAYLOAD
    offsets = [int(r[len("bytes="):].rstrip("-")) if r else 0 for r in server.behaviour.ranges]
    assert len(offsets) == 6 and offsets == sorted(set(offsets))  # each attempt resumed further on
    assert sum("retry budget reset" in r.getMessage() for r in caplog.records) == 5


def test_drops_without_progress_use_up_the_retries(server, tmp_path):
    """No Range support and a drop at the same byte every time: the part never grows past it."""
    server.behaviour.honour_range, server.behaviour.cuts = False, 100
    out = tmp_path / "food-101.tar.gz"
    with pytest.raises(PipelineError, match="after 3 attempts without progress.*closed early") as err:
        download.main(server.url, out, PAYLOAD_SHA256, retries=3, **FAST)
    assert server.url in str(err.value)
    assert len(server.behaviour.ranges) == 4  # the first attempt made progress (from nothing)
    assert not out.exists()


def test_wrong_sha256_deletes_everything(server, tmp_path):
    corrupt = bytearray(PAYLOAD)
    corrupt[-1] ^= 0xFF
    server.behaviour.body = bytes(corrupt)
    out = tmp_path / "food-101.tar.gz"
    with pytest.raises(PipelineError) as err:
        download.main(server.url, out, PAYLOAD_SHA256, **FAST)
    message = str(err.value)
    assert PAYLOAD_SHA256 in message
    assert hashlib.sha256(corrupt).hexdigest() in message
    assert server.url in message
    assert not out.exists() and not part_of(out).exists()


def test_size_mismatch(server, tmp_path):
    server.behaviour.claimed_total = len(PAYLOAD) - 1
    out = tmp_path / "food-101.tar.gz"
    part_of(out).write_bytes(PAYLOAD[:1000])
    expected = f"size mismatch for {server.url}: expected {len(PAYLOAD) - 1} bytes, got {len(PAYLOAD)}"
    with pytest.raises(PipelineError, match=expected):
        download.main(server.url, out, PAYLOAD_SHA256, **FAST)
    assert not out.exists() and not part_of(out).exists()


def test_existing_output_is_verified_without_downloading(server, tmp_path):
    server.behaviour.status = 404
    out = tmp_path / "food-101.tar.gz"
    out.write_bytes(PAYLOAD)
    download.main(server.url, out, PAYLOAD_SHA256.upper(), **FAST)
    assert server.behaviour.ranges == []
    out.write_bytes(b"something else")
    with pytest.raises(PipelineError, match="does not match"):
        download.main(server.url, out, PAYLOAD_SHA256, **FAST)
    assert out.read_bytes() == b"something else"  # not ours to delete


def test_cli(server, tmp_path):
    script = str(SCRIPTS / "download.py")
    out = tmp_path / "food-101.tar.gz"
    done = subprocess.run(
        [sys.executable, script, server.url, str(out), "--sha256", PAYLOAD_SHA256],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == PAYLOAD
    assert PAYLOAD_SHA256 in done.stderr  # the final log line

    server.behaviour.status = 404
    failed = subprocess.run(
        [sys.executable, script, server.url, str(tmp_path / "y"), "--sha256", "0" * 64],
        capture_output=True, text=True, timeout=60,
    )
    assert failed.returncode == 1
    assert "error: download of" in failed.stderr and "404" in failed.stderr
