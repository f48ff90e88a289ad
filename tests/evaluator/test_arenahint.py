"""The arena's sizes are remembered per op (sandbox/worker/arenahint.py): the next judgement of the op
maps its regions at their full size before it waits for the device, instead of growing and
remapping them (and on CUDA pinning them again) while the device is held."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.check import refcache
from sandbox.evaluate import evaluate
from sandbox.intake.datasize import DataSize
from sandbox.intake.task import load_task
from sandbox.verdict import Mode, Status
from sandbox.worker import arenahint, arenasetup
from sandbox.worker.arena import GRAIN, Arena
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


def _size(inputs: int, outputs: int | None) -> DataSize:
    return DataSize("default", inputs, outputs, 0)


G = GRAIN


@pytest.mark.parametrize("record, sizes, budget_mib, want", [
    # the op's remembered sizes come first, whatever the estimate says
    ({"out": 6 * MiB, "ref_in": 4 * MiB}, [_size(100 * MiB, 100 * MiB)], 64,
     {"ref_in": 4 * MiB, "out": 6 * MiB, "from": "remembered"}),
    # no record: the task's estimate, the largest profile's (inputs and 1 MiB; twice the output and 1 MiB)
    (None, [_size(3 * MiB, 5 * MiB), _size(7 * MiB, 1 * MiB)], 64,
     {"ref_in": 8 * MiB, "cand_in": 8 * MiB, "out": 12 * MiB, "from": "estimate"}),
    # an output the meta device could not make: the input regions only
    (None, [_size(3 * MiB, None)], 64, {"ref_in": 4 * MiB, "cand_in": 4 * MiB, "from": "estimate"}),
    # over the budget: one granule a region, grown under the lock as before, and evidence says why
    (None, [_size(30 * MiB, 10 * MiB)], 64, {"from": "estimate", "skipped": f"{86 * MiB} bytes over the budget of "
                                                                             f"{64 * MiB}"}),
    ({"out": 6 * MiB}, [], 0, {"from": "remembered", "skipped": f"{6 * MiB} bytes over the budget of 0"}),
    # nothing known: granules
    (None, [], 64, {}),
])
def test_a_device_arena_is_presized_before_the_lock_within_its_budget(tmp_path: Path, monkeypatch, record, sizes,
                                                                        budget_mib, want):
    """On a GPU the regions are made at their sizes when the workers start, not grown (made,
    exported and mapped again) while the device is held, where the driver serializes those calls
    behind every other GPU's (docs/performance.md, session 28)."""
    monkeypatch.setenv("KH_DEVICE_ARENA_PRESIZE_MIB", str(budget_mib))
    entry = str(tmp_path / "e")
    if record is not None:
        Path(entry + ".arena.json").write_text(json.dumps(record))
    a = Arena(device=True)
    for r in ("ref_in", "cand_in", "out"):
        a.ensure(r, G)
    assert arenasetup._presize_device(a, entry, sizes) == want
    grown = {r: n for r, n in want.items() if r in a.sizes}
    assert a.sizes == {r: max(G, -(-grown.get(r, 0) // G) * G) for r in ("ref_in", "cand_in", "out")}


def test_the_presize_budget_is_a_share_of_the_gpu_or_the_setting(monkeypatch):
    monkeypatch.delenv("KH_DEVICE_ARENA_PRESIZE_MIB", raising=False)
    assert arenasetup.presize_budget() == arenasetup._gpu_bytes() // arenasetup.PRESIZE_SHARE > 0
    monkeypatch.setenv("KH_DEVICE_ARENA_PRESIZE_MIB", "lots")
    with pytest.raises(ValueError, match="KH_DEVICE_ARENA_PRESIZE_MIB='lots': a whole number of MiB"):
        arenasetup.presize_budget()
