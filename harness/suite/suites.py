"""Resolve what a user names into a list of tasks: a named suite (``smoke``, ``level1``, ...),
op names (``relu``, ``relu,softmax``), a category (``category:pooling``), a single
KernelBench-format file, or a folder of them (searched recursively, e.g. a checkout's
``KernelBench/level1``). Unknown names fail with a "did you mean" suggestion.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from sandbox.contract import Task, TaskError, load_task


class SuiteError(TaskError):
    """An unknown suite/op/category name or an unusable path; the message says what to use."""


@dataclass(frozen=True)
class SuiteDef:
    name: str
    description: str = ""
    ops: tuple[str, ...] = field(default_factory=tuple)  # op names, "category:X", "suite:Y"


def ops_root() -> Path:
    """The folder of the bundled reference ops (the ``reference_ops`` package)."""
    import reference_ops

    return Path(next(iter(reference_ops.__path__)))


def _natural_key(p: Path) -> list:
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", str(p))]


@lru_cache(maxsize=4)
def _op_index(root: Path) -> dict[str, Path]:
    index: dict[str, Path] = {}
    for p in sorted(root.glob("*/*.py")):
        if p.name.startswith("_"):
            continue
        if p.stem in index:
            raise SuiteError(
                f"op name {p.stem!r} is used twice: {index[p.stem]} and {p}; rename one file"
            )
        index[p.stem] = p
    return index


def op_paths(root: Path | None = None) -> dict[str, Path]:
    """Op name (file stem) -> file, for every op of the bundled suite."""
    return dict(_op_index(root or ops_root()))


def categories(root: Path | None = None) -> list[str]:
    return sorted({p.parent.name for p in op_paths(root).values()})


def load_suites(root: Path | None = None) -> dict[str, SuiteDef]:
    path = (root or ops_root()) / "suites.toml"
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SuiteError(f"{path}: cannot read the suite list: {e}") from e
    out = {}
    for name, d in data.items():
        if not isinstance(d, dict) or not isinstance(d.get("ops"), list):
            raise SuiteError(f"{path}: [{name}] needs an `ops = [...]` list")
        out[name] = SuiteDef(
            name=name, description=str(d.get("description", "")), ops=tuple(d["ops"])
        )
    return out


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def _expand_names(name: str, root: Path, suites: dict[str, SuiteDef], seen: set[str]) -> list[Path]:
    ops = op_paths(root)
    if name.startswith("suite:"):
        name = name[len("suite:") :]
        if name not in suites:
            raise SuiteError(
                f"unknown suite {name!r}{_did_you_mean(name, suites)} (suites: {', '.join(suites)})"
            )
    if name.startswith("category:"):
        cat = name[len("category:") :]
        paths = [p for p in ops.values() if p.parent.name == cat]
        if not paths:
            raise SuiteError(
                f"unknown category {cat!r}{_did_you_mean(cat, categories(root))} "
                f"(categories: {', '.join(categories(root))})"
            )
        return sorted(paths, key=lambda p: p.stem)
    if name in suites:
        if name in seen:
            raise SuiteError(f"suite {name!r} includes itself (suites.toml)")
        out: list[Path] = []
        for item in suites[name].ops:
            out += _expand_names(item, root, suites, seen | {name})
        return out
    if name in ops:
        return [ops[name]]
    hint = _did_you_mean(name, [*ops, *suites, *(f"category:{c}" for c in categories(root))])
    raise SuiteError(
        f"{name!r} is not a suite, an op or a path{hint} "
        "(see `harness suite list`; suites: " + ", ".join(suites) + ")"
    )


def _task_files_in(folder: Path) -> list[Path]:
    files = [
        p for p in folder.rglob("*.py") if p.name != "__init__.py" and "__pycache__" not in p.parts
    ]
    out = []
    for p in files:
        text = p.read_text(errors="replace")
        if "class Model" in text and "def get_inputs" in text:
            out.append(p)
    return sorted(out, key=_natural_key)


def resolve_paths(spec: str | Sequence[str], root: Path | None = None) -> list[Path]:
    """Files for ``spec`` (see module docstring), in order, without duplicates."""
    root = root or ops_root()
    items = [spec] if isinstance(spec, str) else list(spec)
    names = [s.strip() for item in items for s in str(item).split(",") if s.strip()]
    if not names:
        raise SuiteError("nothing to resolve: name a suite, op(s), a task file or a folder")
    suites = load_suites(root)
    out: list[Path] = []
    for name in names:
        p = Path(name).expanduser()
        if p.is_dir():
            found = _task_files_in(p)
            if not found:
                raise SuiteError(
                    f"{p}: no task files found (a task is a .py file defining class Model, get_inputs "
                    "and get_init_inputs)"
                )
            out += found
        elif p.is_file() or name.endswith(".py"):
            if not p.is_file():
                raise SuiteError(f"{p}: no such task file")
            out.append(p)
        else:
            out += _expand_names(name, root, suites, set())
    seen: set[Path] = set()
    uniq = []
    for p in out:
        rp = p.resolve()
        if rp not in seen:
            seen.add(rp)
            uniq.append(p)
    return uniq


def resolve(spec: str | Sequence[str], root: Path | None = None) -> list[Task]:
    """Tasks for ``spec``: a suite name, op name(s) (list or comma-separated), ``category:X``,
    a KernelBench-format file, or a folder of them."""
    return [load_task(p) for p in resolve_paths(spec, root)]


def find_task(name_or_path: str, root: Path | None = None) -> Task:
    """Exactly one task: an op name or a task file path."""
    tasks = resolve(name_or_path, root)
    if len(tasks) != 1:
        raise SuiteError(f"{name_or_path!r} names {len(tasks)} tasks; name one op or one file")
    return tasks[0]
