"""What a batch judges: (reference, candidate) pairs read from one of three inputs.

* a KernelBench-style tree of generations: ``level_N/problem_K*.py``, ``level_N/K_Name.py`` or
  ``level_N/K_Name/**/*.py`` (``levelN`` works too). The reference of level N, problem K is
  ``K_*.py`` in ``levelN/`` of a KernelBench checkout (``--kernelbench DIR``); without one it
  comes from our suite: the op named ``Name`` when there is one, else the K-th op of suite
  ``levelN`` in ``reference_ops/suites.toml`` (the order ``harness suite list --suite levelN``
  shows);
* a folder of ``ModelNew`` files for one reference (``--reference FILE``);
* a JSONL manifest: ``{"id": ..., "reference": PATH, "candidate": PATH}`` per line, optional
  ``mode`` (feedback | final) and ``device``; paths relative to the manifest's folder; a
  reference may also be an op name of our suite.

Unusable arguments raise ``BatchInputError`` (the CLI exits 2). A pair that cannot be paired
(no reference for its problem) carries ``error`` and becomes an ``input_error`` row.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

LEVEL_DIR = re.compile(r"^level_?(\d+)$", re.IGNORECASE)
PROBLEM_FILE = re.compile(r"^problem_?(\d+)(?:[^0-9].*)?\.py$", re.IGNORECASE)
NUMBERED = re.compile(r"^(\d+)(?:_(.*?))?(?:\.py)?$")  # K_Name.py (file) or K_Name (folder)
MANIFEST_FIELDS = (
    '{"id": "...", "reference": "PATH", "candidate": "PATH"} (optional "mode", "device")'
)
MODES = ("feedback", "final")


class BatchInputError(ValueError):
    """Unusable arguments: the message names the file (line, field) and the fix."""


@dataclass(frozen=True)
class Pair:
    id: str
    candidate: Path
    reference: Path | None
    mode: str | None = None  # None: the command's --mode
    device: str | None = None  # None: the command's --device
    error: str | None = None  # why this pair has no reference (an input_error row)


def _natural(p: Path) -> list:
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", p.as_posix())]


def _py_files(folder: Path) -> list[Path]:
    return sorted(
        (p for p in folder.rglob("*.py")
         if p.is_file() and p.name != "__init__.py" and "__pycache__" not in p.parts),
        key=_natural,
    )  # fmt: skip


# -- references ---------------------------------------------------------------------------------
class KernelBenchRefs:
    """``level -> problem number -> file`` of a KernelBench checkout."""

    def __init__(self, root: Path):
        root = Path(root).expanduser()
        if not root.is_dir():
            raise BatchInputError(
                f"--kernelbench {root}: no such folder (give a KernelBench checkout)"
            )
        self.root = root
        self.levels: dict[int, dict[int, Path]] = {}
        if LEVEL_DIR.match(root.name):  # DIR is one level folder itself
            dirs = [root]
        else:
            base = root / "KernelBench" if (root / "KernelBench").is_dir() else root
            dirs = sorted(d for d in base.iterdir() if d.is_dir() and LEVEL_DIR.match(d.name))
        for d in dirs:
            probs: dict[int, Path] = {}
            for f in sorted(d.glob("*.py"), key=_natural):
                n = NUMBERED.match(f.name)
                if n:
                    probs.setdefault(int(n.group(1)), f)
            self.levels[int(LEVEL_DIR.match(d.name).group(1))] = probs  # type: ignore[union-attr]
        if not self.levels:
            raise BatchInputError(
                f"--kernelbench {root}: no KernelBench/levelN folders of N_Name.py tasks found "
                "(give the checkout's root, e.g. --kernelbench ~/KernelBench)"
            )

    def find(self, level: int, problem: int, name: str | None) -> tuple[Path | None, str | None]:
        probs = self.levels.get(level)
        if probs is None:
            return None, f"{self.root} has no level{level} folder (levels: {sorted(self.levels)})"
        if problem not in probs:
            return None, f"{self.root}: level{level} has no problem {problem} ({problem}_*.py)"
        return probs[problem], None


class SuiteRefs:
    """References from our suite (``reference_ops/``): by op name, else by position in the
    suite ``levelN`` of ``suites.toml``."""

    def __init__(self) -> None:
        from harness.suite.suites import op_paths

        self.ops = {k.lower(): v for k, v in op_paths().items()}
        self._levels: dict[int, list[Path] | None] = {}

    def _level(self, level: int) -> list[Path] | None:
        if level not in self._levels:
            from harness.suite.suites import SuiteError, resolve_paths

            try:
                self._levels[level] = resolve_paths(f"level{level}")
            except SuiteError:
                self._levels[level] = None
        return self._levels[level]

    def find(self, level: int, problem: int, name: str | None) -> tuple[Path | None, str | None]:
        if name and name.lower().strip("_") in self.ops:
            return self.ops[name.lower().strip("_")], None
        paths = self._level(level)
        if paths is None:
            return None, (
                f"our suite has no level{level} (reference_ops/suites.toml); give "
                "--kernelbench DIR for KernelBench references"
            )
        if not 1 <= problem <= len(paths):
            return None, (
                f"suite level{level} has {len(paths)} ops, no problem {problem}; give "
                "--kernelbench DIR for KernelBench numbering"
            )
        return paths[problem - 1], None


# -- the three inputs ---------------------------------------------------------------------------
def tree_pairs(root: Path, refs: KernelBenchRefs | SuiteRefs) -> tuple[list[Pair], list[Path]]:
    """Pairs of a generations tree, and the .py files that fit none of its layouts (ignored)."""
    root = Path(root)
    m = LEVEL_DIR.match(root.name)
    levels = [(int(m.group(1)), root)] if m else []
    if not levels:
        levels = sorted(
            (
                (int(mm.group(1)), d)
                for d in root.iterdir()
                if d.is_dir() and (mm := LEVEL_DIR.match(d.name))
            ),
            key=lambda t: t[0],
        )
    if not levels:
        raise BatchInputError(
            f"{root}: no level_N folders; a generations tree holds level_N/problem_K*.py or "
            "level_N/K_Name/*.py files (or pass --reference FILE for a folder of candidates)"
        )
    pairs: list[Pair] = []
    ignored: list[Path] = []
    base = root.parent if m else root
    for level, d in levels:
        for f in _py_files(d):
            rel = f.relative_to(d)
            top = rel.parts[0]
            k = name = None
            if len(rel.parts) == 1:
                pm = PROBLEM_FILE.match(top) or NUMBERED.match(top)
                if pm:
                    k, name = int(pm.group(1)), (pm.group(2) if pm.re is NUMBERED else None)
            else:
                nm = NUMBERED.match(top) or re.match(r"^problem_?(\d+)()$", top, re.IGNORECASE)
                if nm:
                    k, name = int(nm.group(1)), nm.group(2) or None
            if k is None:
                ignored.append(f)
                continue
            ref, err = refs.find(level, k, name)
            pid = f.relative_to(base).with_suffix("").as_posix()
            pairs.append(
                Pair(
                    pid, f, ref, error=err and f"no reference for level {level} problem {k}: {err}"
                )
            )
    if not pairs:
        raise BatchInputError(
            f"{root}: no candidate files in the level folders (expected level_N/problem_K*.py, "
            "level_N/K_Name.py or level_N/K_Name/*.py)"
        )
    return pairs, ignored


def folder_pairs(folder: Path, reference: Path) -> list[Pair]:
    """Every .py file under ``folder`` (recursively) against one reference."""
    files = [f for f in _py_files(folder) if f.resolve() != Path(reference).resolve()]
    if not files:
        raise BatchInputError(f"{folder}: no .py candidate files (each defines class ModelNew)")
    return [
        Pair(f.relative_to(folder).with_suffix("").as_posix(), f, Path(reference)) for f in files
    ]


def _manifest_ref(value: str, base: Path) -> Path:
    p = Path(value).expanduser()
    p = p if p.is_absolute() else base / p
    if not p.exists() and "/" not in value and not value.endswith(".py"):
        from harness.suite.suites import op_paths

        ops = op_paths()
        if value in ops:
            return ops[value]
    return p


def manifest_pairs(path: Path) -> list[Pair]:
    """Pairs of a JSONL manifest; every malformed line is a ``BatchInputError``."""
    try:
        lines = Path(path).read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise BatchInputError(f"{path}: cannot read the manifest: {e}") from e
    base = Path(path).parent
    pairs: list[Pair] = []
    seen: dict[str, int] = {}
    for no, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path}:{no}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise BatchInputError(
                f"{where}: not JSON ({e.msg} at column {e.colno}); "
                f"each line is one object: {MANIFEST_FIELDS}"
            ) from e
        if not isinstance(row, dict):
            raise BatchInputError(
                f"{where}: a {type(row).__name__}, not an object; each line is {MANIFEST_FIELDS}"
            )
        for field in ("reference", "candidate"):
            if not isinstance(row.get(field), str) or not row[field].strip():
                what = "missing" if field not in row else "not a non-empty string"
                raise BatchInputError(
                    f'{where}: field "{field}" {what}; each line is {MANIFEST_FIELDS}'
                )
        for field, ok in (("mode", MODES), ("device", None)):
            v = row.get(field)
            if v is not None and (
                not isinstance(v, str)
                or (ok and v not in ok)
                or (field == "device" and not re.fullmatch(r"cpu|cuda(:\d+)?", v))
            ):
                allowed = " | ".join(ok) if ok else "cpu | cuda | cuda:N"
                raise BatchInputError(
                    f'{where}: field "{field}" is {v!r}; use {allowed} (or leave it out)'
                )
        cand = Path(row["candidate"]).expanduser()
        cand = cand if cand.is_absolute() else base / cand
        rid = row.get("id")
        if rid is None:
            rid = Path(row["candidate"]).with_suffix("").as_posix()
        if not isinstance(rid, (str, int)) or isinstance(rid, bool) or not str(rid).strip():
            raise BatchInputError(f'{where}: field "id" is {rid!r}; use a non-empty string')
        rid = str(rid)
        if rid in seen:
            raise BatchInputError(
                f'{where}: field "id" {rid!r} is already used on line {seen[rid]}; ids must be unique'
            )
        seen[rid] = no
        pairs.append(
            Pair(
                rid, cand, _manifest_ref(row["reference"], base), row.get("mode"), row.get("device")
            )
        )
    if not pairs:
        raise BatchInputError(
            f"{path}: empty manifest; write one object per line: {MANIFEST_FIELDS}"
        )
    return pairs


def discover(
    source: Path, *, reference: Path | None = None, kernelbench: Path | None = None
) -> tuple[str, list[Pair], list[Path]]:
    """(kind, pairs, ignored files) for ``harness eval-batch SOURCE``: a ``.jsonl`` manifest,
    a folder of candidates with ``reference``, or a generations tree."""
    source = Path(source).expanduser()
    if source.is_file():
        if source.suffix == ".py":
            raise BatchInputError(
                f"{source}: one candidate file; judge it with `harness eval REFERENCE {source}`, "
                "or give a folder of candidates with --reference FILE"
            )
        if reference is not None or kernelbench is not None:
            raise BatchInputError(
                f"{source}: a manifest names its references; drop --reference/--kernelbench"
            )
        return "manifest", manifest_pairs(source), []
    if not source.is_dir():
        raise BatchInputError(
            f"{source}: no such folder or manifest (give a generations tree, a "
            "folder of candidates with --reference FILE, or a .jsonl manifest)"
        )
    if reference is not None:
        if kernelbench is not None:
            raise BatchInputError(
                "give either --reference FILE (one op) or --kernelbench DIR (a tree), not both"
            )
        if not Path(reference).is_file():
            raise BatchInputError(f"--reference {reference}: no such task file")
        return "folder", folder_pairs(source, Path(reference)), []
    refs = KernelBenchRefs(kernelbench) if kernelbench is not None else SuiteRefs()
    pairs, ignored = tree_pairs(source, refs)
    return "tree", pairs, ignored
