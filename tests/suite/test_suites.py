"""Suite resolution: named suites, op names, categories, KernelBench files and folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.suite.suites import (
    SuiteError,
    find_task,
    load_suites,
    op_paths,
    resolve,
    resolve_paths,
)
from sandbox.intake.task import load_task

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kernelbench"


def test_named_suites_partition_the_full_suite():
    suites = load_suites()
    assert {"smoke", "level1", "level2", "full"} <= set(suites)
    full = [t.name for t in resolve("full")]
    level1 = [t.name for t in resolve("level1")]
    level2 = [t.name for t in resolve("level2")]
    assert sorted(full) == sorted(op_paths())
    assert set(level1).isdisjoint(level2) and set(level1) | set(level2) == set(full)
    assert all(t.meta.category == "fused" for t in resolve("level2"))


def test_op_lists_and_categories_resolve_in_order_without_duplicates():
    names = [t.name for t in resolve(["relu", "softmax,relu", "category:pooling"])]
    assert names[:2] == ["relu", "softmax"]
    assert names.count("relu") == 1
    assert len(names) == 2 + len([p for p in op_paths().values() if p.parent.name == "pooling"])


@pytest.mark.parametrize(
    "bad, hint",
    [
        ("smok", "'smoke'"),
        ("relux", "'relu'"),
        ("category:pool", "'pooling'"),
        ("suite:levl2", "'level2'"),
    ],
)
def test_unknown_names_fail_with_did_you_mean(bad, hint):
    with pytest.raises(SuiteError, match="did you mean") as e:
        resolve(bad)
    assert hint in str(e.value)


def test_kernelbench_folder_resolves_recursively_in_numeric_order():
    paths = resolve_paths(str(FIXTURES))
    assert [p.name for p in paths] == [
        "1_Square_matmul.py",
        "2_ReLU_activation.py",
        "3_Softmax_rows.py",
        "12_Conv2d_with_bias.py",
        "19_Cumsum_tuple_shape.py",
    ]
    tasks = resolve(str(FIXTURES / "level1"))
    assert all(t.kernelbench and t.meta.category == "kernelbench" for t in tasks)
    assert all(t.profiles == ["default"] for t in tasks)


def test_single_kernelbench_file_is_one_task():
    t = find_task(str(FIXTURES / "level1" / "12_Conv2d_with_bias.py"))
    assert t.name == "12_Conv2d_with_bias" and t.kernelbench
    assert t.shape_globals()["out_channels"] == 16
    assert find_task(str(FIXTURES / "level1" / "19_Cumsum_tuple_shape.py")).shape_globals()[
        "input_shape"
    ] == (300,)


def test_missing_path_and_folder_without_tasks_are_user_errors(tmp_path):
    with pytest.raises(SuiteError, match="no such task file"):
        resolve(str(tmp_path / "nope.py"))
    (tmp_path / "helper.py").write_text("x = 1\n")
    with pytest.raises(SuiteError, match="no task files"):
        resolve(str(tmp_path))


def test_small_extra_becomes_profiles_and_extra_profiles_for_maps_base_profiles(tmp_path):
    f = tmp_path / "op.py"
    f.write_text(
        "import torch\nimport torch.nn as nn\nN = 8\n"
        "META = {'category': 'activation', 'flops': 'N', 'bytes': '8*N'}\n"
        "SHAPES = {'small': {'N': 2}, 'small_extra': [{'N': 3}, {'N': 5}], 'extra': [{'N': 7}]}\n"
        "class Model(nn.Module):\n    def forward(self, x):\n        return x.relu()\n"
        "def get_inputs():\n    return [torch.randn(N)]\n"
        "def get_init_inputs():\n    return []\n"
    )
    t = load_task(f)
    assert t.profiles == ["default", "small", "small_extra0", "small_extra1", "extra0"]
    assert t.extra_profiles == ["small_extra0", "small_extra1", "extra0"]
    assert t.extra_profiles_for("default") == ["extra0"]
    assert t.extra_profiles_for("small") == ["small_extra0", "small_extra1"]
    assert t.extra_profiles_for("extra0") == []
    assert t.shape_globals("small_extra1")["N"] == 5


def test_kernelbench_fixture_tasks_run_on_cpu_at_their_default_shapes():
    from harness.suite.checks import discriminative_failures, run_reference

    for t in resolve(str(FIXTURES)):
        run = run_reference(t, "default", seed=3)
        assert len(run.outputs) == 1 and run.outputs[0].isfinite().all(), t.name
        assert "zeros" not in discriminative_failures(t, "default", seed=3), t.name
