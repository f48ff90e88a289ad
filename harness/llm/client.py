"""The client for any OpenAI-compatible chat endpoint (OpenAI, DeepSeek, vLLM, Ollama, our
gateway), over the ``openai`` SDK.

The SDK's own retries are off; this module retries 429 (honouring ``Retry-After``), 5xx,
timeouts, connection errors and malformed responses with exponential backoff and jitter,
limits concurrent calls with a semaphore, and turns the errors retrying cannot fix (bad key,
unknown model, context too long) into ``LLMError`` messages that name the fix. The API key
is read from the environment variable named in the config and lives only in the SDK client.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import openai

from harness.llm.base import CallContext, ChatResult, LLMError, TransientError
from harness.llm.config import LLMConfig

try:  # the openai SDK's HTTP library (httpx, renamed httpx2 in newer SDKs)
    import httpx2 as _httpx
except ImportError:  # pragma: no cover
    import httpx as _httpx  # type: ignore[no-redef]


__all__ = ["OpenAIClient", "TransientError"]  # TransientError lives in base.py (the runner catches it)


class OpenAIClient:
    offline = False

    def __init__(
        self, model: str, config: LLMConfig, *, api_key: str | None = None, sleep: Any = time.sleep
    ):
        self.model = model
        self.config = config
        self.name = f"openai:{model}" if not config.base_url else f"{model}@{config.base_url}"
        self.base_url = config.base_url
        self._sleep = sleep
        self._sem = threading.BoundedSemaphore(config.concurrency)
        key = api_key if api_key is not None else config.api_key()
        http_client = None
        base_url: str | None = config.base_url
        if base_url and base_url.startswith("unix:"):
            path, _, prefix = base_url[len("unix:") :].partition("::")
            http_client = _httpx.Client(
                transport=_httpx.HTTPTransport(uds=path), timeout=config.timeout_s
            )
            base_url = "http://gateway" + (prefix or "/v1")
        self._client = openai.OpenAI(
            api_key=key,
            base_url=base_url,
            timeout=config.timeout_s,
            max_retries=0,
            http_client=http_client,
        )

    # the ChatModel.chat signature (harness/llm/base.py), repeated on purpose: a backend
    # implements the protocol; wrappers write it once (ModelWrapper)
    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        context: CallContext,
        temperature: float | None = None,
        max_tokens: int | None = None,
        model: str | None = None,
    ) -> ChatResult:
        name = model or self.model
        params: dict[str, Any] = {"model": name, "messages": messages}
        t = temperature if temperature is not None else self.config.temperature
        mt = max_tokens if max_tokens is not None else self.config.max_tokens
        if t is not None:
            params["temperature"] = t
        if mt is not None:
            params["max_tokens"] = mt
        if getattr(self.config, "top_p", None) is not None:
            params["top_p"] = self.config.top_p
        if getattr(self.config, "seed", None) is not None:
            params["seed"] = self.config.seed
        with self._sem:
            return self._call_with_retries(params, name)

    def _call_with_retries(self, params: dict[str, Any], name: str) -> ChatResult:
        cfg = self.config
        attempt = 0
        waited = 0.0  # seconds slept between attempts (the documented limit: docs/llm.md "Outages")
        while True:
            t0 = time.perf_counter()
            try:
                resp = self._client.chat.completions.create(**params)
                return self._result(resp, params, time.perf_counter() - t0, attempt)
            except (openai.AuthenticationError, openai.PermissionDeniedError) as e:
                raise LLMError(
                    f"{e.status_code} from {self._where()}: the API key in ${cfg.api_key_env} was refused; "
                    f"check the key, or name the right variable with --llm-api-key-env. Server said: {_msg(e)}"
                ) from None
            except openai.NotFoundError as e:
                raise LLMError(
                    f"404 from {self._where()}: model {name!r} is unknown there (or the base URL is wrong: "
                    f"it should end in /v1); check the name against GET {self._where()}/models. "
                    f"Server said: {_msg(e)}"
                ) from None
            except openai.BadRequestError as e:
                text = _msg(e)
                if (
                    "context_length" in text
                    or "maximum context" in text.lower()
                    or "too long" in text.lower()
                ):
                    raise LLMError(
                        f"400 context too long for {name!r} at {self._where()}: the prompt plus max_tokens "
                        f"exceed the model's context window; lower --max-tokens, use a model with a longer "
                        f"context, or shorten the method's prompts (fewer parents / insights). Server said: {text}"
                    ) from None
                raise LLMError(
                    f"400 bad request to {self._where()} (model {name!r}): {text}"
                ) from None
            except (
                openai.RateLimitError,
                openai.InternalServerError,
                openai.APIConnectionError,
                openai.APIResponseValidationError,
                ValueError,
            ) as e:
                retry_after = _retry_after(e)
                what = _describe(e)
            except openai.APIStatusError as e:
                if e.status_code < 500 and e.status_code not in (408, 409, 429):
                    raise LLMError(
                        f"{e.status_code} from {self._where()} (model {name!r}): {_msg(e)}"
                    ) from None
                retry_after, what = _retry_after(e), _describe(e)
            if attempt >= cfg.max_retries:
                raise TransientError(
                    f"{self._where()} (model {name!r}) still failing after {attempt + 1} attempts "
                    f"({waited:.1f} s of backoff between them): {what}; "
                    "raise llm.max_retries / llm.timeout_s, lower llm.concurrency, or check the server"
                )
            delay = min(cfg.max_backoff_s, cfg.backoff_s * 2**attempt) * (0.5 + random.random() / 2)
            if retry_after is not None:
                delay = (
                    min(cfg.max_backoff_s, max(retry_after, 0.0))
                    + random.random() * 0.1 * cfg.backoff_s
                )
            self._sleep(delay)
            waited += delay
            attempt += 1

    def _result(
        self, resp: Any, params: dict[str, Any], latency: float, attempt: int
    ) -> ChatResult:
        choices = getattr(resp, "choices", None)
        if not choices or getattr(choices[0], "message", None) is None:
            raise ValueError("malformed response: no choices[0].message")
        text = choices[0].message.content or ""
        usage = getattr(resp, "usage", None)
        raw: dict[str, Any] = {
            "id": getattr(resp, "id", None),
            "finish_reason": choices[0].finish_reason,
            "attempts": attempt + 1,
        }
        if usage is not None and usage.prompt_tokens is not None:
            pt, ct = int(usage.prompt_tokens), int(usage.completion_tokens or 0)
        else:
            pt = sum(len(str(m.get("content", ""))) for m in params["messages"]) // 4
            ct = len(text) // 4
            raw["token_estimate"] = True
        return ChatResult(
            text=text,
            model=getattr(resp, "model", None) or params["model"],
            prompt_tokens=pt,
            completion_tokens=ct,
            latency_s=latency,
            raw=raw,
        )

    def _where(self) -> str:
        return (self.base_url or str(self._client.base_url)).rstrip("/")


def _msg(e: Exception) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return str(err.get("message") or err.get("code") or err)[:500]
        return str(err)[:500]
    return str(e)[:500]


def _describe(e: Exception) -> str:
    status = getattr(e, "status_code", None)
    kind = type(e).__name__
    if isinstance(e, ValueError) and not isinstance(e, LLMError):
        kind = "malformed response"
    return f"{kind}{f' {status}' if status else ''}: {str(e)[:200]}"


def _retry_after(e: Exception) -> float | None:
    resp = getattr(e, "response", None)
    headers = getattr(resp, "headers", None)
    if headers is None:
        return None
    for key, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        v = headers.get(key)
        if v is not None:
            try:
                return float(v) * scale
            except ValueError:
                continue
    return None
