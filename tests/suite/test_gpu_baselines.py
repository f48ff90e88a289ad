"""harness/bench/tools/gpu_baselines.py logic, run on CPU with a tiny op list (host timers instead of events)."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "harness" / "bench" / "tools" / "gpu_baselines.py"


def _import_script():
    """Import the script as module ``gpu_baselines`` from a sys.path entry, so that its compile
    workers (spawned processes, which inherit sys.path) can import it too."""
    if str(SCRIPT.parent) not in sys.path:
        sys.path.insert(0, str(SCRIPT.parent))
    return importlib.import_module("gpu_baselines")


@pytest.fixture(scope="module")
def gb():
    return _import_script()


def _report(out: Path) -> dict:
    (js,) = out.glob("baselines_*.json")
    (md,) = out.glob("baselines_*.md")
    return json.loads(js.read_text()) | {"_md": md.read_text()}


def test_eager_baselines_on_cpu_write_json_and_markdown_and_flag_fast_ops(gb, tmp_path):
    rc = gb.main(
        [
            "--device",
            "cpu",
            "--profile",
            "small",
            "--ops",
            "relu,sum_dim",
            "--no-compile",
            "--reps",
            "20",
            "--out",
            str(tmp_path),
        ]
    )
    assert rc == 0
    rep = _report(tmp_path)
    assert [r["op"] for r in rep["results"]] == ["relu", "sum_dim"]
    assert set(rep["peaks"]) == {"copy_bytes_per_s", "fp32_flops_per_s", "bf16_flops_per_s"}
    for r in rep["results"]:
        assert r["eager_us"] > 0 and r["eager"]["n"] == 20
        assert r["sol_mem_pct"] > 0 and r["sol_compute_pct"] > 0
        assert r["compile_us"] is None
        # small CPU shapes run in microseconds: the < 20 us flag must fire for them
        if r["eager_us"] < 20:
            assert any("< 20 us" in n for n in r["notes"])
    assert "| relu | activation |" in rep["_md"] and "%SOL mem" in rep["_md"]


def test_compile_measurements_past_the_deadline_are_skipped_and_marked(gb, tmp_path):
    rc = gb.main(
        [
            "--device",
            "cpu",
            "--profile",
            "small",
            "--ops",
            "relu",
            "--deadline-s",
            "0",
            "--out",
            str(tmp_path),
        ]
    )
    assert rc == 0
    (row,) = _report(tmp_path)["results"]
    assert row["compile_us"] is None and "compile skipped (deadline)" in row["notes"]


def test_category_filter_and_sol_formula(gb):
    args = gb.parse_args(["--suite", "smoke", "--category", "matmul", "--device", "cpu"])
    assert [t.name for t in gb.select_tasks(args)] == ["matmul_square"]
    (task,) = gb.select_tasks(args)
    peaks = {"copy_bytes_per_s": 1e12, "fp32_flops_per_s": 1e13, "bf16_flops_per_s": 1e14}
    mem, comp = gb.sol(task, "default", 1e6, peaks)  # 1 s
    assert comp == pytest.approx(100 * 2 * 4096**3 / 1e13)
    assert mem == pytest.approx(100 * 4 * 3 * 4096**2 / 1e12)


@pytest.mark.slow
def test_compile_pool_measures_a_compiled_op_on_cpu(gb, tmp_path):
    rc = gb.main(
        [
            "--device",
            "cpu",
            "--profile",
            "small",
            "--ops",
            "relu",
            "--workers",
            "1",
            "--deadline-s",
            "600",
            "--out",
            str(tmp_path),
        ]
    )
    assert rc == 0
    (row,) = _report(tmp_path)["results"]
    assert row["compile_us"] and row["compile"]["compile_s"] > 0, row["notes"]
