"""``harness llm``: check the configured LLM endpoint, or serve it as a gateway."""

from __future__ import annotations

import json
import sys
import time

import click

from harness.llm.base import CallContext, LLMError
from harness.llm.cli_options import llm_options
from harness.llm.config import ConfigError, LLMConfig


@click.group()
def cli() -> None:
    """Check and configure the LLM endpoint (any OpenAI-compatible server, or offline)."""


@cli.command()
@llm_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def check(llm_spec: str, llm_config: LLMConfig, as_json: bool) -> None:
    """Make one tiny call and report model, latency and tokens.

    \b
    Examples:
      harness llm check --llm offline
      OPENAI_API_KEY=... harness llm check --llm openai:gpt-4.1
      harness llm check --llm qwen2.5-coder@http://127.0.0.1:8000/v1 --llm-api-key-env VLLM_KEY
    """
    from harness.llm.factory import make_model

    try:
        model = make_model(llm_spec, config=llm_config, device="cpu")
        messages = [{"role": "user", "content": "Reply with the single word: ready"}]
        t0 = time.perf_counter()
        r = model.chat(
            messages, context=CallContext(purpose="check"), max_tokens=llm_config.max_tokens or 16
        )
        wall = time.perf_counter() - t0
    except (LLMError, ConfigError) as e:
        raise click.ClickException(str(e)) from e
    info = {
        "llm": model.name,
        "model": r.model,
        "offline": r.offline,
        "latency_s": round(wall, 3),
        "prompt_tokens": r.prompt_tokens,
        "completion_tokens": r.completion_tokens,
        "tokens_are_estimates": bool(r.offline or r.raw.get("token_estimate")),
        "reply": r.text.strip().splitlines()[0][:80] if r.text.strip() else "",
    }
    if as_json:
        click.echo(json.dumps(info))
        return
    est = " (estimates)" if info["tokens_are_estimates"] else ""
    click.echo(
        f"ok: {info['llm']} answered as model {info['model']!r}"
        f"{' [offline: not an LLM]' if r.offline else ''}"
    )
    click.echo(
        f"latency {info['latency_s']:.3f} s; tokens: prompt {r.prompt_tokens}, "
        f"completion {r.completion_tokens}{est}"
    )
    click.echo(f"reply: {info['reply']}")


@cli.command()
@llm_options
@click.option(
    "--results",
    default="results",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Results directory whose store records the calls.",
)
@click.option(
    "--run-id", default=None, help="Run id recorded with the calls (default: gateway-<time>)."
)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=0, type=int, help="TCP port (0: pick a free one).")
@click.option(
    "--unix-socket",
    default=None,
    type=click.Path(dir_okay=False),
    help="Serve on a unix socket instead.",
)
@click.option(
    "--llm-calls", default=None, type=int, help="Stop serving calls after this many (429 after)."
)
@click.option("--tokens", default=None, type=int, help="Token budget (prompt + completion).")
def gateway(
    llm_spec: str,
    llm_config: LLMConfig,
    results: str,
    run_id: str | None,
    host: str,
    port: int,
    unix_socket: str | None,
    llm_calls: int | None,
    tokens: int | None,
) -> None:
    """Serve the LLM as an OpenAI-compatible endpoint holding the key, recording and budgeting.

    Prints OPENAI_BASE_URL and a per-run OPENAI_API_KEY token for the method process; the
    upstream key never leaves this process. Stop with Ctrl-C.
    """
    from harness.llm.budget import UsageMeter
    from harness.llm.factory import make_model
    from harness.llm.gateway import Gateway
    from harness.methods.base import Budget
    from harness.store.db import Store

    run_id = run_id or time.strftime("gateway-%Y%m%d-%H%M%S")
    try:
        store = Store(results)
        model = make_model(llm_spec, store=store, run_id=run_id, config=llm_config)
    except (LLMError, ConfigError) as e:
        raise click.ClickException(str(e)) from e
    meter = None
    if llm_calls is not None or tokens is not None:
        meter = UsageMeter(Budget(evaluations=sys.maxsize, llm_calls=llm_calls, tokens=tokens))
    gw = Gateway(
        model,
        meter=meter,
        context=CallContext(run_id=run_id),
        host=host,
        port=port,
        unix_socket=unix_socket,
    )
    gw.start()
    click.echo(f"OPENAI_BASE_URL={gw.http_url or gw.url}")
    click.echo(f"OPENAI_API_KEY={gw.token}")
    click.echo(
        f"# serving {model.name} for run {run_id}; calls recorded in {store.path}; Ctrl-C stops",
        err=True,
    )
    sys.stdout.flush()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        gw.stop()
        if meter is not None:
            click.echo(json.dumps(meter.snapshot()), err=True)
