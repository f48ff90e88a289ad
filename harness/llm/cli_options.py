"""The LLM flags shared by ``harness run`` and ``harness llm check``.

    @click.command()
    @llm_options
    def cli(llm_config: LLMConfig, llm_spec: str, ...): ...

The decorator adds ``--llm``, ``--llm-base-url``, ``--llm-api-key-env``, ``--llm-config``,
``--temperature`` and ``--max-tokens`` and hands the command two merged values instead:
``llm_spec`` (the model spec string) and ``llm_config`` (an ``LLMConfig``; flags override
the TOML file). Build the model with ``harness.llm.factory.make_model(llm_spec, config=...)``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from harness.llm.config import ConfigError, LLMConfig, load_config


def llm_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option(
            "--llm",
            "llm",
            default=None,
            metavar="SPEC",
            help="Model: offline[:SEED], openai:MODEL, MODEL@BASE_URL, replay:RUN_ID, "
            "or A,B for an ensemble. Default: [llm] model of --llm-config, else offline.",
        ),
        click.option(
            "--llm-base-url",
            default=None,
            metavar="URL",
            help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (vLLM).",
        ),
        click.option(
            "--llm-api-key-env",
            default=None,
            metavar="VAR",
            help="Name of the environment variable holding the API key (default OPENAI_API_KEY).",
        ),
        click.option(
            "--llm-config",
            default=None,
            metavar="TOML",
            type=click.Path(dir_okay=False),
            help="TOML file with an [llm] table.",
        ),
        click.option("--temperature", default=None, type=float, help="Sampling temperature."),
        click.option(
            "--max-tokens", default=None, type=int, help="Completion token limit per call."
        ),
    ]

    @functools.wraps(fn)
    def wrapper(
        *args: Any,
        llm: str | None,
        llm_base_url: str | None,
        llm_api_key_env: str | None,
        llm_config: str | None,
        temperature: float | None,
        max_tokens: int | None,
        **kwargs: Any,
    ) -> Any:
        try:
            config = merge_llm_options(
                llm, llm_base_url, llm_api_key_env, llm_config, temperature, max_tokens
            )
        except ConfigError as e:
            raise click.UsageError(str(e)) from e
        return fn(*args, llm_spec=config.model, llm_config=config, **kwargs)

    for opt in reversed(options):
        wrapper = opt(wrapper)
    return wrapper


def merge_llm_options(
    llm: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    config_path: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> LLMConfig:
    """The TOML file's [llm] table, overridden by the flags that were given."""
    config = load_config(config_path)
    return config.replace(
        model=llm,
        base_url=base_url,
        api_key_env=api_key_env,
        temperature=temperature,
        max_tokens=max_tokens,
    )


def note_concurrency(jobs: int, spec: str, llm_config: LLMConfig) -> None:
    """A model behind an API answers at most ``llm.concurrency`` calls at a time: with more ops in flight
    (``--jobs``) the rest wait for the model and its latency is not hidden (docs/llm.md)."""
    from harness.llm.factory import spec_is_offline

    limit = getattr(llm_config, "concurrency", None)
    if limit is not None and jobs > limit and not spec.startswith("replay:") and not spec_is_offline(spec):
        click.echo(f"note: --jobs {jobs} but llm.concurrency is {limit}: at most {limit} LLM calls are in flight, "
                   f"so ops wait for the model; set concurrency = {jobs} under [llm] in your --llm-config "
                   "(docs/llm.md) unless the API's rate limit needs fewer", err=True)
