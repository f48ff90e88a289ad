"""``harness suite`` and ``harness doctor`` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.capabilities import needs_isolation
from tests.support.cli import invoke

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kernelbench"
FIELDS = {
    "name",
    "category",
    "dtype",
    "atol",
    "rtol",
    "flops",
    "bytes",
    "gflop",
    "mb",
    "profiles",
    "extra_profiles",
    "description",
    "kernelbench",
    "path",
    "sha256",
}


def _run(*args):
    return invoke(*args, catch_exceptions=False)


def test_suite_list_json_has_at_least_91_ops_with_full_metadata():
    r = _run("suite", "list", "--json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert len(rows) >= 91
    for row in rows:
        assert FIELDS <= set(row), row["name"]
        assert row["gflop"] > 0 and row["mb"] > 0 and row["description"], row["name"]
        assert "small" in row["profiles"] and row["extra_profiles"], row["name"]


def test_suite_list_table_for_a_named_suite():
    r = _run("suite", "list", "--suite", "smoke")
    assert r.exit_code == 0
    for name in ("relu", "softmax", "sum_dim", "matmul_square", "layer_norm"):
        assert name in r.output
    assert "5 op(s)" in r.output


def test_suite_list_accepts_a_kernelbench_folder_unchanged():
    r = _run("suite", "list", str(FIXTURES / "level1"), "--json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert [x["name"] for x in rows] == [
        "1_Square_matmul",
        "2_ReLU_activation",
        "3_Softmax_rows",
        "12_Conv2d_with_bias",
        "19_Cumsum_tuple_shape",
    ]
    assert all(x["kernelbench"] and x["gflop"] is None for x in rows)


def test_suite_show_gives_shapes_per_profile_and_source():
    r = _run("suite", "show", "matmul_square", "--json")
    assert r.exit_code == 0
    info = json.loads(r.output)
    profs = {p["profile"]: p for p in info["shapes"]}
    assert profs["default"]["globals"]["N"] == 4096
    assert profs["small"]["globals"]["N"] == 64
    assert profs["default"]["gflop"] == 2 * 4096**3 / 1e9
    assert "class Model" in info["source"]
    text = _run("suite", "show", str(FIXTURES / "level1" / "2_ReLU_activation.py"))
    assert (
        text.exit_code == 0
        and "plain KernelBench task" in text.output
        and "batch_size=16" in text.output
    )


def test_suite_show_unknown_op_exits_2_with_suggestion():
    r = invoke("suite", "show", "layer_nrom")
    assert r.exit_code == 2
    assert "did you mean 'layer_norm'" in r.output


def test_suite_check_passes_for_smoke():
    r = _run("suite", "check", "smoke")
    assert r.exit_code == 0, r.output
    assert r.output.count(" ok") == 10


def test_doctor_json_reports_probes_and_conclusions():
    import torch

    r = _run("doctor", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["python"] and d["torch"] == torch.__version__
    names = {t["name"] for t in d["tools"]}
    assert {"nvcc", "triton", "isolation", "container engine"} <= names
    c = d["conclusions"]
    assert {"can judge CUDA candidates", "process isolation", "docker sandbox"} <= set(c)
    # both ways: "no (no GPU...)" exactly where torch sees no CUDA device
    assert c["can judge CUDA candidates"].startswith("no (no GPU") is (not torch.cuda.is_available()), c
    assert c["process isolation"].split()[0] in {"jail", "jail-setuid", "none:"}
    table = _run("doctor")
    assert table.exit_code == 0 and "can judge CUDA candidates:" in table.output


@needs_isolation
def test_doctor_gives_every_isolation_layer_a_row_where_the_jail_works():
    d = json.loads(_run("doctor", "--json").output)
    tools = {t["name"]: t for t in d["tools"]}
    assert tools["isolation"]["ok"], tools["isolation"]
    assert {"isolation: user namespace", "isolation: PID namespace", "isolation: seccomp",
            "isolation: landlock", "isolation: read-only tree"} <= set(tools)
    assert d["conclusions"]["process isolation"].split()[0] in {"jail", "jail-setuid"}


def test_fingerprint_names_the_environment():
    from harness.env import fingerprint

    fp = fingerprint()
    assert {
        "gpu",
        "driver",
        "cuda",
        "torch",
        "triton",
        "python",
        "platform",
        "harness_commit",
    } <= set(fp)
    assert fp["python"].count(".") == 2
