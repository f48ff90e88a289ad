"""AI CUDA Engineer's innovation archive: solved ops, retrieved by lexical similarity.

Each entry is an op's functional PyTorch code (the convert stage's output, or the reference
source) with the best valid kernel found for it. ``similar(code, k)`` ranks entries by the
cosine similarity of TF-IDF vectors over code tokens (identifiers split at ``_`` and
camelCase, lowercased; numbers and one-letter names dropped). Everything is local: no
embedding model, no download. The archive is thread-safe (ops may run in parallel) and can
be seeded from earlier runs in a results store (``load_from_store``) and kept in a JSON file
that persists across runs (``load_file`` / ``save_file``; ``harness run --archive PATH``).
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import threading
from collections import Counter
from dataclasses import asdict, dataclass, fields
from pathlib import Path

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# tokens every candidate file shares: they carry no signal about what the op computes
_STOP = {
    "self",
    "import",
    "from",
    "return",
    "def",
    "class",
    "torch",
    "nn",
    "module",
    "model",
    "modelnew",
    "forward",
    "init",
    "super",
    "none",
    "true",
    "false",
    "the",
    "and",
    "for",
    "in",
    "if",
    "else",
    "as",
    "is",
    "not",
    "or",
    "with",
    "python",
}


def tokenize(code: str) -> list[str]:
    out = []
    for ident in _IDENT.findall(code):
        for part in ident.split("_"):
            for tok in _CAMEL.findall(part) or [part]:
                tok = tok.lower()
                if len(tok) > 1 and not tok.isdigit() and tok not in _STOP:
                    out.append(tok)
    return out


@dataclass(frozen=True)
class ArchiveEntry:
    op: str
    functional_code: str  # what similarity is computed over
    kernel: str  # best valid kernel source
    speedup: float | None = None  # vs PyTorch eager, feedback mode
    runtime_us: float | None = None
    source: str = "run"  # "run" (this run) | "store:<run_id>" | "file"
    name: str = ""  # the kernel's name and stated approach, shown with it in prompts
    thought: str = ""


class InnovationArchive:
    def __init__(self, entries: list[ArchiveEntry] | None = None):
        self._lock = threading.Lock()
        self._entries: dict[str, ArchiveEntry] = {}
        for e in entries or []:
            self.add(e)

    def add(self, entry: ArchiveEntry) -> None:
        """Keep one entry per op: the faster one (higher speedup, then lower runtime)."""
        with self._lock:
            old = self._entries.get(entry.op)
            if old is None or _better(entry, old):
                self._entries[entry.op] = entry

    def get(self, op: str) -> ArchiveEntry | None:
        with self._lock:
            return self._entries.get(op)

    def entries(self) -> list[ArchiveEntry]:
        with self._lock:
            return sorted(self._entries.values(), key=lambda e: e.op)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def similar(
        self, code: str, k: int = 5, exclude_op: str | None = None
    ) -> list[tuple[ArchiveEntry, float]]:
        """The ``k`` entries most similar to ``code`` (cosine of TF-IDF), best first; ties by op name."""
        entries = [e for e in self.entries() if e.op != exclude_op]
        if not entries or k <= 0:
            return []
        docs = [Counter(tokenize(e.functional_code)) for e in entries]
        query = Counter(tokenize(code))
        n = len(docs) + 1
        df: Counter = Counter()
        for d in [*docs, query]:
            df.update(d.keys())
        idf = {t: math.log((1 + n) / (1 + c)) + 1.0 for t, c in df.items()}
        qv = _weights(query, idf)
        scored = [(e, _cosine(qv, _weights(d, idf))) for e, d in zip(entries, docs, strict=True)]
        scored.sort(key=lambda es: (-es[1], es[0].op))
        return scored[:k]


def _better(a: ArchiveEntry, b: ArchiveEntry) -> bool:
    sa = a.speedup if a.speedup is not None else -1.0
    sb = b.speedup if b.speedup is not None else -1.0
    if sa != sb:
        return sa > sb
    ra = a.runtime_us if a.runtime_us is not None else math.inf
    rb = b.runtime_us if b.runtime_us is not None else math.inf
    return ra < rb


def _weights(tf: Counter, idf: dict[str, float]) -> dict[str, float]:
    return {t: (1.0 + math.log(c)) * idf[t] for t, c in tf.items()}


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if not a or not b:
        return 0.0
    dot = sum(w * b.get(t, 0.0) for t, w in a.items())
    na = math.sqrt(sum(w * w for w in a.values()))
    nb = math.sqrt(sum(w * w for w in b.values()))
    return dot / (na * nb) if na and nb else 0.0


def load_from_store(path: str | Path, *, exclude_run: str | None = None) -> list[ArchiveEntry]:
    """Best valid feedback-mode kernel per op from a results store (a ``.sqlite`` file or the
    results folder holding ``harness.sqlite``), opened read only. Verdicts judged with torch
    ops allowed (the convert stage) are never kernels; the op's valid convert-stage source,
    when there is one, becomes the entry's functional code, else the kernel itself is."""
    from harness.store import Results

    repo = Results.open_read_only(path)
    try:
        kernels = repo.valid_kernels()
    finally:
        repo.close()
    best: dict[str, ArchiveEntry] = {}
    functional: dict[str, str] = {}
    for k in kernels:
        if exclude_run is not None and k.run_id == exclude_run:
            continue
        if k.operator == "seed":  # a shipped seed kernel, not a kernel the method found
            continue
        if k.allow_torch_ops or k.operator == "convert":
            functional.setdefault(k.op, k.source)
            continue
        e = ArchiveEntry(
            op=k.op,
            functional_code=k.source,
            kernel=k.source,
            speedup=k.speedup_eager,
            runtime_us=k.runtime_us,
            source=f"store:{k.run_id}",
        )
        if k.op not in best or _better(e, best[k.op]):
            best[k.op] = e
    return [
        ArchiveEntry(**{**e.__dict__, "functional_code": functional.get(op, e.kernel)})
        for op, e in sorted(best.items())
    ]


ARCHIVE_VERSION = 1


class ArchiveFileError(ValueError):
    """An --archive file that cannot be read; the message names the file and the fix."""


def load_file(path: str | Path) -> list[ArchiveEntry]:
    """Entries of an archive file (none when the file does not exist yet)."""
    p = Path(path)
    if not p.exists():
        return []
    try:
        data = json.loads(p.read_text())
        if data.get("version") != ARCHIVE_VERSION:
            raise ValueError(f"version {data.get('version')!r}, expected {ARCHIVE_VERSION}")
        known = {f.name for f in fields(ArchiveEntry)}
        return [ArchiveEntry(**{k: v for k, v in e.items() if k in known}) for e in data["entries"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise ArchiveFileError(
            f"--archive {p}: not an innovation archive ({e}); give a new path or a file this "
            "harness wrote"
        ) from e


_SAVE_LOCK = threading.Lock()


def save_file(path: str | Path, archive: InnovationArchive) -> None:
    """Write the archive atomically (a temporary file renamed over the old one)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    data = {"version": ARCHIVE_VERSION, "entries": [asdict(e) for e in archive.entries()]}
    with _SAVE_LOCK:
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=p.name, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, p)
