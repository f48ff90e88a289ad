"""The worker's end of its channel to the parent, captured before any candidate code runs
(sandbox/worker/main.py): a candidate that patches ``json``, ``struct``, ``socket`` or
``sandbox.worker.channel`` afterwards does not change what the parent receives."""

from __future__ import annotations

import os
from typing import Any


def private_channel(sock: Any) -> tuple[Any, Any, Any, Any]:
    """send/recv/take_fds/give_fds closures over primitives captured before any candidate code runs.

    Replies are encoded by a small local JSON encoder that only uses C functions captured
    here (so patching ``json``, ``struct``, ``socket`` or ``sandbox.worker.channel`` later does not
    change what the parent receives). One layer: native code can still patch anything.
    """
    import json
    import json.encoder
    import socket
    import struct

    esc = json.encoder.encode_basestring_ascii
    frepr, irepr = float.__repr__, int.__repr__
    pack, unpack = struct.Struct(">I").pack, struct.Struct(">I").unpack
    sendall, recv_into = sock.sendall, sock.recv_into
    decode = json.JSONDecoder().decode
    recv_fds, send_fds, cloexec = socket.recv_fds, socket.send_fds, socket.MSG_CMSG_CLOEXEC
    isinst, b_str, b_bool, b_int, b_float = isinstance, str, bool, int, float
    b_dict, b_list, b_tuple, b_len = dict, list, tuple, len

    def enc(o: Any) -> str:
        if o is None:
            return "null"
        if o is True:
            return "true"
        if o is False:
            return "false"
        if isinst(o, b_str):
            return esc(o)
        if isinst(o, b_bool):
            return "true" if o else "false"
        if isinst(o, b_int):
            return irepr(o)
        if isinst(o, b_float):
            if o != o or o in (float("inf"), float("-inf")):
                return "null"
            return frepr(o)
        if isinst(o, b_dict):
            return "{" + ",".join([esc(b_str(k)) + ":" + enc(v) for k, v in o.items()]) + "}"
        if isinst(o, (b_list, b_tuple)):
            return "[" + ",".join([enc(v) for v in o]) + "]"
        return esc(b_str(o))

    def send(msg: dict[str, Any]) -> None:
        data = enc(msg).encode()
        sendall(pack(b_len(data)) + data)

    def read(n: int) -> bytes:
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            k = recv_into(view[got:], n - got)
            if k == 0:
                exit_now = os._exit
                exit_now(0)  # the parent went away: nothing left to answer
            got += k
        return bytes(buf)

    def recv() -> dict[str, Any]:
        (n,) = unpack(read(4))
        return decode(read(n).decode())

    def take_fds(n: int) -> list[int]:
        """The fds the parent sent right after a request (one byte carries them)."""
        _, fds, _, _ = recv_fds(sock, 1, n, cloexec)
        if b_len(fds) != n:
            raise RuntimeError(f"expected {n} fds from the parent, got {b_len(fds)}")
        return fds

    def give_fds(fds: list[int]) -> None:
        """Send ``fds`` to the parent right after a reply (one byte carries them). The parent
        takes fds from the reference worker only (its device arena, sandbox/worker/devarena.py)."""
        send_fds(sock, [b"F"], fds)

    return send, recv, take_fds, give_fds
