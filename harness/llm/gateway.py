"""The LLM layer served as an OpenAI-compatible HTTP endpoint, for methods in other processes
or containers: they use a stock OpenAI client with ``OPENAI_BASE_URL`` pointing here and
``OPENAI_API_KEY`` set to a per-run token that is NOT the upstream key.

    POST /v1/chat/completions   (Authorization: Bearer <run token>)
    GET  /v1/models

The gateway holds the upstream client (and so the key), records calls through the wrapped
model, and charges the budget: once spent it answers 429 with a JSON error of type
``budget_exhausted`` (and ``x-should-retry: false`` so SDK clients stop at once). Optional
request headers ``X-Harness-Op``, ``X-Harness-Trial``, ``X-Harness-Purpose`` fill the
``CallContext`` recorded with the call. Listens on 127.0.0.1:PORT or on a unix socket (0600).
"""

from __future__ import annotations

import dataclasses
import hmac
import json
import os
import re
import secrets
import socketserver
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from harness.endpoints.uds_http import ServedInThread, bind_unix
from harness.llm.base import BudgetExhausted, CallContext, ChatModel, LLMError
from harness.llm.budget import MeteredModel, UsageMeter

_SECRET_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.I)


class Gateway(ServedInThread):
    def __init__(
        self,
        model: ChatModel,
        *,
        meter: UsageMeter | None = None,
        context: CallContext | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        unix_socket: str | Path | None = None,
        token: str | None = None,
    ):
        self.model: ChatModel = MeteredModel(model, meter) if meter is not None else model
        self.meter = meter
        self.context = context or CallContext()
        self.token = token or "hk-run-" + secrets.token_urlsafe(32)
        members = getattr(model, "members", None)
        self.models: list[str] = (
            list(members) if members else [getattr(model, "model", None) or model.name]
        )
        handler = _make_handler(self)
        srv: socketserver.BaseServer
        socket_path: str | None = None
        if unix_socket is not None:
            socket_path = str(Path(unix_socket))
            srv = bind_unix(socket_path, handler, 0o600)
            self.url = f"unix:{socket_path}"
            self.http_url = None
        else:
            tcp = ThreadingHTTPServer((host, port), handler)
            tcp.daemon_threads = True
            srv = tcp
            self.http_url = f"http://{host}:{tcp.server_address[1]}/v1"
            self.url = self.http_url
        self._serve(srv, "llm-gateway", 0.1, socket_path)

    def child_env(
        self, base: dict[str, str] | None = None, secrets_to_hide: tuple[str, ...] = ()
    ) -> dict[str, str]:
        """An environment for a method process: the caller's, minus anything that looks like a
        secret (and any variable whose value is one of ``secrets_to_hide``), plus
        ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` pointing at this gateway."""
        env = dict(os.environ if base is None else base)
        hidden = {s for s in secrets_to_hide if s}
        env = {k: v for k, v in env.items() if not _SECRET_NAME.search(k) and v not in hidden}
        env["OPENAI_API_KEY"] = self.token
        env["HARNESS_LLM_GATEWAY"] = self.url
        if self.http_url:
            env["OPENAI_BASE_URL"] = self.http_url
        else:
            env.pop("OPENAI_BASE_URL", None)
        return env

    # -- the call ------------------------------------------------------------------------
    def authorized(self, header: str | None) -> bool:
        want = f"Bearer {self.token}".encode()
        return bool(header) and hmac.compare_digest(header.encode(), want)

    def complete(self, body: dict[str, Any], headers: Any) -> tuple[int, dict[str, Any]]:
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(
            isinstance(m, dict) and "content" in m for m in messages
        ):
            return 400, _error(
                "messages must be a list of {role, content} objects", "invalid_request_error"
            )
        asked = body.get("model")
        pick: str | None = None
        if asked and asked not in ("default", self.models[0], self.model.name):
            if asked not in self.models:
                return 404, _error(
                    f"model {asked!r} is not served by this gateway; use one of {self.models}",
                    "model_not_found",
                )
            pick = asked
        ctx = self.context
        trial = headers.get("X-Harness-Trial")
        ctx = dataclasses.replace(
            ctx,
            op=headers.get("X-Harness-Op") or ctx.op,
            purpose=headers.get("X-Harness-Purpose") or ctx.purpose,
            trial=int(trial) if trial and trial.lstrip("-").isdigit() else ctx.trial,
        )
        msgs = [
            {"role": str(m.get("role", "user")), "content": _text(m.get("content"))}
            for m in messages
        ]
        try:
            r = self.model.chat(
                msgs,
                context=ctx,
                temperature=body.get("temperature"),
                max_tokens=body.get("max_tokens") or body.get("max_completion_tokens"),
                model=pick,
            )
        except BudgetExhausted as e:
            return 429, _error(str(e), "budget_exhausted")
        except LLMError as e:
            return 502, _error(f"upstream: {e}", "upstream_error")
        return 200, {
            "id": f"chatcmpl-harness-{r.call_id if r.call_id is not None else secrets.token_hex(6)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": r.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": r.text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": r.prompt_tokens,
                "completion_tokens": r.completion_tokens,
                "total_tokens": r.prompt_tokens + r.completion_tokens,
            },
            "harness": {
                "call_id": r.call_id,
                "offline": r.offline,
                "token_estimate": bool(r.offline or r.raw.get("token_estimate")),
            },
        }


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts: keep the text ones
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": kind}}


