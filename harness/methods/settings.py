"""What a run records about its method: resolved arguments, prompt template hashes, LLM settings.

``method_settings(method, options, budget)`` asks a method for ``settings(budget)`` (every
built-in has it: its resolved arguments, the protocol and, where it has stages, the stage plan
for this budget); a method without one (an outside submission) is recorded with the options it
was given. ``prompt_hashes(templates)`` hashes each prompt template together with everything it
includes, so two runs whose prompts differ never share a hash. ``llm_settings`` is the sampling
the run asked for (``None`` = the server's default). The run stores the three under its config:
``method_settings``, ``prompt_hashes``, ``llm_settings`` (harness/runner/orchestrate.py).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Any

from harness.methods.base import Budget

_INCLUDE = re.compile(r"""{%-?\s*(?:include|import|extends|from)\s+["']([^"']+)["']""")


def _source(name: str) -> str:
    from harness.methods.prompting import environment

    env = environment()
    assert env.loader is not None
    return env.loader.get_source(env, name)[0]


def template_hash(name: str) -> str:
    """sha256 (first 16 hex) of a template and, recursively, of every template it includes."""
    seen: dict[str, str] = {}
    todo = [name]
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        seen[t] = _source(t)
        todo.extend(_INCLUDE.findall(seen[t]))
    h = hashlib.sha256()
    for t in sorted(seen):
        h.update(f"{t}\0{seen[t]}\0".encode())
    return h.hexdigest()[:16]


def prompt_hashes(templates: Iterable[str]) -> dict[str, str]:
    return {t: template_hash(t) for t in sorted(set(templates))}


def method_settings(method: Any, options: dict[str, Any], budget: Budget | None) -> dict[str, Any]:
    """The method's resolved settings (``settings(budget)`` when it has one, else the options)."""
    fn = getattr(method, "settings", None)
    out: dict[str, Any] = {}
    if callable(fn):
        try:
            out = dict(fn(budget))
        except TypeError:
            out = dict(fn())
    else:
        out = {"options": dict(options)}
    variant = getattr(method, "variant", None)
    if variant and "variant" not in out:
        out["variant"] = str(variant)
    return out


def method_templates(method: Any) -> list[str]:
    return list(getattr(method, "templates", ()) or ())


def llm_settings(llm_config: Any, method_settings: dict[str, Any], llm_spec: str) -> dict[str, Any]:
    """Sampling settings of the run: temperature, max_tokens, top_p, seed.

    The method's own temperature (``-o temperature=``) wins over the LLM config's, as it does
    in each call; ``None`` means the server's default. The offline model's seed is its spec's."""
    temp = method_settings.get("temperature")
    if temp is None:
        temp = getattr(llm_config, "temperature", None)
    seed = getattr(llm_config, "seed", None)
    spec = llm_spec.strip()
    if seed is None and (spec == "offline" or spec.startswith("offline:")):
        tail = spec.partition(":")[2]
        seed = int(tail) if tail.lstrip("-").isdigit() else 0
    return {
        "temperature": temp,
        "max_tokens": getattr(llm_config, "max_tokens", None),
        "top_p": getattr(llm_config, "top_p", None),
        "seed": seed,
    }
