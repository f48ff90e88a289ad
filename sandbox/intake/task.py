"""A task (reference op): one KernelBench-format Python file, plus our optional metadata.

KernelBench format: ``class Model(nn.Module)``, ``get_inputs()``, ``get_init_inputs()``, with
shape constants as module globals. Our own ops add two module-level dicts that KernelBench
ignores:

``META``   category, dtype, atol, rtol, and ``flops`` / ``bytes`` formulas: Python
           expressions over the module's shape globals (e.g. ``"2*M*N*K"``).
``SHAPES`` named shape profiles as overrides of those globals: ``"small"`` (CPU-friendly),
           ``"extra"`` (a list; reserved for final evaluation so that shape-hardcoded
           kernels fail; becomes profiles ``extra0``, ``extra1``, ...) and ``"small_extra"``
           (a list of CPU-sized extra shapes; profiles ``small_extra0``, ...).
           ``extra_profiles_for(base)`` gives the extra profiles that go with a base profile.

A profile is applied by loading the module afresh and overwriting its globals before
calling ``get_init_inputs()`` / ``get_inputs()``; the file itself stays a valid KernelBench
task at its default shapes.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import itertools
import math
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandbox.intake.datasize import DataSize, SizeCheck

DEFAULT_TOL = {"float32": 1e-4, "float64": 1e-7, "float16": 1e-2, "bfloat16": 1e-2}

_counter = itertools.count()


class TaskError(ValueError):
    """A task file that cannot be used; the message names the file, the problem and the fix."""


@dataclass(frozen=True)
class OpMeta:
    category: str = "uncategorised"
    dtype: str = "float32"
    atol: float = 1e-4
    rtol: float = 1e-4
    flops: str | None = None  # expression over shape globals
    bytes: str | None = None  # expression over shape globals (minimum bytes moved)
    description: str = ""

    def __post_init__(self) -> None:
        if self.dtype not in DEFAULT_TOL:
            raise TaskError(f"META['dtype']={self.dtype!r}: use one of {sorted(DEFAULT_TOL)}")
        if self.atol < 0 or self.rtol < 0:
            raise TaskError("META atol/rtol must be >= 0")


@dataclass(frozen=True)
class Task:
    name: str
    path: Path
    source: str
    meta: OpMeta
    shapes: dict[str, dict[str, Any]] = field(default_factory=dict)  # profile -> overrides
    kernelbench: bool = False  # True when the file carries no META (plain KernelBench task)
    # module-level globals overridden by ``with_globals`` (``--set NAME=VALUE``): recorded by the caller
    globals_set: dict[str, Any] = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()

    @property
    def profiles(self) -> list[str]:
        return ["default", *self.shapes]

    @property
    def extra_profiles(self) -> list[str]:
        """Every hidden-shape profile (``extra*`` and ``small_extra*``, in file order).

        Use ``extra_profiles_for(base)`` for the ones that go with one base profile."""
        return [p for p in self.shapes if p.startswith("extra") or p.startswith("small_extra")]

    def extra_profiles_for(self, base: str = "default") -> list[str]:
        """Extra (hidden-shape) profiles that go with ``base``: default -> extra*, small -> small_extra*.

        Any other base profile ``P`` gets ``P_extra*`` if the file defines them, else none.
        """
        prefix = "extra" if base == "default" else f"{base}_extra"
        return [p for p in self.shapes if p.startswith(prefix) and p[len(prefix) :].isdigit()]

    def load_module(self, profile: str = "default") -> types.ModuleType:
        """Execute the task file as a fresh module with ``profile``'s globals applied."""
        if profile != "default" and profile not in self.shapes:
            raise TaskError(f"{self.path}: no shape profile {profile!r} (has {self.profiles})")
        mod = exec_source(self.source, self.path, f"_harness_task_{self.name}")
        for k, v in self.shapes.get(profile, {}).items():
            setattr(mod, k, v)
        return mod

    def shape_globals(self, profile: str = "default") -> dict[str, Any]:
        """Numeric module globals (and tuples of numbers, e.g. KernelBench's ``input_shape``)."""
        mod = self.load_module(profile)
        return {k: v for k, v in vars(mod).items() if not k.startswith("_") and _is_shape_value(v)}

    def work(self, profile: str = "default") -> tuple[float | None, float | None]:
        """(FLOPs, bytes moved) at a profile, from the META formulas; None where not given."""
        env = {**self.shape_globals(profile), "math": math, "prod": math.prod}
        out = []
        for expr in (self.meta.flops, self.meta.bytes):
            out.append(float(eval(expr, {"__builtins__": {}}, env)) if expr else None)  # noqa: S307
        return out[0], out[1]


    # -- issue 26: a task's size, and its globals set from the command line ------------------
    def module_globals(self) -> dict[str, Any]:
        """Every name a top-level assignment of the file binds (``META``, ``SHAPES`` and private
        names left out) -> its literal value, or ``...`` where the value is an expression."""
        return module_globals(self.source)

    def globals_text(self) -> str:
        """Those globals as a reader sees them ("batch_size=4096, dim=393216"; a name bound to an
        expression bare), or "none": what an error about ``--set`` lists."""
        return _globals_text(self.module_globals())

    def with_globals(self, values: dict[str, Any]) -> Task:
        """This task with module-level globals overridden (``--set NAME=VALUE``): a line
        ``NAME = VALUE`` is inserted after each top-level assignment of NAME, so later globals
        computed from it follow, and every shape profile's own value of NAME is dropped (the
        value set wins everywhere). The source (and so ``sha256``) changes; ``globals_set``
        records the values. Raises TaskError for a NAME the file does not assign at top level."""
        if not values:
            return self
        known = module_globals(self.source)
        bad = [n for n in values if n not in known]
        if bad:
            raise TaskError(f"{self.path}: --set {bad[0]}: not a module-level global of the file; "
                            f"its globals: {_globals_text(known)}")
        tree = ast.parse(self.source, filename=str(self.path))
        after: dict[int, list[str]] = {}  # line number (1-based) -> assignments inserted after it
        for node in tree.body:
            for name in _assigned(node):
                if name in values:
                    after.setdefault(node.end_lineno or node.lineno, []).append(
                        f"{name} = {values[name]!r}  # set by --set")
        lines = self.source.splitlines(keepends=True)
        out: list[str] = []
        for i, line in enumerate(lines, start=1):
            out.append(line if line.endswith("\n") else line + "\n")
            out.extend(ln + "\n" for ln in after.get(i, []))
        shapes = {p: {k: v for k, v in o.items() if k not in values} for p, o in self.shapes.items()}
        return dataclasses.replace(self, source="".join(out), shapes=shapes,
                                   globals_set={**self.globals_set, **values})

    def data_size(self, profile: str = "default") -> DataSize | None:  # sandbox/intake/datasize.py
        """The bytes of one call's inputs, of its outputs and of the model's weights at
        ``profile``, computed on torch's meta device (nothing allocated, nothing run on a device;
        ``.cuda()`` / ``device=`` inside the file are kept on meta). None when the file's
        inputs cannot be made there; ``outputs`` None when only its forward cannot run there."""
        from sandbox.intake.datasize import data_size

        return data_size(self, profile)

    def size_check(self, config: Any) -> SizeCheck | None:
        """Whether judging this task under ``config`` fits this machine (``size_check``)."""
        from sandbox.intake.datasize import size_check

        return size_check(self, config)


