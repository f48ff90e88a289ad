"""Small HTTP/1.1 JSON plumbing over unix sockets (server and client), standard library only.

Why unix sockets: a method program in a container with ``network_mode="none"`` can reach a
socket file bind-mounted into it, and nothing else. The same sockets serve a method that
runs as a plain process. Any language with an HTTP client that can dial a unix socket
(curl ``--unix-socket``, Go, Rust hyperlocal, Python httpx ``uds=``) speaks this.

Server: ``JSONServer(path, routes, token)`` answers ``{"error": {...}}`` for every failure,
checks ``Authorization: Bearer <token>`` in constant time, and caps request bodies.
Client: ``request(socket_path, method, path, body=None, token=None) -> (status, json)``.
"""

from __future__ import annotations

import hmac
import http.client
import json
import os
import socket
import socketserver
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any, Self

MAX_BODY = 4 * 1024 * 1024

# handler(method, path, body_or_None) -> (status, json-able)
Route = Callable[[str, str, Any], tuple[int, Any]]


class HTTPError(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message

    def body(self) -> dict[str, Any]:
        return {"error": {"type": self.kind, "message": self.message}}


class UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """The one threaded HTTP server on a unix socket (the method endpoints' ``JSONServer`` and
    the LLM gateway's unix mode). The two keep their own request handlers deliberately: the
    gateway speaks OpenAI's wire format (its error shape, ``x-should-retry``), the endpoints
    the method protocol's (docs/method-protocol.md)."""

    daemon_threads = True
    allow_reuse_address = True


def bind_unix(path: str, handler: type[BaseHTTPRequestHandler], mode: int) -> UnixHTTPServer:
    """Bind ``handler`` on the socket file ``path`` (a stale one is replaced), chmod ``mode``."""
    if os.path.exists(path):
        os.unlink(path)
    srv = UnixHTTPServer(path, handler)
    os.chmod(path, mode)
    return srv


class ServedInThread:
    """A server answering on a daemon thread, the lifecycle the method endpoints'
    ``JSONServer`` and the LLM gateway share: ``start``, ``stop`` (shut down, close, remove the
    socket file when there is one) and a ``with`` block."""

    def _serve(self, server: socketserver.BaseServer, name: str, poll_interval: float,
               socket_path: str | None) -> None:
        self._server = server
        self._socket_path = socket_path
        self._thread = threading.Thread(target=server.serve_forever,
                                        kwargs={"poll_interval": poll_interval}, daemon=True,
                                        name=name)

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._socket_path is not None:
            try:
                os.unlink(self._socket_path)
            except FileNotFoundError:
                pass

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    server_version = "kernel-harness"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet by default
        pass

    def address_string(self) -> str:
        return "unix"

    def _reply(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self, method: str) -> None:
        srv: JSONServer = self.server.owner  # type: ignore[attr-defined]
        try:
            try:
                n = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                n = -1
            if n < 0 or n > MAX_BODY:
                self.close_connection = True  # the unread body must not be parsed as a request
                raise HTTPError(413 if n > 0 else 400, "too_large" if n > 0 else "bad_request",
                                f"Content-Length {self.headers.get('Content-Length')!r}: "
                                f"send a JSON body of at most {MAX_BODY} bytes")
            raw = self.rfile.read(n) if n else b""  # read before any answer (keep-alive)
            if not srv.authorized(self.headers.get("Authorization", "")):
                raise HTTPError(
                    401,
                    "unauthorized",
                    "missing or wrong bearer token "
                    "(send 'Authorization: Bearer $HARNESS_EVAL_TOKEN')",
                )
            body = None
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError as e:
                    raise HTTPError(400, "bad_json", f"request body is not JSON: {e}") from e
            status, payload = srv.dispatch(method, self.path, body)
        except HTTPError as e:
            status, payload = e.status, e.body()
        except Exception as e:  # noqa: BLE001 - the server must answer, never die
            status, payload = (
                500,
                {"error": {"type": "internal", "message": f"{type(e).__name__}: {e}"}},
            )
        self._reply(status, payload)

    def do_GET(self) -> None:  # noqa: N802
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")


class JSONServer(ServedInThread):
    """A threaded JSON-over-HTTP server on a unix socket; ``routes`` map a path prefix to a handler."""

    def __init__(
        self, path: str, routes: dict[str, Route], token: str | None, socket_mode: int = 0o660
    ) -> None:
        self.path = path
        self.routes = routes
        self.token = token
        srv = bind_unix(path, _Handler, socket_mode)
        srv.owner = self  # type: ignore[attr-defined]
        self._serve(srv, f"kh-endpoint-{os.path.basename(path)}", 0.05, path)

    def authorized(self, header: str) -> bool:
        if self.token is None:
            return True
        given = header[7:] if header.startswith("Bearer ") else ""
        return hmac.compare_digest(given.encode(), self.token.encode())

    def dispatch(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        route = path.split("?", 1)[0]
        for prefix in sorted(self.routes, key=len, reverse=True):
            if route == prefix or route.startswith(prefix.rstrip("/") + "/"):
                return self.routes[prefix](method, route, body)
        raise HTTPError(404, "not_found", f"no endpoint {route} (see docs/method-protocol.md)")


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, socket_path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = socket_path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.socket_path)
        self.sock = s


def request(
    socket_path: str,
    method: str,
    path: str,
    body: Any = None,
    token: str | None = None,
    timeout: float = 3600.0,
) -> tuple[int, Any]:
    """One JSON request over a unix socket; returns (HTTP status, decoded JSON body)."""
    conn = _UnixConnection(socket_path, timeout)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    try:
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
    finally:
        conn.close()
    try:
        return resp.status, json.loads(raw) if raw else None
    except ValueError:
        return resp.status, {
            "error": {"type": "bad_json", "message": raw[:200].decode(errors="replace")}
        }
