"""LLM configuration: the ``[llm]`` table of a TOML file, merged with CLI flags.

Example ``llm.toml``::

    [llm]
    model = "gpt-4.1"                   # or a full spec: "openai:gpt-4.1", "offline", "replay:RUN"
    base_url = "https://api.openai.com/v1"
    api_key_env = "OPENAI_API_KEY"      # the NAME of the variable; the key itself is never stored
    temperature = 0.7
    max_tokens = 4096
    top_p = 0.95                        # optional, sent only when set (so is seed)
    timeout_s = 120
    max_retries = 5
    concurrency = 4

    [llm.prices."gpt-4.1"]
    prompt_per_mtok = 2.0               # USD per million prompt tokens
    completion_per_mtok = 8.0

Only the variable's name is kept here; ``api_key()`` reads the environment at call time.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.llm.base import LLMError


class ConfigError(ValueError):
    """A configuration file or flag that cannot be used; the message names the fix."""


@dataclass(frozen=True)
class Price:
    prompt_per_mtok: float = 0.0
    completion_per_mtok: float = 0.0

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (
            prompt_tokens * self.prompt_per_mtok + completion_tokens * self.completion_per_mtok
        ) / 1e6


@dataclass(frozen=True)
class LLMConfig:
    model: str = "offline"  # a model spec (see harness.llm.factory)
    base_url: str | None = None  # None: the openai SDK default (OPENAI_BASE_URL or api.openai.com)
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float | None = None  # None: the method's or the server's default
    max_tokens: int | None = None
    top_p: float | None = None  # None: the server's default (sent only when set)
    seed: int | None = None  # sampling seed for servers that take one (sent only when set)
    timeout_s: float = 120.0
    max_retries: int = 5
    backoff_s: float = 1.0  # first retry delay; doubles each retry, with jitter
    max_backoff_s: float = 60.0
    concurrency: int = 4
    offline_broken_rate: float = 0.15  # offline model: share of deliberately broken replies
    prices: dict[str, Price] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ConfigError("llm.concurrency must be >= 1")
        if self.max_retries < 0:
            raise ConfigError("llm.max_retries must be >= 0")
        if self.timeout_s <= 0:
            raise ConfigError("llm.timeout_s must be > 0")
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            raise ConfigError(f"llm.temperature={self.temperature}: use a value in [0, 2]")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise ConfigError(f"llm.top_p={self.top_p}: use a value in (0, 1]")
        if not 0 <= self.offline_broken_rate <= 1:
            raise ConfigError("llm.offline_broken_rate must be in [0, 1]")

    def api_key(self) -> str:
        """The upstream key, read from the environment variable named ``api_key_env``."""
        key = os.environ.get(self.api_key_env, "")
        if not key:
            raise LLMError(
                f"no API key: environment variable {self.api_key_env} is empty or unset; "
                f"export {self.api_key_env}=... or name another variable with --llm-api-key-env "
                "(for a local server without auth any non-empty value works)"
            )
        return key

    def price(self, model: str) -> Price | None:
        if model in self.prices:
            return self.prices[model]
        bare = model.split(":", 1)[1] if ":" in model else model
        return self.prices.get(bare)

    def replace(self, **changes: Any) -> LLMConfig:
        changes = {k: v for k, v in changes.items() if v is not None}
        return dataclasses.replace(self, **changes)


_FIELDS = {f.name for f in dataclasses.fields(LLMConfig)}


def load_config(path: str | Path | None) -> LLMConfig:
    """Read the ``[llm]`` table of a TOML file (the whole file when it has no ``[llm]``)."""
    if path is None:
        return LLMConfig()
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such LLM config file (pass a TOML file with an [llm] table)")
    try:
        data = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{p}: not valid TOML: {e}") from e
    return config_from_dict(data.get("llm", data), source=str(p))


def config_from_dict(d: dict[str, Any], source: str = "config") -> LLMConfig:
    d = dict(d)
    if "api_key" in d:
        raise ConfigError(
            f"{source}: llm.api_key is not allowed (keys must never be written to files that "
            "end up in results); put the key in an environment variable and set llm.api_key_env"
        )
    unknown = set(d) - _FIELDS
    if unknown:
        raise ConfigError(
            f"{source}: unknown llm field(s) {sorted(unknown)}; allowed: {sorted(_FIELDS)}"
        )
    prices: dict[str, Price] = {}
    for model, pd in (d.pop("prices", None) or {}).items():
        if not isinstance(pd, dict) or set(pd) - {"prompt_per_mtok", "completion_per_mtok"}:
            raise ConfigError(
                f'{source}: [llm.prices."{model}"] takes prompt_per_mtok and completion_per_mtok'
            )
        prices[model] = Price(**{k: float(v) for k, v in pd.items()})
    try:
        return LLMConfig(**d, prices=prices)
    except TypeError as e:
        raise ConfigError(f"{source}: {e}") from e