def _make_handler(gw: Gateway) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "harness-llm-gateway"

        def log_message(self, *a: Any) -> None:
            pass

        def address_string(self) -> str:
            return "gateway-client"

        def do_GET(self) -> None:
            if not gw.authorized(self.headers.get("Authorization")):
                return self._send(
                    401,
                    _error(
                        "missing or wrong run token (Authorization: Bearer ...)", "invalid_api_key"
                    ),
                )
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                return self._send(
                    200,
                    {
                        "object": "list",
                        "data": [
                            {"id": m, "object": "model", "owned_by": "harness"} for m in gw.models
                        ],
                    },
                )
            return self._send(404, _error(f"no route {self.path}", "not_found"))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not gw.authorized(self.headers.get("Authorization")):
                return self._send(
                    401,
                    _error(
                        "missing or wrong run token (Authorization: Bearer ...)", "invalid_api_key"
                    ),
                )
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                return self._send(404, _error(f"no route {self.path}", "not_found"))
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                return self._send(400, _error("request body is not JSON", "invalid_request_error"))
            if body.get("stream"):
                return self._send(
                    400,
                    _error("stream=true is not supported by the gateway", "invalid_request_error"),
                )
            status, obj = gw.complete(body, self.headers)
            return self._send(status, obj)

        def _send(self, status: int, obj: dict[str, Any]) -> None:
            data = json.dumps(obj).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status >= 400:
                    self.send_header("x-should-retry", "false")
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


def openai_client(url: str | None = None, token: str | None = None, **kwargs: Any) -> Any:
    """A stock ``openai.OpenAI`` for a method program: talks to the gateway at ``url`` (default
    ``$HARNESS_LLM_GATEWAY`` or ``$OPENAI_BASE_URL``), over TCP or a ``unix:PATH`` socket."""
    import openai

    from harness.llm.client import _httpx

    url = url or os.environ.get("HARNESS_LLM_GATEWAY") or os.environ.get("OPENAI_BASE_URL")
    token = token or os.environ.get("OPENAI_API_KEY")
    if not url or not token:
        raise LLMError("no gateway: set HARNESS_LLM_GATEWAY (or OPENAI_BASE_URL) and OPENAI_API_KEY")
    if url.startswith("unix:"):
        http_client = _httpx.Client(transport=_httpx.HTTPTransport(uds=url[len("unix:"):]))
        return openai.OpenAI(base_url="http://gateway/v1", api_key=token, http_client=http_client, **kwargs)
    return openai.OpenAI(base_url=url, api_key=token, **kwargs)
