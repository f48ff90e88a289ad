"""What a Ray node judges with, checked against the driver before its verdict is used.

A Ray cluster's nodes are separate machines (or, in CI, separate raylets on one host), each with
its own checkout, Python environment and GPUs. A verdict from a node whose judge differs from the
driver's is not comparable with the others in the run, so every build and judge task returns its
node's identity (``NodeIdentity``) and the driver refuses a node whose judging code or torch
differs from its own (``check``), naming the node, what differs and the fix. A run whose judge
nodes have different GPU models is refused too: one run's timings are of one GPU model
(docs/performance.md, "Ray: multi-node setup").

The judging code is every file of ``sandbox/`` (the evaluator, its rules, workers and native
helpers), hashed by relative path and content: the same commit at any path gives the same hash,
and a node with a local edit is caught whether or not it is a git checkout.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

SANDBOX = Path(__file__).resolve().parents[2] / "sandbox"
_CODE_SUFFIXES = (".py", ".cpp", ".cu", ".h", ".c")


class NodeMismatch(ValueError):
    """A Ray node judges with other code, another torch, or another GPU model than the run."""


@dataclass(frozen=True)
class NodeIdentity:
    node_id: str  # Ray's node id
    host: str
    judge_code: str  # sha256 of sandbox/ (judge_code_hash)
    torch: str
    gpu: str | None  # the first visible GPU's name (the one a judge task is given), None on CPU

    def short(self) -> str:
        return f"{self.host}/{self.node_id[:8]}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def judge_code_hash(root: Path = SANDBOX) -> str:
    """sha256 over (relative path, bytes) of the judge's source files under ``root``."""
    h = hashlib.sha256()
    for p in sorted(x for x in root.rglob("*") if x.is_file() and x.suffix in _CODE_SUFFIXES
                    and "__pycache__" not in x.parts):
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(p.read_bytes() + b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def _code() -> str:
    return judge_code_hash()


@functools.lru_cache(maxsize=4)
def identity(node_id: str) -> NodeIdentity:
    """This process's node (called inside a Ray task; once a process). Leaves CUDA untouched: the GPU's name is
    ``nvidia-smi``'s (the judge's parent process stays CUDA-free, sandbox/machine.py)."""
    from sandbox.contract import fingerprint

    m = fingerprint(torch=True, gpus=False, smi=True)
    return NodeIdentity(node_id=node_id, host=m.hostname, judge_code=_code(), torch=m.torch or "missing",
                        gpu=m.gpu)


def driver_identity() -> NodeIdentity:
    """The driver's side of the comparison (its GPU is not compared: it need not have one)."""
    from sandbox.contract import fingerprint

    m = fingerprint(torch=True, gpus=False, smi=False)
    return NodeIdentity(node_id="driver", host=m.hostname, judge_code=_code(), torch=m.torch or "missing",
                        gpu=None)


FIX = ("check out the driver's commit on that node (the same files under sandbox/), install the same "
       "environment there (bash scripts/setup.sh), and restart its raylet")


def check(driver: NodeIdentity, node: NodeIdentity, judge_gpus: dict[str, str] | None = None) -> None:
    """Raise ``NodeMismatch`` when ``node`` cannot judge for this run. ``judge_gpus`` (GPU model
    -> the first node that judged on it; given for a GPU judgement) is updated, and a second
    model in one run is refused."""
    if node.judge_code != driver.judge_code:
        raise NodeMismatch(
            f"Ray node {node.short()} judges with other code than the driver on {driver.host} "
            f"(sandbox/ sha256 {node.judge_code[:12]} there, {driver.judge_code[:12]} here); {FIX}")
    if node.torch != driver.torch:
        raise NodeMismatch(
            f"Ray node {node.short()} has torch {node.torch}, the driver on {driver.host} {driver.torch}; "
            f"verdicts of one run come from one torch; {FIX}")
    if judge_gpus is not None and node.gpu is not None:
        judge_gpus.setdefault(node.gpu, node.short())
        if len(judge_gpus) > 1:
            seen = ", ".join(f"{g} ({n})" for g, n in judge_gpus.items())
            raise NodeMismatch(
                f"Ray judge tasks ran on more than one GPU model in one run: {seen}; one run's timings "
                "are of one GPU model: give the run a cluster of one model (ray start --resources, or "
                "separate clusters per model)")
