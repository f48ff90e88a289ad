"""A run's settings, flat: what decides which runs are seeds of one entry, which entries share a
ranking table, and what an entry's label must show.

``run_settings(run)`` reads the run's recorded config: ``method_settings`` and ``llm_settings``
(recorded by runs since issue 30) when present, else the older ``method_options``; plus the
variant, the model and its endpoint, the budget, the rule set, the evaluator overrides, the
number of final judging sessions and the prompt hashes. Seeds (the run's and the LLM's) are
not settings: runs equal in every setting are seeds of one entry.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from harness.store import RunInfo

# keys of the table a ranking holds (an entry's label repeats them only where they differ
# among the entries of its method and model)
TABLE_KEYS = ("rules", "device", "hardware", "ops", "suite_version")
SEED_KEYS = frozenset({"seed"})  # never a setting: a run's seed makes it a seed of its entry


def method_settings(config: dict[str, Any]) -> dict[str, Any]:
    """The method's resolved settings as the run recorded them (``method_settings``), else the
    options it was given (``method_options``, runs before issue 30)."""
    ms = config.get("method_settings")
    if isinstance(ms, dict):
        return dict(ms)
    return dict(config.get("method_options") or {})


def llm_settings(config: dict[str, Any]) -> dict[str, Any]:
    """The sampling settings the run recorded (``llm_settings``: temperature, max_tokens, top_p,
    seed), ``None`` values (server defaults) and the seed left out; {} for older runs."""
    ls = config.get("llm_settings")
    if not isinstance(ls, dict):
        return {}
    return {k: v for k, v in ls.items() if v is not None and k not in SEED_KEYS}


def _flat(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k in sorted(value):
            _flat(f"{prefix}.{k}" if prefix else str(k), value[k], out)
    elif isinstance(value, (list, tuple)):
        out[prefix] = json.dumps(list(value), sort_keys=True, default=str)
    else:
        out[prefix] = value


def model_and_endpoint(llm: str) -> tuple[str, str]:
    """("model[,model]", "endpoint[,endpoint]") of an LLM spec: "m@http://h:1/v1" -> ("m",
    "http://h:1/v1")."""
    models, ends = [], []
    for part in llm.split(","):
        name, _, url = part.strip().partition("@")
        models.append(name.strip())
        ends.append(url.strip())
    return ",".join(models), ",".join(e for e in ends if e)


def digest(obj: Any, n: int = 10) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:n]


def run_settings(run: RunInfo, *, hardware: str, planned_ops: tuple[str, ...]) -> dict[str, Any]:
    """Every setting of a run but its seeds, flat (key -> JSON scalar)."""
    cfg = run.config or {}
    model, endpoint = model_and_endpoint(run.llm)
    ms = method_settings(cfg)
    variant = run.variant or ms.pop("variant", None)
    ms.pop("variant", None)
    out: dict[str, Any] = {"method": run.method, "variant": variant or None, "model": model}
    if endpoint:
        out["endpoint"] = endpoint
    budget = dict(run.budget or {})
    out["budget"] = budget.pop("evaluations", None)
    for k in sorted(budget):
        if budget[k] is not None:
            out[f"budget.{k}"] = budget[k]
    flat: dict[str, Any] = {}
    _flat("", ms.pop("options", {}) if isinstance(ms.get("options"), dict) else {}, flat)
    _flat("", ms, flat)
    for k, v in flat.items():
        out[k if k not in out else f"method.{k}"] = v
    for k, v in llm_settings(cfg).items():
        out[k if k not in out else f"llm.{k}"] = v
    for k, v in sorted((cfg.get("eval_overrides") or {}).items()):
        out[f"eval.{k}"] = json.dumps(v, default=str) if isinstance(v, (list, tuple, dict)) else v
    if cfg.get("prompt_hashes"):
        out["prompts"] = digest(cfg["prompt_hashes"], 8)
    out["final_sessions"] = int(cfg.get("final_sessions") or 1)
    out["rules"] = run.rules
    out["device"] = run.device
    out["hardware"] = hardware
    out["ops"] = ",".join(planned_ops)
    return {k: v for k, v in out.items() if k not in SEED_KEYS}


def settings_key(settings: dict[str, Any]) -> str:
    return json.dumps(settings, sort_keys=True, default=str)


def _show(key: str, value: Any) -> str:
    if key == "ops":
        ops = str(value).split(",")
        return f"{len(ops)} ops" if len(ops) > 3 else f"ops={'+'.join(ops)}"
    if value is None:
        return f"{key}=default"
    if isinstance(value, float):
        return f"{key}={value:g}"
    text = str(value)
    if len(text) > 28 and key != "endpoint":  # a long value (a stage plan): its digest, kept apart
        return f"{key}=#{digest(value, 6)}"
    return f"{key}={text}"


def distinguishing(settings: list[dict[str, Any]]) -> list[str]:
    """The setting keys whose values are not all equal across ``settings`` (the entries of one
    method and model), in a stable reading order (budget first)."""
    keys = sorted({k for s in settings for k in s})
    out = [k for k in keys if len({json.dumps(s.get(k), sort_keys=True, default=str) for s in settings}) > 1]
    if "suite_version" in out:  # named only where it tells apart entries of the same op set
        by_ops: dict[str, set[str]] = {}
        for s in settings:
            by_ops.setdefault(str(s.get("ops")), set()).add(str(s.get("suite_version")))
        if all(len(v) == 1 for v in by_ops.values()):
            out.remove("suite_version")
    first = ["budget", "variant", "rules", "temperature"]
    return sorted(out, key=lambda k: (first.index(k) if k in first else len(first), k))


def label(settings: dict[str, Any], shown: list[str]) -> str:
    """'method (variant) · model' plus every setting in ``shown`` (the ones that tell this entry
    apart from another entry of the same method and model); partial rules always say so."""
    base = settings["method"] + (f" ({_short(settings['variant'])})" if settings.get("variant") else "")
    base += f" · {settings['model']}"
    extra = [_show(k, settings.get(k)) for k in shown if k not in ("method", "variant", "model", "rules")]
    if settings.get("rules") == "partial":
        extra.append("partial rules")
    elif "rules" in shown:
        extra.append("strict rules")
    return base + (" · " + ", ".join(extra) if extra else "")


def _short(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
