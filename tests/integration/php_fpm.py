"""PHP-FPM for the PHP tests: a pool started from a config in the test's directory, with Xdebug's settings in it,
and a small FastCGI client (BEGIN_REQUEST, PARAMS, STDIN records; the STDOUT records back until END_REQUEST) —
what nginx or Apache would be in front of it, without one (the FastCGI 1.0 record layout).

The test starts FPM and stops it: polydbg only listens (``debug_attach(language="php", port=N)``), and an attach
must leave a server it did not start running.
"""

from __future__ import annotations

import asyncio
import glob
import os
import shutil
import socket
import struct
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import unavailable

BEGIN_REQUEST, END_REQUEST, PARAMS, STDIN, STDOUT, STDERR = 1, 3, 4, 5, 6, 7
RESPONDER = 1
_HEADER = struct.Struct(">BBHHBx")  # version, type, request id, content length, padding length, reserved
READY_S = 30.0  # FPM's master up, under load


def php_fpm() -> str:
    """Debian's php-fpm (``php-fpm8.2`` in /usr/sbin, versioned by the PHP it runs)."""
    found = shutil.which("php-fpm") or next(iter(sorted(glob.glob("/usr/sbin/php-fpm*"), reverse=True)), None)
    if found is None:
        unavailable("php-fpm is not installed (.ci/run installs php-fpm)")
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Pool:
    port: int  # where FPM takes FastCGI
    process: subprocess.Popen[str]

    def workers(self) -> list[int]:
        """The pids of the pool's worker processes (the master's children)."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split()
        return [int(pid) for pid in children]


@contextmanager
def fpm_pool(directory: Path, flags: list[str], workers: int = 2) -> Iterator[Pool]:
    """A PHP-FPM master in the foreground (``-F``) with ``workers`` static workers on a loopback port, Xdebug
    loaded and ``flags`` (``-dxdebug.mode=debug``, … as polydbg's attach prints them) on its command line; stopped
    (SIGTERM, then killed) at the end, whatever polydbg did."""
    port = free_port()
    config = directory / "fpm.conf"
    config.write_text(f"""[global]
error_log = /proc/self/fd/2
daemonize = no
[app]
listen = 127.0.0.1:{port}
pm = static
pm.max_children = {workers}
""")
    root = ["-R"] if os.geteuid() == 0 else []  # FPM refuses to run a pool as root without it
    process = subprocess.Popen([php_fpm(), "-n", "-dzend_extension=xdebug", *flags, *root, "-F", "-y", str(config)],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        said = []
        for line in process.stderr:  # ends with FPM's exit if it never gets ready
            said.append(line)
            if "ready to handle connections" in line:
                break
        else:
            raise AssertionError(f"php-fpm exited with {process.wait(READY_S)}: {''.join(said)}")
        yield Pool(port, process)
    finally:
        process.terminate()
        try:
            process.wait(READY_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: str
    errors: str  # the FCGI_STDERR records (PHP's warnings when display goes there)


def _record(kind: int, content: bytes, request_id: int = 1) -> bytes:
    padding = -len(content) % 8
    return _HEADER.pack(1, kind, request_id, len(content), padding) + content + b"\0" * padding


def _length(size: int) -> bytes:
    return bytes([size]) if size < 128 else struct.pack(">I", size | 0x80000000)


def _params(params: dict[str, str]) -> bytes:
    out = b""
    for name, value in params.items():
        key, val = name.encode(), value.encode()
        out += _length(len(key)) + _length(len(val)) + key + val
    return out


async def fastcgi(port: int, script: str, uri: str, body: bytes = b"", method: str | None = None) -> Response:
    """One request to FPM at ``port``: ``script`` runs for ``uri`` (``/path?query``), with ``body`` on its stdin
    (a form POST when given). Answers once PHP has finished (a request stopped in the debugger waits)."""
    path, _, query = uri.partition("?")
    method = method or ("POST" if body else "GET")
    params = {"GATEWAY_INTERFACE": "CGI/1.1", "SERVER_PROTOCOL": "HTTP/1.1", "SERVER_SOFTWARE": "polydbg-test",
              "SERVER_NAME": "localhost", "SERVER_PORT": "80", "REMOTE_ADDR": "127.0.0.1",
              "REQUEST_METHOD": method, "REQUEST_URI": uri, "QUERY_STRING": query, "SCRIPT_NAME": path,
              "SCRIPT_FILENAME": script, "DOCUMENT_ROOT": os.path.dirname(script),
              "CONTENT_LENGTH": str(len(body))}
    if body:
        params["CONTENT_TYPE"] = "application/x-www-form-urlencoded"
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        encoded = _params(params)
        writer.write(_record(BEGIN_REQUEST, struct.pack(">HB5x", RESPONDER, 0)) + _record(PARAMS, encoded)
                     + _record(PARAMS, b"") + (_record(STDIN, body) if body else b"") + _record(STDIN, b""))
        await writer.drain()
        out, err = bytearray(), bytearray()
        while True:
            _, kind, _, size, padding = _HEADER.unpack(await reader.readexactly(_HEADER.size))
            content = await reader.readexactly(size + padding)
            if kind == STDOUT:
                out += content[:size]
            elif kind == STDERR:
                err += content[:size]
            elif kind == END_REQUEST:
                break
    finally:
        writer.close()
    head, _, text = bytes(out).partition(b"\r\n\r\n")
    headers = {}
    for line in head.decode().split("\r\n"):
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    status = int(headers.get("status", "200").split()[0])
    return Response(status, headers, text.decode(), err.decode())
