"""The arena's sizes are remembered per op (sandbox/worker/arenahint.py): the next judgement of the op
maps its regions at their full size before it waits for the device, instead of growing and
remapping them (and on CUDA pinning them again) while the device is held."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.check import refcache
from sandbox.evaluate import evaluate
from sandbox.intake.task import load_task
from sandbox.verdict import Mode, Status
from sandbox.worker import arenahint
from sandbox.worker.arena import Arena
from tests.adversarial.redteam import TASKS, Case, config, describe

MiB = 1 << 20


def test_sizes_are_kept_as_the_largest_seen_and_applied_to_a_new_arena(tmp_path: Path):
    entry = str(tmp_path / "reference" / "abc")
    a = Arena()
    a.ensure("out", 6 * MiB)
    arenahint.remember(a, entry)
    b = Arena()
    b.ensure("ref_in", 4 * MiB)  # a later judgement that needed less output room, more input room
    arenahint.remember(b, entry)
    assert json.loads(Path(entry + ".arena.json").read_text()) == {"ref_in": 4 * MiB, "cand_in": 0, "out": 6 * MiB}
    c = Arena()
    assert arenahint.presize(c, entry, cap=1 << 30) == {"ref_in": 4 * MiB, "out": 6 * MiB}
    assert c.sizes == {"ref_in": 4 * MiB, "cand_in": 0, "out": 6 * MiB}
    for x in (a, b, c):
        x.close()


@pytest.mark.parametrize("text", ["", "not json", "[1, 2]", '{"out": "big"}', '{"out": -5}', '{"out": true}',
                                  '{"out": 1e12}', '{"elsewhere": 4096}'])
def test_a_bad_record_applies_nothing(tmp_path: Path, text: str):
    entry = str(tmp_path / "e")
    Path(entry + ".arena.json").write_text(text)
    a = Arena()
    assert arenahint.presize(a, entry, cap=1 << 30) == {}
    assert a.sizes == {"ref_in": 0, "cand_in": 0, "out": 0}
    arenahint.remember(a, entry)  # and is replaced by a good one
    assert json.loads(Path(entry + ".arena.json").read_text()) == {"ref_in": 0, "cand_in": 0, "out": 0}
    a.close()


def test_a_size_over_the_cap_is_not_applied(tmp_path: Path):
    entry = str(tmp_path / "e")
    Path(entry + ".arena.json").write_text(json.dumps({"out": 64 * MiB, "cand_in": 2 * MiB}))
    a = Arena()
    assert arenahint.presize(a, entry, cap=32 * MiB) == {"cand_in": 2 * MiB}
    a.close()


def test_no_entry_no_record(tmp_path: Path):
    a = Arena()
    assert arenahint.presize(a, None, cap=1 << 30) == {}
    arenahint.remember(a, None)
    assert not list(tmp_path.iterdir())
    a.close()


@pytest.mark.slow
def test_the_second_judgement_of_an_op_starts_with_the_regions_the_first_grew_to(tmp_path: Path):
    """Final mode on CPU (hidden shapes: the regions grow during the first judgement): the second
    judgement maps them at full size when its workers start, asks its candidate worker to remap
    fewer times, and reaches the same verdict."""
    case = Case("honest_cpu_relu", "relu", (Status.VALID,), mode=Mode.FINAL)
    task = load_task(TASKS / "relu.py")
    cfg = config(case, build_dir=str(tmp_path / "build"), max_timing_s=0.3, seed=5)
    first = evaluate(task, case.source(), cfg)
    assert first.status is Status.VALID, describe(first)
    assert first.evidence["arena_presized"] == {}
    grown = first.evidence["arena"]["sizes"]
    entry = refcache.entry_dir(tmp_path / "build", task.source, "cpu")
    assert json.loads(Path(entry + ".arena.json").read_text()) == grown
    second = evaluate(task, case.source(), cfg)
    assert second.status is Status.VALID, describe(second)
    assert second.evidence["arena_presized"] == {r: n for r, n in grown.items() if n}
    assert second.evidence["arena"]["sizes"] == grown
    remaps = [v.evidence["requests"]["candidate.arena"][0] for v in (first, second)]
    assert remaps[1] == 1 < remaps[0], remaps  # the attach only
