"""A scripted LLM for method tests: a real loopback HTTP server speaking the OpenAI chat API.

    with ScriptedServer(responder) as srv:
        llm = srv.model()            # a ChatModel talking HTTP to the server
        ...
        srv.requests                 # every request body the server received, in order

``responder(messages, index) -> str`` returns the assistant text of the index-th call.
The client is the LLM layer's OpenAI client when installed (``MODEL@BASE_URL`` spec),
otherwise a few lines over the ``openai`` SDK, so the wire protocol is real either way.

Also here: ``reply(name, thought, code)`` (a well-formed reply), ``kernel(tag, runtime)``
(a tiny ModelNew source whose fake runtime the ``fake_evaluate`` below reads), and
``fake_evaluate`` (a Verdict from markers in the source: the method's input boundary).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from harness.llm.base import CallContext, ChatResult
from harness.methods.base import Proposal
from harness.methods.reply import format_reply
from sandbox.verdict import Measurement, Mode, Speedup, Status, Verdict

Responder = Callable[[list[dict[str, str]], int], str]


class ScriptedServer:
    def __init__(self, responder: Responder, model_name: str = "scripted"):
        self.responder = responder
        self.model_name = model_name
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_GET(self) -> None:  # /v1/models
                self._send(200, {"object": "list", "data": [{"id": server.model_name, "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with server._lock:
                    index = len(server.requests)
                    server.requests.append(body)
                text = server.responder(body["messages"], index)
                prompt_tokens = sum(len(m["content"]) for m in body["messages"]) // 4
                self._send(200, {
                    "id": f"chatcmpl-{index}", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", server.model_name),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(text) // 4,
                              "total_tokens": prompt_tokens + len(text) // 4},
                })

            def _send(self, code: int, obj: dict[str, Any]) -> None:
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def prompts(self) -> list[str]:
        """The user message of every request, in order."""
        return [next(m["content"] for m in r["messages"] if m["role"] == "user") for r in self.requests]

    def model(self) -> Any:
        try:
            from harness.llm.client import OpenAIClient  # noqa: F401
            from harness.llm.config import LLMConfig
            from harness.llm.factory import make_model

            os.environ.setdefault("SCRIPTED_TEST_KEY", "test-key")  # a loopback server: any key
            return make_model(f"{self.model_name}@{self.base_url}",
                              config=LLMConfig(api_key_env="SCRIPTED_TEST_KEY", max_retries=0))
        except ImportError:
            return _SdkModel(self.model_name, self.base_url)


class _SdkModel:
    """Minimal ChatModel over the openai SDK (used only while harness.llm.client is absent)."""

    offline = False

    def __init__(self, model: str, base_url: str):
        import openai

        self.name = f"{model}@{base_url}"
        self.model = model
        self.client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)

    def chat(self, messages: list[dict[str, str]], *, context: CallContext,
             temperature: float | None = None, max_tokens: int | None = None,
             model: str | None = None) -> ChatResult:
        kw: dict[str, Any] = {}
        if temperature is not None:
            kw["temperature"] = temperature
        t0 = time.monotonic()
        r = self.client.chat.completions.create(model=model or self.model, messages=messages, **kw)
        return ChatResult(text=r.choices[0].message.content or "", model=r.model,
                          prompt_tokens=r.usage.prompt_tokens, completion_tokens=r.usage.completion_tokens,
                          latency_s=time.monotonic() - t0)


# -- replies and a fake evaluator ------------------------------------------------------------
def kernel(tag: str, runtime_us: float | None) -> str:
    """A ModelNew source carrying its fake runtime (None = an incorrect kernel)."""
    marker = f"# RUNTIME_US={runtime_us}" if runtime_us is not None else "# INCORRECT"
    return (f"import torch\n{marker}\n# TAG={tag}\nclass ModelNew(torch.nn.Module):\n"
            f"    def forward(self, x):\n        return x\n")


def reply(name: str, thought: str, tag: str, runtime_us: float | None) -> str:
    return format_reply(name, thought, kernel(tag, runtime_us))


def fake_verdict(source: str, eager_us: float = 100.0, mode: Mode = Mode.FEEDBACK) -> Verdict:
    m = re.search(r"# RUNTIME_US=([0-9.]+)", source)
    eager = Measurement(eager_us, eager_us * 0.99, eager_us * 1.01, 20, True)
    if not m:
        return Verdict(status=Status.INCORRECT, message="output mismatch at [0, 3]", mode=mode,
                       rule="correctness.tolerance", timings={"eager": eager})
    rt = float(m.group(1))
    return Verdict(
        status=Status.VALID, mode=mode,
        timings={"candidate": Measurement(rt, rt * 0.99, rt * 1.01, 20, True), "eager": eager},
        speedups={"eager": Speedup("eager", eager_us / rt, eager_us / rt * 0.95, eager_us / rt * 1.05, 0.001, True)},
        profile={"kernels": {"my_kernel": 1}, "aten_ops": []},
    )


class FakeEvaluate:
    """An ``evaluate(proposal)`` for method-logic tests: numbers candidates, fills verdicts."""

    def __init__(self, eager_us: float = 100.0):
        self.eager_us = eager_us
        self.proposals: list[Proposal] = []

    def __call__(self, p: Proposal) -> Verdict:
        p.candidate_id = 1000 + len(self.proposals)
        if p.parse_error:
            v = Verdict(status=Status.COMPILE_ERROR, message=f"reply could not be parsed: {p.parse_error}")
        else:
            v = fake_verdict(p.source, self.eager_us)
        p.verdict = v
        self.proposals.append(p)
        return v


def seeded(task, tag: str = "SEED", runtime_us: float = 80.0, thought: str = "one thread per element",
           eager_us: float = 100.0):
    """``task`` with a judged seed kernel in its extras, as the runner passes one (issue 30)."""
    import dataclasses

    source = kernel(tag, runtime_us)
    seed = {"source": source, "name": "seed_kernel", "thought": thought, "candidate_id": 999,
            "verdict": fake_verdict(source, eager_us).to_dict()}
    return dataclasses.replace(task, extras={**task.extras, "seed": seed})
