"""Seed kernels and op parts: what some methods start from.

**Seed kernels.** EvoEngineer's code improves a working CUDA kernel ("BASELINE CODE"), FunSearch
registers an initial program on every island, and AI CUDA Engineer skips translation when the
op already has a CUDA kernel. An op's seed kernel is a ``ModelNew`` source like any candidate
(the runner judges it before the method starts). A seed folder holds ``<language>/<op>.py``
(``cuda`` for ``--device cuda``, ``cpp`` for the CPU path) or ``<op>.py`` for every language;
``seed_<op>.py`` also works and is how the shipped ones are named (a file ``<op>.py`` under
``reference_ops/`` would be found by lookups of the op's task file).
The suite ships seeds for a few level-1 ops (``reference_ops/seeds/``, listed in
docs/methods.md); ``harness run --seed-kernels DIR`` uses another folder, ``none`` none.

**Parts.** A level-2 (fused) op is made of level-1 ops: ``reference_ops/parts.toml`` maps
``gemm_bias_relu = ["matmul_rect", "relu"]``. AI CUDA Engineer's composition stage fuses the
best kernels found for the parts.
"""

from __future__ import annotations

import ast
import hashlib
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from harness.suite.suites import SuiteError, ops_root

SUITE = "suite"  # --seed-kernels suite: the shipped seeds
NONE = "none"  # --seed-kernels none: no seed kernels


@dataclass(frozen=True)
class SeedKernel:
    op: str
    language: str  # "cuda" | "cpp"
    path: Path
    source: str
    name: str
    thought: str  # the seed's stated approach (its module docstring's first line)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()


def shipped_seeds_dir() -> Path:
    return ops_root() / "seeds"


def seeds_dir(spec: str | Path | None) -> Path | None:
    """The folder ``--seed-kernels`` names: ``suite`` (the shipped seeds), ``none``/None (no
    seeds), or a path. A path that is not a folder is an error naming the option."""
    if spec is None or str(spec).strip().lower() in (NONE, ""):
        return None
    if str(spec).strip().lower() == SUITE:
        return shipped_seeds_dir()
    p = Path(spec).expanduser()
    if not p.is_dir():
        raise SuiteError(
            f"--seed-kernels {spec}: not a folder; give a folder of <language>/<op>.py seed "
            f"kernels, '{SUITE}' for the shipped ones, or '{NONE}'"
        )
    return p


def seed_path(op: str, language: str, root: Path) -> Path | None:
    for folder in (root / language, root):
        for name in (f"{op}.py", f"seed_{op}.py"):
            if (folder / name).is_file():
                return folder / name
    return None


def load_seed(op: str, language: str, root: Path | None) -> SeedKernel | None:
    """The seed kernel of ``op`` for ``language`` under ``root``, or None."""
    if root is None:
        return None
    p = seed_path(op, language, root)
    if p is None:
        return None
    source = p.read_text()
    if "class ModelNew" not in source:
        raise SuiteError(f"{p}: a seed kernel must define class ModelNew (like any candidate)")
    return SeedKernel(op=op, language=language, path=p, source=source, name=f"seed_{op}",
                      thought=_first_doc_line(source) or "Baseline")


def seeded_ops(language: str, root: Path | None = None) -> list[str]:
    root = root if root is not None else shipped_seeds_dir()
    found = {p.stem for p in (root / language).glob("*.py")} | {p.stem for p in root.glob("*.py")}
    return sorted({n.removeprefix("seed_") for n in found if not n.startswith("_")})


def _first_doc_line(source: str) -> str:
    try:
        doc = ast.get_docstring(ast.parse(source)) or ""
    except SyntaxError:
        return ""
    return doc.strip().splitlines()[0].strip() if doc.strip() else ""


@lru_cache(maxsize=4)
def _parts(root: Path) -> dict[str, tuple[str, ...]]:
    path = root / "parts.toml"
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise SuiteError(f"{path}: not valid TOML: {e}") from e
    out: dict[str, tuple[str, ...]] = {}
    for op, parts in data.items():
        if not isinstance(parts, list) or not all(isinstance(x, str) for x in parts):
            raise SuiteError(f'{path}: {op} must be a list of op names, e.g. {op} = ["relu"]')
        out[op] = tuple(parts)
    return out


def parts_of(op: str, root: Path | None = None) -> list[str]:
    """The level-1 ops a fused op is made of ([] for an op without parts)."""
    return list(_parts(root or ops_root()).get(op, ()))
