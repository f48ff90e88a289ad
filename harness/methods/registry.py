"""Where method names come from: built-ins, ``harness.methods`` entry points, submission folders.

Built-ins are lazy ``"module:attr"`` strings, imported only when asked for, so a broken method
breaks only itself. ``attr`` is a class (or any callable) that returns a ``Method`` when called
with keyword options. Each class carries ``name``, ``variant``, ``paper`` and
``default_budget`` attributes (``harness methods list`` shows them).

Resolution order for ``get_method(name)``:

1. built-ins and aliases (``evoengineer`` = ``evoengineer-full``);
2. the ``harness.methods`` entry point group of installed packages;
3. a submission folder ``<submissions>/NAME/submission.toml`` (``submissions`` in the current
   directory, or ``$HARNESS_SUBMISSIONS``), loaded through ``SUBMISSION_LOADER``.

Unknown names raise ``UnknownMethod`` with "did you mean" suggestions (difflib).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from harness.methods.base import Method
from sandbox.contract import Registry, UnknownName, load_target

__all__ = ["BUILTINS", "UnknownMethod", "get_method", "list_methods", "load_target"]

# name -> "module:attr". Helpers add built-ins by adding one line here.
BUILTINS: Registry[Method] = Registry("method", option="--method")
BUILTINS.update({
    "evoengineer-free": "harness.methods.evoengineer:EvoEngineerFree",
    "evoengineer-insight": "harness.methods.evoengineer:EvoEngineerInsight",
    "evoengineer-full": "harness.methods.evoengineer:EvoEngineerFull",
    "one-shot": "harness.methods.baselines:OneShot",
    "best-of-n": "harness.methods.baselines:BestOfN",
    "ai-cuda-engineer": "harness.methods.ai_cuda_engineer:AICudaEngineer",
    "funsearch": "harness.methods.funsearch:FunSearch",
    "eoh": "harness.methods.eoh:EoH",
})
BUILTINS.alias("evoengineer", "evoengineer-full")
ALIASES = BUILTINS.aliases  # alias -> built-in name

ENTRY_POINT_GROUP = "harness.methods"

# F2's submission loader: load_submission_method(path: Path) -> Method
SUBMISSION_LOADER = "harness.submissions.loader:load_submission_method"


class UnknownMethod(UnknownName):
    """No method of that name; the message lists suggestions and where names come from."""


@dataclass(frozen=True)
class MethodInfo:
    name: str
    target: str  # "module:attr", entry point value, or the submission folder
    source: str  # builtin | alias | entry_point | submission
    variant: str = ""
    paper: str = ""
    default_budget: int | None = None
    error: str | None = None  # set when its module could not be imported

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "variant": self.variant,
            "paper": self.paper,
            "default_budget": self.default_budget,
            "source": self.source,
            "target": self.target,
            "error": self.error,
        }


def submissions_root() -> Path:
    return Path(os.environ.get("HARNESS_SUBMISSIONS", "submissions"))


def _submission_names(root: Path | None = None) -> dict[str, Path]:
    root = root or submissions_root()
    if not root.is_dir():
        return {}
    return {p.name: p for p in sorted(root.iterdir()) if (p / "submission.toml").is_file()}


def _entry_points() -> dict[str, Any]:
    try:
        return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    except Exception:  # noqa: BLE001 - a broken installed package must not break the CLI
        return {}


def all_names() -> list[str]:
    names = set(BUILTINS) | set(ALIASES) | set(_entry_points()) | set(_submission_names())
    return sorted(names)


def _describe(name: str, target: str, source: str, obj_loader) -> MethodInfo:
    try:
        obj = obj_loader()
    except Exception as e:  # noqa: BLE001 - listed with its error instead of crashing the list
        return MethodInfo(name, target, source, error=f"{type(e).__name__}: {e}")
    return MethodInfo(
        name,
        target,
        source,
        variant=str(getattr(obj, "variant", "") or ""),
        paper=str(getattr(obj, "paper", "") or ""),
        default_budget=getattr(obj, "default_budget", None),
    )


def list_methods(include_submissions: bool = True) -> list[MethodInfo]:
    """Every method name with its metadata (imports each built-in module)."""
    out = [_describe(n, t, "builtin", lambda t=t: load_target(t)) for n, t in BUILTINS.items()]
    for alias, real in ALIASES.items():
        info = _describe(alias, BUILTINS[real], "alias", lambda r=real: load_target(BUILTINS[r]))
        out.append(MethodInfo(**{**info.__dict__, "target": f"= {real}"}))
    for n, ep in _entry_points().items():
        if n not in BUILTINS:
            out.append(_describe(n, ep.value, "entry_point", ep.load))
    if include_submissions:
        for n, path in _submission_names().items():
            if n not in BUILTINS and n not in ALIASES:
                out.append(_describe(n, str(path), "submission", lambda p=path: load_submission(p)))
    return sorted(out, key=lambda m: m.name)


def load_submission(path: Path, **options: Any) -> Method:
    try:
        loader = load_target(SUBMISSION_LOADER)
    except (ImportError, AttributeError) as e:
        raise UnknownMethod(
            f"{path}: is a submission folder, but the submission loader "
            f"({SUBMISSION_LOADER}) is not available: {e}"
        ) from e
    return loader(path, **options) if options else loader(path)


def get_method(name: str, **options: Any) -> Method:
    """Build the method called ``name`` (options go to its constructor)."""
    real = BUILTINS.canonical(name)
    if real in BUILTINS:
        return BUILTINS.create(real, **options)
    eps = _entry_points()
    if real in eps:
        return eps[real].load()(**options)
    subs = _submission_names()
    if real in subs:
        return load_submission(subs[real], **options)
    p = Path(name)
    if (p / "submission.toml").is_file():  # a path to a submission folder
        return load_submission(p, **options)
    raise UnknownMethod(unknown_message(name))


def unknown_message(name: str) -> str:
    listing = str(BUILTINS.unknown(name, all_names()))
    return (
        f"{listing} (Outside methods: a '{ENTRY_POINT_GROUP}' entry point or a "
        f"{submissions_root()}/NAME/submission.toml folder; `harness methods list` shows all.)"
    )