def module_globals(source: str) -> dict[str, Any]:
    """Top-level assigned names of ``source`` (see ``Task.module_globals``)."""
    out: dict[str, Any] = {}
    for node in ast.parse(source).body:
        value = getattr(node, "value", None)
        for name in _assigned(node):
            if name.startswith("_") or name in ("META", "SHAPES"):
                continue
            try:
                out[name] = ast.literal_eval(value) if value is not None else ...
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                out[name] = ...
    return out


def _assigned(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return [node.target.id]
    return []


def _globals_text(known: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" if v is not ... else k for k, v in known.items()) or "none"


def _is_shape_value(v: Any) -> bool:
    if isinstance(v, (int, float)):
        return True
    return isinstance(v, tuple) and all(isinstance(x, (int, float)) for x in v)


def exec_source(source: str, path: Path | str, modname: str | None = None) -> types.ModuleType:
    """Run ``source`` as a new module named uniquely; ``path`` is used in tracebacks."""
    name = modname or f"_harness_mod_{next(_counter)}"
    name = f"{name}_{next(_counter)}"
    mod = types.ModuleType(name)
    mod.__file__ = str(path)
    sys.modules[name] = mod  # dataclasses / pickling inside the module need this
    code = compile(source, str(path), "exec")
    exec(code, mod.__dict__)  # noqa: S102
    return mod


def _literal(node: ast.AST, path: Path, what: str) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError as e:
        raise TaskError(f"{path}: {what} must be a literal dict (no expressions): {e}") from e


def load_task(path: str | Path) -> Task:
    """Read a task file without running it (metadata is parsed as literals)."""
    p = Path(path)
    if not p.is_file():
        raise TaskError(f"{p}: no such task file")
    source = p.read_text()
    try:
        tree = ast.parse(source, filename=str(p))
    except SyntaxError as e:
        raise TaskError(f"{p}:{e.lineno}: does not parse: {e.msg}") from e
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if n not in names]
    if missing:
        raise TaskError(
            f"{p}: not a KernelBench-format task: missing {', '.join(missing)} "
            "(a task defines class Model(nn.Module), get_inputs() and get_init_inputs())"
        )
    meta_d: dict[str, Any] | None = None
    shapes: dict[str, Any] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            tgt = node.targets[0].id
            if tgt == "META":
                meta_d = _literal(node.value, p, "META")
            elif tgt == "SHAPES":
                shapes = _literal(node.value, p, "SHAPES")
    meta = (
        OpMeta(**_check_meta(meta_d, p)) if meta_d is not None else OpMeta(category="kernelbench")
    )
    profiles: dict[str, dict[str, Any]] = {}
    for key, val in shapes.items():
        if key == "extra" or key.endswith("_extra"):
            vals = val if isinstance(val, list) else [val]
            for i, v in enumerate(vals):
                profiles[f"{key}{i}"] = dict(v)
        else:
            profiles[key] = dict(val)
    return Task(
        name=p.stem, path=p, source=source, meta=meta, shapes=profiles, kernelbench=meta_d is None
    )


def _check_meta(d: dict[str, Any], p: Path) -> dict[str, Any]:
    allowed = {f for f in OpMeta.__dataclass_fields__}
    unknown = set(d) - allowed
    if unknown:
        raise TaskError(
            f"{p}: META has unknown field(s) {sorted(unknown)}; allowed: {sorted(allowed)}"
        )
    d = dict(d)
    dt = d.get("dtype", "float32")
    d.setdefault("atol", DEFAULT_TOL.get(dt, 1e-4))
    d.setdefault("rtol", DEFAULT_TOL.get(dt, 1e-4))
    return d
