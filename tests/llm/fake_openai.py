"""A real loopback HTTP server speaking the OpenAI chat-completions protocol, with scripted
behaviours, for testing the client and the gateway without a paid API.

    with FakeOpenAI(key="sk-test") as srv:
        srv.script = ["429:1", "ok"]       # first request: 429 with Retry-After 1, then success
        client = OpenAIClient("fake-model", LLMConfig(base_url=srv.url, ...))

Behaviours: ``ok``, ``429:SECONDS``, ``500``, ``timeout:SECONDS`` (answers late),
``malformed`` (200 with a body that is not JSON), ``nochoices`` (JSON without choices),
``401``, ``404``, ``400ctx`` (context_length_exceeded). Requests with another bearer key get
401 whatever the script says. Every request is kept in ``requests``.

An outage: ``stop_after(n)`` answers n more requests, then closes the listening socket (every later
connection is refused, as with an endpoint that went away); ``FakeOpenAI(port=...)`` binds a given
port (the same endpoint, back again).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAI:
    def __init__(self, key: str = "sk-test-upstream", models: tuple[str, ...] = ("fake-model",), port: int = 0):
        self.key = key
        self.models = models
        self.script: list[str] = []
        self.requests: list[dict[str, Any]] = []
        self.reply = lambda body: "echo: " + str(body["messages"][-1]["content"])[:200]
        self.prompt_tokens = lambda body: 10 + sum(len(m["content"]) for m in body["messages"])
        self.completion_tokens = 7
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in fake.models]})
                else:
                    self._json(404, {"error": {"message": "no such route"}})

            def do_POST(self) -> None:
                if fake._closed:  # a kept-alive connection after stop_after: dropped unanswered
                    self.close_connection = True
                    return
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.requests.append({"path": self.path, "body": body,
                                          "auth": self.headers.get("Authorization", "")})
                    step = fake.script.pop(0) if fake.script else "ok"
                    fake._answered += 1
                    last = fake._answered == fake._stop_after
                if self.headers.get("Authorization", "") != f"Bearer {fake.key}" or step == "401":
                    return self._json(401, {"error": {"message": "Incorrect API key provided",
                                                      "type": "invalid_request_error", "code": "invalid_api_key"}})
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self._json(404, {"error": {"message": "no such route"}})
                if step == "404" or body.get("model") not in fake.models:
                    return self._json(404, {"error": {"message": f"The model {body.get('model')} does not exist",
                                                      "code": "model_not_found"}})
                if step.startswith("429"):
                    wait = step.partition(":")[2] or "1"
                    return self._json(429, {"error": {"message": "Rate limit reached"}}, {"Retry-After": wait})
                if step == "500":
                    return self._json(500, {"error": {"message": "internal error"}})
                if step == "400ctx":
                    return self._json(400, {"error": {"message": "This model's maximum context length is 8192 tokens",
                                                      "code": "context_length_exceeded"}})
                if step.startswith("timeout"):
                    time.sleep(float(step.partition(":")[2] or "3"))
                if step == "malformed":
                    data = b'{"id": "x", "choices": [ this is not json'
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return None
                if step == "nochoices":
                    return self._json(200, {"id": "x", "object": "chat.completion", "model": body["model"]})
                pt = fake.prompt_tokens(body)
                ct = fake.completion_tokens
                if last:  # the socket closes once this answer is out (stop_after)
                    self.close_connection = True
                    threading.Thread(target=fake.close, daemon=True).start()
                return self._json(200, {
                    "id": f"chatcmpl-{len(fake.requests)}", "object": "chat.completion", "created": int(time.time()),
                    "model": body["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": fake.reply(body)},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
                }, {"Connection": "close"} if last else None)

            def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(obj).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._answered, self._stop_after, self._closed = 0, -1, False
        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def stop_after(self, n: int) -> None:
        """Answer ``n`` more requests, then stop answering (the listening socket is closed)."""
        with self._lock:
            self._stop_after = self._answered + n

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._thread.is_alive():
            self.server.shutdown()
        self.server.server_close()
