"""Issue 25, class 5: state a candidate writes while it is judged must not survive the judgement.

A judgement's build tier is a private working copy (sandbox/build/tiers.py): read-only to its judging
workers in the sealed and warm-apart orders, writable in the late order, deleted when the
judgement ends; only the build worker's new build entries are kept. Each working copy has a
quota (``KH_BUILD_TIER_QUOTA``): above it the verdict is ``rejected sandbox.resources``.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from sandbox import rules
from sandbox.build import buildcache, buildphase, tiers
from sandbox.evaluate import EvalConfig, evaluate
from sandbox.intake.task import load_task
from sandbox.verdict import Mode, Status

HERE = Path(__file__).resolve().parent
RELU = load_task(HERE.parent / "adversarial" / "tasks" / "relu.py")
MEMO = (HERE / "candidates" / "state_memo.py").read_text()


def _cfg(cache: Path, name: str = "state_memo.py") -> EvalConfig:
    # feedback mode at a fixed seed: a second judgement of the same source gets the same inputs
    return EvalConfig(device="cpu", mode=Mode.FEEDBACK, profile="small", seed=1234, timeout_s=600.0,
                      max_timing_s=0.3, feedback_timing_s=0.3, target_ci=0.05, baselines=("eager",),
                      allow_torch_ops=True, build_dir=str(cache), candidate_name=name)


@pytest.fixture
def closed_tiers(monkeypatch) -> list[tuple[str, list[str]]]:
    """(path, entries) of every working copy as it is deleted: what the candidate wrote there."""
    seen: list[tuple[str, list[str]]] = []
    close = tiers.WorkTier.close

    def record(self: tiers.WorkTier) -> None:
        names = []
        for top, dirs, files in os.walk(self.path):
            names += [os.path.relpath(os.path.join(top, n), self.path) for n in files + dirs]
        seen.append((self.path, sorted(names)))
        close(self)

    monkeypatch.setattr(tiers.WorkTier, "close", record)
    return seen


def test_a_memo_written_in_the_late_order_is_gone_for_the_next_judgement(tmp_path, closed_tiers):
    """The attack of the issue and its variants (tests/evaluator/candidates/state_memo.py): a
    candidate that fails where its tier is read-only reaches the late order and memoises its
    judged outputs in nine ways; the second judgement of the same source finds none of them."""
    src = MEMO.replace("__RUN__", uuid.uuid4().hex[:12])
    first = evaluate(RELU, src, _cfg(tmp_path))
    assert first.status is Status.VALID, (first.status, first.rule, first.message, first.logs[-1500:])
    ba = first.evidence["build_apart"]
    assert ba["order"] == "late", ba  # refused by the sealed and the warm-apart orders' judging workers
    assert [f.split(":")[0] for f in ba["sealed_failures"]] == ["sealed", "warm-apart"], ba
    # it did write: the late order's judging worker had its working copy writable ...
    path, written = closed_tiers[-1]
    for variant in ("memo-", "f" * 64 + "/memo-", "triton/memo-", "torch_extensions/memo-", "symlink-"):
        assert any(n.startswith(variant) for n in written), (variant, written)
    assert not any(n.startswith("link-") for n in written)  # a hard link across mounts: EXDEV
    # ... and none of it is on the host any more, nor in the tier that later judgements copy
    assert not os.path.exists(path)
    own = buildcache.layout(str(tmp_path), src)[1]
    assert not os.path.isdir(own) or os.listdir(own) == [], os.listdir(own)
    second = evaluate(RELU, src, _cfg(tmp_path))
    # a memo that survived raises in forward, naming where it was found (runtime_error)
    assert second.status is Status.VALID, (second.status, second.rule, second.message, second.logs[-1500:])
    assert second.evidence["build_apart"]["order"] == "late"


GROW_LATE = '''
import ctypes, os, time
import torch
import torch.nn as nn

TIER = os.path.dirname(os.environ["TORCH_EXTENSIONS_DIR"])
_libc = ctypes.CDLL(None, use_errno=True)


class ModelNew(nn.Module):
    def forward(self, x):
        fd = _libc.open(os.path.join(TIER, "grow").encode(), 0o1101, 0o644)  # O_WRONLY|O_CREAT|O_TRUNC
        chunk = b"x" * (1 << 20)
        for _ in range(64):  # 64 MiB, a MiB at a time: the watchdog stops it on the way
            _libc.write(fd, chunk, len(chunk))
            time.sleep(0.02)
        _libc.close(fd)
        time.sleep(2.0)
        return torch.relu(x)
'''

GROW_AT_IMPORT = '''
# load_inline: named, so that a build worker imports this source before it is judged
import ctypes, os
import torch
import torch.nn as nn

_libc = ctypes.CDLL(None, use_errno=True)
_fd = _libc.open(os.path.join(os.path.dirname(os.environ["TORCH_EXTENSIONS_DIR"]), "sparse").encode(),
                 0o1102, 0o644)  # O_RDWR|O_CREAT|O_TRUNC
_libc.ftruncate(_fd, ctypes.c_long(64 << 20))  # 64 MiB apparent size, no block written
_libc.close(_fd)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''


@pytest.mark.parametrize("case", ["late-order judging worker", "build worker at import"])
def test_a_build_tier_over_its_quota_is_rejected_and_not_kept(case, tmp_path, monkeypatch, closed_tiers):
    monkeypatch.setenv("KH_BUILD_TIER_QUOTA", str(8 << 20))
    if case.startswith("late"):
        monkeypatch.setattr(buildphase, "plan", lambda source, device: ("late", "forced by the test"))
        src = GROW_LATE
    else:
        src = GROW_AT_IMPORT
    v = evaluate(RELU, src, _cfg(tmp_path, name="grow.py"))
    assert (v.status, v.rule) == (Status.REJECTED, rules.RESOURCES), (v.status, v.rule, v.message)
    assert "build tier quota" in v.message and str(8 << 20) in v.message, v.message
    assert closed_tiers and not os.path.exists(closed_tiers[-1][0])  # the working copy is gone
    own = buildcache.layout(str(tmp_path), src)[1]
    assert tiers.tree_bytes(own)[0] == 0  # nothing of it kept
