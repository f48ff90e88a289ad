"""A batch's output folder: ``results.jsonl`` and ``results.csv`` (one row per kernel, written
as each is judged) and ``verdicts/<id>.<key>.json`` (the full verdict).

A row's ``key`` is a hash of (id, candidate sha256, reference sha256, mode, device, profile, and
the rule set when it is not strict).
Opening a folder that holds rows keeps those whose key still matches a pair of the batch (the
kernel is skipped) and those of ids no longer in the batch; it drops rows whose kernel changed
since (they are judged again) and ``harness_error`` rows (nothing was judged). Both files are
then rewritten from the kept rows, so a run that was killed mid-line leaves no broken row.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from sandbox.contract import Verdict

INPUT_ERROR = "input_error"  # the candidate or its reference is unusable (never a verdict)
HARNESS_ERROR = "harness_error"  # the executor failed (not judged; retried on the next run)
SPEEDUP_FIELDS = ("value", "ci_low", "ci_high", "p", "significant")
FIELDS = (
    "id", "reference", "candidate", "status", "rule",
    *(f"speedup_{b}{'' if k == 'value' else '_' + k}" for b in ("eager", "compile") for k in SPEEDUP_FIELDS),
    "candidate_median_us", "message", "verdict_sha256", "verdict_file",
    "mode", "device", "profile", "candidate_sha256", "reference_sha256", "key",
)  # fmt: skip
MESSAGE_CHARS = 240


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def row_key(pid: str, cand_sha: str, ref_sha: str, mode: str, device: str, profile: str,
            rules: str = "strict") -> str:
    parts = [pid, cand_sha, ref_sha, mode, device, profile] + ([] if rules == "strict" else [rules])
    blob = json.dumps(parts, separators=(",", ":"))  # strict keys are those written before --rules
    return sha256_bytes(blob.encode())[:16]


TRACEBACK = "Traceback (most recent call last):"


def short(message: str) -> str:
    """The first non-empty line of a message, at most MESSAGE_CHARS characters. Where that line
    opens a Python traceback (a worker that failed to start: its log's tail), the traceback's last
    line, the exception, stands for it: session 32's one harness error read only "candidate worker
    failed to start: Traceback (most recent call last):"."""
    lines = [ln.strip() for ln in (message or "").splitlines() if ln.strip()]
    line = lines[0] if lines else ""
    if line.endswith(TRACEBACK):
        exc = next((ln for ln in reversed(lines[1:]) if not ln.startswith(("File ", "^", "~"))), "")
        line = f"{line[: -len(TRACEBACK)].rstrip()} {exc}".strip()
    return line if len(line) <= MESSAGE_CHARS else line[: MESSAGE_CHARS - 1] + "…"


def base_row(
    pid: str,
    reference: str,
    candidate: str,
    *,
    mode: str,
    device: str,
    profile: str,
    cand_sha: str,
    ref_sha: str,
    key: str,
) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(FIELDS)
    row.update(
        id=pid,
        reference=reference,
        candidate=candidate,
        mode=mode,
        device=device,
        profile=profile,
        candidate_sha256=cand_sha,
        reference_sha256=ref_sha,
        key=key,
    )
    return row


def fill_verdict(row: dict[str, Any], v: Verdict) -> None:
    row.update(status=v.status.value, rule=v.rule, message=short(v.message))
    for b in ("eager", "compile"):
        s = v.speedups.get(b)
        if s is not None:
            vals = (s.value, s.ci_low, s.ci_high, s.p_value, s.significant)
            for k, x in zip(SPEEDUP_FIELDS, vals, strict=True):
                row[f"speedup_{b}{'' if k == 'value' else '_' + k}"] = x
    t = v.timings.get("candidate")
    if t is not None and v.valid:
        row["candidate_median_us"] = t.median_us


def _safe(pid: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", pid).strip("_.")[:120] or "kernel"


def _csv_value(v: Any) -> Any:
    return "" if v is None else v


class BatchOutput:
    """The output folder of one batch (see module docstring)."""

    def __init__(self, out: str | Path):
        """Reads and writes nothing: ``kept`` reads earlier rows, ``open`` makes the folder."""
        self.dir = Path(out)
        self.jsonl = self.dir / "results.jsonl"
        self.csv = self.dir / "results.csv"
        self.rows: list[dict[str, Any]] = []
        self._fj = self._fc = None
        self._writer: csv.DictWriter | None = None

    def previous_rows(self) -> list[dict[str, Any]]:
        """Rows already in ``results.jsonl`` (a broken line, e.g. from a killed run, is left out)."""
        if not self.jsonl.is_file():
            return []
        out = []
        for line in self.jsonl.read_text(errors="replace").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and row.get("id") is not None and row.get("key"):
                out.append({f: row.get(f) for f in FIELDS})
        return out

    def open(self, keys: dict[str, str]) -> dict[str, dict[str, Any]]:
        """Keep earlier rows (``kept``) given the batch's ``id -> key``; make the folder and
        rewrite both files from them; return the kept rows of the batch by key (those kernels
        are skipped)."""
        done = self.kept(keys)
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "verdicts").mkdir(exist_ok=True)
        self._rewrite()
        return done

    def kept(self, keys: dict[str, str]) -> dict[str, dict[str, Any]]:
        """The earlier rows kept (see module docstring) given the batch's ``id -> key``, in
        ``self.rows``; the kept rows of the batch by key. Only reads: a batch learns what is left to
        judge before its task check, and writes nothing if the check refuses it."""
        kept = []
        for row in self.previous_rows():
            if row["status"] == HARNESS_ERROR:
                continue
            if row["id"] in keys and keys[row["id"]] != row["key"]:
                continue  # the kernel changed since: judge it again
            kept.append(row)
        last: dict[str, dict[str, Any]] = {}
        for row in kept:  # a repeated id keeps its last row
            last[row["id"]] = row
        kept = [r for r in kept if last[r["id"]] is r]
        self.rows = kept
        return {r["key"]: r for r in kept if r["id"] in keys}

    def _rewrite(self) -> None:
        tmp_j, tmp_c = self.jsonl.with_suffix(".jsonl.tmp"), self.csv.with_suffix(".csv.tmp")
        with open(tmp_j, "w") as fj:
            for row in self.rows:
                fj.write(json.dumps(row) + "\n")
        with open(tmp_c, "w", newline="") as fc:
            w = csv.DictWriter(fc, fieldnames=FIELDS)
            w.writeheader()
            for row in self.rows:
                w.writerow({k: _csv_value(v) for k, v in row.items()})
        os.replace(tmp_j, self.jsonl)
        os.replace(tmp_c, self.csv)
        self._fj = open(self.jsonl, "a")  # noqa: SIM115 - held open for incremental rows
        self._fc = open(self.csv, "a", newline="")  # noqa: SIM115
        self._writer = csv.DictWriter(self._fc, fieldnames=FIELDS)

    def write_verdict(self, pid: str, key: str, v: Verdict) -> tuple[str, str]:
        """Write the full verdict; returns (path relative to the folder, sha256 of the file)."""
        rel = f"verdicts/{_safe(pid)}.{key[:12]}.json"
        data = v.to_json(indent=2).encode()
        tmp = self.dir / (rel + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, self.dir / rel)
        return rel, sha256_bytes(data)

    def read_verdict(self, row: dict[str, Any]) -> Verdict | None:
        rel = row.get("verdict_file")
        if not rel:
            return None
        try:
            return Verdict.from_json((self.dir / rel).read_text())
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def append(self, row: dict[str, Any]) -> None:
        assert self._fj is not None and self._fc is not None and self._writer is not None
        self.rows.append(row)
        self._fj.write(json.dumps(row) + "\n")
        self._fj.flush()
        self._writer.writerow({k: _csv_value(v) for k, v in row.items()})
        self._fc.flush()

    def close(self) -> None:
        for f in (self._fj, self._fc):
            if f is not None:
                f.close()
        self._fj = self._fc = None
