"""The parent <-> worker channel: one unix-socket connection, length-prefixed JSON messages.

The parent (trusted) creates the socket in a private 0700 directory, the worker connects
once at startup (before any candidate code runs), the parent accepts exactly one
connection and unlinks the path so nobody else can connect. Messages are 4-byte big-endian
length + UTF-8 JSON object. Tensors never travel on the socket: they move through the
shared-memory regions the parent makes (sandbox/worker/arena.py: raw bytes, no pickle), whose fds
the channel carries (SCM_RIGHTS); the reference worker reads and compares (sandbox/check/refcheck.py).

This module only frames bytes; what a message may contain is checked by its caller.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import tempfile
import time
from typing import Any

MAX_MESSAGE = 8 * 1024 * 1024  # a reply larger than this is malformed


class ChannelError(RuntimeError):
    """The peer closed the connection, sent garbage, or did not answer in time."""


class ChannelTimeout(ChannelError):
    pass


def send(sock: socket.socket, msg: dict[str, Any]) -> None:
    data = json.dumps(msg, separators=(",", ":")).encode()
    sock.sendall(struct.pack(">I", len(data)) + data)


def _until(sock: socket.socket, deadline: float | None) -> None:
    """The socket's timeout set to what is left before ``deadline`` (ChannelTimeout when none is)."""
    if deadline is not None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ChannelTimeout("no answer before the deadline")
        sock.settimeout(left)


def _recv_exact(sock: socket.socket, n: int, deadline: float | None) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        _until(sock, deadline)
        try:
            chunk = sock.recv(n - len(buf))
        except TimeoutError as e:
            raise ChannelTimeout("no answer before the deadline") from e
        except OSError as e:
            raise ChannelError(f"connection error: {e}") from e
        if not chunk:
            raise ChannelError("the worker closed the connection")
        buf += chunk
    return bytes(buf)


def recv(sock: socket.socket, deadline: float | None = None) -> dict[str, Any]:
    (n,) = struct.unpack(">I", _recv_exact(sock, 4, deadline))
    if n > MAX_MESSAGE:
        raise ChannelError(f"message of {n} bytes exceeds the {MAX_MESSAGE}-byte limit")
    raw = _recv_exact(sock, n, deadline)
    try:
        msg = json.loads(raw.decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ChannelError(f"malformed message: {e}") from e
    if not isinstance(msg, dict):
        raise ChannelError("malformed message: not a JSON object")
    return msg


def recv_fds(sock: socket.socket, n: int, deadline: float | None = None) -> list[int]:
    """The ``n`` fds a worker sent right after its reply (one byte carries them; the reference
    worker's device arena, sandbox/worker/devarena.py)."""
    _until(sock, deadline)
    try:
        data, fds, _, _ = socket.recv_fds(sock, 1, n, socket.MSG_CMSG_CLOEXEC)
    except TimeoutError as e:
        raise ChannelTimeout("no fds before the deadline") from e
    except OSError as e:
        raise ChannelError(f"connection error: {e}") from e
    if data != b"F" or len(fds) != n:
        for fd in fds:
            os.close(fd)
        raise ChannelError(f"malformed message: expected {n} fds, got {len(fds)}")
    return fds


def pending(sock: socket.socket) -> bool:
    """True when unread bytes wait on the socket (an unsolicited message)."""
    sock.setblocking(False)
    try:
        return bool(sock.recv(1, socket.MSG_PEEK))
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return False
    finally:
        sock.setblocking(True)


class Listener:
    """Parent side: a one-shot unix socket in a fresh private directory."""

    def __init__(self, parent_dir: str | None = None) -> None:
        self.dir = tempfile.mkdtemp(prefix="kh-chan-", dir=parent_dir)
        os.chmod(self.dir, 0o700)
        self.path = os.path.join(self.dir, "s")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        os.chmod(self.path, 0o600)
        self.sock.listen(1)

    def accept(self, deadline: float, alive: Any = None) -> socket.socket:
        """Accept exactly one connection, then unlink the path and stop listening."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChannelTimeout("the worker did not connect before the deadline")
            self.sock.settimeout(min(left, 0.2))
            try:
                conn, _ = self.sock.accept()
                break
            except TimeoutError:
                if alive is not None and not alive():
                    raise ChannelError("the worker exited before connecting") from None
        self.close()
        conn.settimeout(None)
        return conn

    def close(self) -> None:
        try:
            self.sock.close()
        finally:
            for p in (self.path,):
                try:
                    os.unlink(p)
                except FileNotFoundError:
                    pass
            try:
                os.rmdir(self.dir)
            except OSError:
                pass


def connect(path: str) -> socket.socket:
    """Worker side: connect once to the parent's socket."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s
