"""Turn an ``--llm`` spec into a ``ChatModel``.

Specs:

=====================  ======================================================
``offline``            the built-in deterministic code model (seed 0)
``offline:SEED``       the same with another seed
``openai:MODEL``       MODEL at the configured base URL (default: OpenAI)
``MODEL@BASE_URL``     MODEL at an OpenAI-compatible endpoint (vLLM, Ollama...)
``MODEL``              a bare name: same as ``openai:MODEL``
``replay:RUN_ID``      answers identical requests from RUN_ID's recorded calls
``A,B,C``              an ensemble; ``chat(model="B")`` picks one, None = A
=====================  ======================================================

With a ``store``, every call is recorded in it (see ``harness.llm.recording`` and
``harness.store.llm_calls``). Budgets are applied by the caller with
``harness.llm.budget.MeteredModel`` so the meter stays with the harness.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.llm.base import ChatModel
from harness.llm.config import ConfigError, LLMConfig
from sandbox.contract import Registry

if TYPE_CHECKING:
    from harness.store.db import Store


def make_model(
    spec: str | None,
    *,
    store: Store | None = None,
    run_id: str | None = None,
    config: LLMConfig | None = None,
    device: str | None = None,
) -> ChatModel:
    """Build the model for ``spec`` (None: ``config.model``), recording into ``store`` if given.

    ``device`` ("cpu" / "cuda") tells the offline model which kernel language to write; it
    guesses from the prompt when None. ``run_id`` is the run every recorded call is filed
    under (``CallContext.run_id`` is used only when it is None).
    """
    config = config or LLMConfig()
    spec = (spec or config.model or "").strip()
    if not spec:
        raise ConfigError("no model: pass --llm SPEC (e.g. offline, openai:gpt-4.1, MODEL@URL)")
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    if len(parts) > 1:
        from harness.llm.ensemble import EnsembleModel

        members = [_single(p, store=store, config=config, device=device) for p in parts]
        model: ChatModel = EnsembleModel(members)
    else:
        model = _single(parts[0], store=store, config=config, device=device)
    if store is not None:
        from harness.llm.recording import RecordingModel

        model = RecordingModel(model, store, run_id=run_id, base_url=_base_url(model))
    return model


# kind -> factory(rest, spec, store=, config=, device=): the part before the first ":" of a
# spec. A spec of no registered kind is a model name at the OpenAI-compatible endpoint.
BACKENDS: Registry[ChatModel] = Registry("LLM backend", option="--llm KIND:...")


@BACKENDS.register("offline")
def _offline(rest: str, spec: str, *, config: LLMConfig, device: str | None, **_: Any) -> ChatModel:
    from harness.llm.offline import OfflineModel

    seed = 0
    if rest:
        try:
            seed = int(rest)
        except ValueError as e:
            raise ConfigError(
                f"--llm {spec}: the offline seed must be an integer (offline:7)"
            ) from e
    return OfflineModel(seed=seed, device=device, broken_rate=config.offline_broken_rate)


@BACKENDS.register("replay")
def _replay(rest: str, spec: str, *, store: Store | None, **_: Any) -> ChatModel:
    if not rest:
        raise ConfigError(
            "--llm replay:RUN_ID needs the id of a recorded run (see `harness runs list`)"
        )
    if store is None:
        raise ConfigError(
            f"--llm {spec}: replay needs the results store that holds run {rest!r}"
        )
    from harness.llm.replay import ReplayModel

    return ReplayModel(store, rest)


@BACKENDS.register("openai")
def _openai(rest: str, spec: str, *, config: LLMConfig, **_: Any) -> ChatModel:
    from harness.llm.client import OpenAIClient

    if not rest:
        raise ConfigError("--llm openai:MODEL needs a model name, e.g. openai:gpt-4.1")
    return OpenAIClient(rest, config)


def _single(spec: str, *, store: Store | None, config: LLMConfig, device: str | None) -> ChatModel:
    kind, _, rest = spec.partition(":")
    if "@" in spec and kind not in BACKENDS:
        return _endpoint(spec, config)
    if kind in BACKENDS:
        return BACKENDS.create(kind, rest, spec, store=store, config=config, device=device)
    from harness.llm.client import OpenAIClient

    return OpenAIClient(spec, config)  # a bare model name ("gpt-4.1", "llama3:8b")


def _endpoint(spec: str, config: LLMConfig) -> ChatModel:
    """``MODEL@BASE_URL``: MODEL at an OpenAI-compatible endpoint."""
    from harness.llm.client import OpenAIClient

    model_name, _, base_url = spec.partition("@")
    if not model_name or not base_url.startswith(("http://", "https://", "unix:")):
        raise ConfigError(
            f"--llm {spec}: write MODEL@BASE_URL with a full URL, e.g. "
            "llama3@http://127.0.0.1:11434/v1"
        )
    return OpenAIClient(model_name, config.replace(base_url=base_url))


def _base_url(model: ChatModel) -> str | None:
    return getattr(model, "base_url", None)


def spec_is_offline(spec: str, store: Store | None = None) -> bool:
    """Whether ``spec`` yields offline (not-LLM) answers, without building the model: offline
    specs, ensembles of them, and replays of runs whose recorded calls were all offline."""
    parts = [p.strip() for p in (spec or "").split(",") if p.strip()]
    if not parts:
        return False
    for p in parts:
        if p == "offline" or p.startswith("offline:"):
            continue
        if p.startswith("replay:") and store is not None:
            from harness.store.llm_calls import LLMCalls

            if LLMCalls(store).all_offline(p[len("replay:") :]):
                continue
        return False
    return True
