"""Rules every bundled reference op must follow (issue 2): loads, runs on CPU at its small
profiles with finite outputs, is discriminative, carries full metadata, and fits a 24 GB GPU."""

from __future__ import annotations

import math
import re
from collections import Counter

import pytest
import torch

from harness.suite.checks import discriminative_failures, run_reference, working_set_bytes
from harness.suite.suites import op_paths, resolve
from sandbox.intake.task import load_task

OPS = op_paths()
ALL = sorted(OPS)
CATEGORY_MINIMUMS = {
    "matmul": 12,
    "activation": 14,
    "softmax": 3,
    "normalization": 8,
    "reduction": 12,
    "convolution": 12,
    "pooling": 6,
    "loss": 8,
    "fused": 12,
}
SMOKE = ["relu", "softmax", "sum_dim", "matmul_square", "layer_norm"]


def _task(name):
    return load_task(OPS[name])


def test_suite_has_at_least_95_ops_with_category_minimums():
    assert len(OPS) >= 95
    counts = Counter(p.parent.name for p in OPS.values())
    for cat, n in CATEGORY_MINIMUMS.items():
        assert counts[cat] >= n, f"category {cat}: {counts[cat]} ops < {n}"
    assert set(counts) == set(CATEGORY_MINIMUMS), (
        f"unexpected categories {set(counts) - set(CATEGORY_MINIMUMS)}"
    )


def test_smoke_ops_exist_under_their_required_names():
    assert [t.name for t in resolve("smoke")] == SMOKE
    assert OPS["relu"].parent.name == "activation" and OPS["matmul_square"].parent.name == "matmul"


@pytest.mark.parametrize("name", ALL)
def test_op_metadata_is_complete(name):
    t = _task(name)
    assert not t.kernelbench, "our ops carry META"
    assert t.meta.category == OPS[name].parent.name, "META['category'] must match the folder"
    assert t.meta.flops and t.meta.bytes and t.meta.description
    assert "small" in t.shapes
    assert t.extra_profiles_for("default"), "needs SHAPES['extra'] (>= 1 GPU-size hidden shape)"
    assert t.extra_profiles_for("small"), "needs SHAPES['small_extra'] (>= 1 CPU-size hidden shape)"
    default = t.shape_globals("default")
    for prof in t.extra_profiles_for("default") + t.extra_profiles_for("small"):
        assert set(t.shapes[prof]) <= set(default), (
            f"{prof} overrides a global the file does not define"
        )
    for prof in t.extra_profiles_for("default"):
        g = t.shape_globals(prof)
        assert any(g[k] != default[k] for k in t.shapes[prof]), f"{prof} equals the default shape"
    extra_dims = [
        v
        for p in t.extra_profiles_for("default")
        for v in t.shapes[p].values()
        if isinstance(v, int)
    ]
    assert any(v > 1 and v & (v - 1) for v in extra_dims), (
        "extra shapes need a non-power-of-two size"
    )


@pytest.mark.parametrize("name", ALL)
def test_flops_and_bytes_formulas_evaluate_at_every_profile(name):
    t = _task(name)
    for prof in t.profiles:
        flops, nbytes = t.work(prof)
        assert flops is not None and flops > 0 and math.isfinite(flops), prof
        assert nbytes is not None and nbytes > 0 and math.isfinite(nbytes), prof


@pytest.mark.parametrize("name", ALL)
def test_inputs_are_created_on_the_ambient_device_without_numpy(name):
    t = _task(name)
    src = t.source
    assert not re.search(r"device\s*=|\.cuda\(|\.to\(\s*['\"]cuda|import numpy", src), (
        "get_inputs/get_init_inputs must use torch factories without device= (the evaluator sets the device)"
    )
    mod = t.load_module("small")
    with torch.device("meta"):
        inputs = mod.get_inputs()
    for x in inputs:
        if isinstance(x, torch.Tensor):
            assert x.device.type == "meta", "an input ignored the ambient torch.device"


@pytest.mark.parametrize("name", ALL)
def test_reference_runs_on_cpu_and_trivial_outputs_fail(name):
    """Every op at small and small_extra*: finite outputs, and all-zeros, ones, a constant (own mean
    and another seed's mean), another seed's output and the echoed first input all fail the op's
    tolerance under the evaluator's comparison rule."""
    t = _task(name)
    for prof in ["small", *t.extra_profiles_for("small")]:
        run = run_reference(t, prof, seed=7)
        assert run.outputs, prof
        for out in run.outputs:
            assert bool(torch.isfinite(out.double()).all()), f"{prof}: non-finite reference output"
        passing = discriminative_failures(t, prof, seed=7)
        assert not passing, f"{name} at {prof}: trivial output(s) pass the tolerance: {passing}"


@pytest.mark.parametrize("name", ALL)
def test_inputs_differ_between_seeds(name):
    t = _task(name)
    a = run_reference(t, "small", seed=1)
    b = run_reference(t, "small", seed=2)
    fa = [x for x in a.inputs if isinstance(x, torch.Tensor) and x.is_floating_point()]
    fb = [x for x in b.inputs if isinstance(x, torch.Tensor) and x.is_floating_point()]
    assert fa and any(not torch.equal(x, y) for x, y in zip(fa, fb, strict=True))


@pytest.mark.parametrize("name", ALL)
def test_default_and_extra_profiles_build_and_fit_in_2gb(name):
    """Inputs + params + every tensor produced by the forward (an upper bound on intermediates),
    computed on meta tensors: several copies must fit a 24 GB GPU. Running the GPU-size extra
    shapes on meta also proves they are consistent (e.g. channels divisible by groups)."""
    t = _task(name)
    for prof in ["default", *t.extra_profiles_for("default")]:
        ws = working_set_bytes(t, prof)
        assert ws["total"] <= 2 * 2**30, (prof, ws)
        assert ws["inputs"] > 0 and ws["outputs"] > 0, prof
