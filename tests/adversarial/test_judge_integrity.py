"""Judge integrity, third round (issue 25, classes 1-4, CPU): each class of attack that got a valid
verdict on the old code, several variants each, judged by the real evaluator (jailed workers, real
builds shared through the build cache's trusted tier); honest controls stay valid.

1. candidate code running after the clock stops (iteration of a returned sequence, ``__class__``,
   garbage-collector callbacks and cycles, finalizers on outputs and inputs, signal handlers and
   timers, audit hooks, torch.Tensor methods and builtins replaced);
2. the op counter switched off (RecordFunction off from Python, its alias, callbacks cleared, the C
   switch through ctypes, a C++ guard, a C++ clear);
3. torch compute not counted as torch (``at::cpu::mm`` from C++, a Python redispatch, an op of
   another namespace, numpy, scipy, a BLAS symbol through ctypes);
4. the partial rule set gamed (``_addmm_activation``, an extension loaded and never called, the
   candidate's GEMM on the profiled call only, torch after the first calls).

Every case expects one status and one rule id, and a phrase of what the judge saw. The fast tests at
the end check the parts the verdicts rest on, in this process (the link check of the real class-3
build, the op counter's probe, op families). See docs/redteam.md, "Judge integrity, third round".
"""

from __future__ import annotations

import gc
import signal

import pytest

from sandbox import rules as R
from sandbox.evaluate import evaluate
from sandbox.intake.task import load_task
from sandbox.verdict import Mode, Status

from .redteam import CANDIDATES, Case, config, describe, warm_build_cache

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

REJECTED, INCORRECT, VALID = Status.REJECTED, Status.INCORRECT, Status.VALID

# (case, a phrase the verdict's message carries)
CLASS1: list[tuple[Case, str]] = [
    (Case("cheat_38a_list_iter_late", "relu", (REJECTED,), (R.OUTPUT_TYPE,), cheat="25.1"), "LateList"),
    (Case("cheat_38b_tuple_subclass", "relu", (REJECTED,), (R.OUTPUT_TYPE,), cheat="25.1"), "LateTuple"),
    (Case("cheat_38c_fake_sequence", "relu", (REJECTED,), (R.OUTPUT_TYPE,), cheat="25.1"), "Pretender"),
    (Case("cheat_38e_gc_callback", "relu", (REJECTED,), (R.HOOKS,), cheat="25.1"), "gc.callbacks"),
    (Case("cheat_38f_cycle_finalizer", "relu", (REJECTED,), (R.HOOKS,), cheat="25.1"), "garbage collector"),
    (Case("cheat_38g_output_finalizer", "relu", (REJECTED,), (R.TORCH_FALLBACK,), cheat="25.1"), "aten::relu"),
    (Case("cheat_38h_input_del_attr", "relu", (REJECTED,), (R.TORCH_FALLBACK,), cheat="25.1"), "aten::relu"),
    (Case("cheat_38i_signal_timer", "relu", (REJECTED,), (R.HOOKS,), cheat="25.1"), "signal"),
    (Case("cheat_38j_audit_hook", "relu", (REJECTED,), (R.HOOKS,), cheat="25.1"), "audit hook"),
    (Case("cheat_38k_patch_tensor_copy", "relu", (REJECTED,), (R.HOOKS,), cheat="25.1"), "torch.Tensor"),
    (Case("cheat_38l_patch_builtin", "relu", (REJECTED,), (R.HOOKS,), cheat="25.1"), "builtin zip"),
]
CLASS2: list[tuple[Case, str]] = [
    (Case("cheat_39a_rf_off_python", "relu", (REJECTED,), (R.COUNTER_DISABLED,), cheat="25.2"), "_enable_record_function"),
    (Case("cheat_39b_rf_off_alias", "relu", (REJECTED,), (R.COUNTER_DISABLED,), cheat="25.2"), "_enable_record_function"),
    (Case("cheat_39c_clear_callbacks", "relu", (REJECTED,), (R.COUNTER_DISABLED,), cheat="25.2"), "_clear_callbacks"),
    (Case("cheat_39d_rf_off_ctypes", "relu", (REJECTED,), (R.COUNTER_DISABLED,), cheat="25.2"), "ctypes"),
    (Case("cheat_39e_rf_guard_native", "relu", (REJECTED,), (R.COUNTER_DISABLED,), cheat="25.2"), "enableRecordFunction"),
    (Case("cheat_39f_clear_callbacks_native", "relu", (REJECTED,), (R.COUNTER_DISABLED,), cheat="25.2"), "clearCallbacks"),
]
CLASS3: list[tuple[Case, str]] = [
    (Case("cheat_40a_at_cpu_mm", "matmul", (REJECTED,), (R.TORCH_FALLBACK,), cheat="25.3"), "below the dispatcher"),
    (Case("cheat_40b_redispatch_python", "matmul", (REJECTED,), (R.TORCH_FALLBACK,), cheat="25.3"), "redispatch"),
    (Case("cheat_40c_mkldnn_linear", "matmul", (REJECTED,), (R.TORCH_FALLBACK,), cheat="25.3"), "mkldnn::_linear_pointwise"),
    (Case("cheat_40d_numpy_matmul", "matmul", (REJECTED,), (R.LIBRARY_COMPUTE,), cheat="25.3"), "numpy"),
    (Case("cheat_40e_scipy_blas", "matmul", (REJECTED,), (R.LIBRARY_COMPUTE,), cheat="25.3"), "numpy"),
    (Case("cheat_40f_ctypes_sgemm", "matmul", (REJECTED,), (R.LIBRARY_COMPUTE,), cheat="25.3"), "compute library"),
]
CLASS4: list[tuple[Case, str]] = [
    (Case("cheat_41a_addmm_activation", "gemm_bias_relu", (REJECTED,), (R.NO_REPLACEMENT,), cheat="25.4"), "relu"),
    (Case("cheat_41b_unused_extension", "gemm_bias_relu", (REJECTED,), (R.NO_CUSTOM_KERNEL,), cheat="25.4"),
     "not called"),
    (Case("cheat_41c_gemm_profiled_only", "mlp2", (REJECTED,), (R.NO_REPLACEMENT,), cheat="25.4"),
     "correctness calls (counted on every call)"),
    (Case("cheat_41d_torch_after_n_calls", "gemm_bias_relu", (REJECTED,), (R.NO_REPLACEMENT,), cheat="25.4"),
     "timing"),
]
HONEST_STRICT = Case("honest_cpu_relu_tuple_glue", "relu", (VALID,), mode=Mode.FINAL)


@pytest.fixture(scope="module", autouse=True)
def _built():
    """One build per shared extension, outside every evaluation's deadlines (the candidates'
    module-level code runs here with nothing armed: 39f's clear of the callbacks included)."""
    for stem in ("cheat_09a_inplace_inputs", "cheat_39e_rf_guard_native", "cheat_40a_at_cpu_mm",
                 "cheat_41a_addmm_activation", "cheat_41c_gemm_profiled_only", "cheat_41d_torch_after_n_calls"):
        warm_build_cache(stem)


def judge(case: Case, rules: str = "strict"):
    return evaluate(load_task(case.task_path()), case.source(), config(case, rules=rules))


def assert_caught(case: Case, phrase: str, v) -> None:
    assert (v.status, v.rule) == (case.statuses[0], case.rules[0]), f"{case.candidate}: {describe(v)}"
    assert phrase in v.message, f"{case.candidate}: expected {phrase!r} in the message; {describe(v)}"
    assert not v.speedups, f"a caught cheat carries no speedup; {describe(v)}"


def _params(cases: list[tuple[Case, str]]) -> list:
    return [pytest.param(c, p, id=c.candidate) for c, p in cases]


@pytest.mark.parametrize(("case", "phrase"), _params(CLASS1))
def test_candidate_code_after_the_clock_is_caught(case: Case, phrase: str):
    """Class 1: nothing of the candidate's runs outside the timed, counted window."""
    assert_caught(case, phrase, judge(case))


@pytest.mark.parametrize(("case", "phrase"), _params(CLASS2))
def test_switching_the_counter_off_is_rejected(case: Case, phrase: str):
    """Class 2: the counting machinery is verified after every counted call."""
    assert_caught(case, phrase, judge(case))


@pytest.mark.parametrize(("case", "phrase"), _params(CLASS3))
def test_torch_or_library_compute_not_counted_as_torch_is_rejected(case: Case, phrase: str):
    """Class 3 (CPU): below the dispatcher, other op namespaces, numpy/scipy/BLAS."""
    assert_caught(case, phrase, judge(case))


@pytest.mark.parametrize(("case", "phrase"), _params(CLASS4))
def test_gaming_the_partial_rule_set_is_rejected(case: Case, phrase: str):
    """Class 4: nested ops count, every counted call is compared, own code must be called."""
    assert_caught(case, phrase, judge(case, rules="partial"))


# the pure-Python variants (torch's ReLU, no CPU extension) judged on CUDA: the window's unpacking,
# releases and probe on the GPU path (after the end event), the hooks checks with a CUDA context
GPU_PORTABLE = ("cheat_38a_list_iter_late", "cheat_38c_fake_sequence", "cheat_38e_gc_callback",
                "cheat_38f_cycle_finalizer", "cheat_38k_patch_tensor_copy", "cheat_39a_rf_off_python",
                "cheat_39c_clear_callbacks")


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize(("case", "phrase"), _params([(c, p) for c, p in CLASS1 + CLASS2 if c.candidate in GPU_PORTABLE]))
def test_the_device_independent_attacks_are_caught_on_a_gpu(case: Case, phrase: str):
    v = evaluate(load_task(case.task_path()), case.source(), config(case, device="cuda"))
    assert_caught(case, phrase, v)


def test_honest_candidate_with_a_tuple_and_python_glue_stays_valid():
    """A plain tuple output, numpy on shapes and Python scalars, a weakref of its own and a
    finalizer that does no compute: none of it is refused (strict, final mode, every shape)."""
    v = judge(HONEST_STRICT)
    assert v.status is VALID and v.rule is None, describe(v)
    assert v.speedups.get("eager") is not None, describe(v)
    share = v.evidence["custom_share_counted"]
    assert share["own_ns"] > 0 and 0.0 < share["share"] <= 1.0, share
    assert v.evidence["counter"]["py_hooks"] is True


# -- fast: the parts the verdicts rest on ---------------------------------------------------------
def test_the_class3_build_links_what_the_link_check_names():
    """The real class-3 extension: each entry point's symbol in its category."""
    import glob

    from sandbox.build.buildcache import default_root
    from sandbox.rules.linkcheck import scan

    objs = [p for p in glob.glob(str(default_root() / "shared" / "*" / "*.so")) if _has(p, "_ZN2at3cpu2mm")]
    assert objs, "the class-3 extension is not in the shared tier"
    cats = scan(objs[:1], lambda struct: struct == "mm")[objs[0]]
    assert any("_ZN2at3cpu2mm" in s for s in cats["below_dispatcher"]), cats
    assert any("redispatch" in s for s in cats["below_dispatcher"]), cats
    assert any("_ZN2at6native4relu" in s for s in cats["below_dispatcher"]), cats
    assert "sgemm_" in cats["library"], cats
    assert any("_ZN2at4_ops2mm4call" in s for s in cats["op_call"]), cats


def _has(path: str, needle: str) -> bool:
    from sandbox.rules.linkcheck import undefined_symbols

    try:
        return any(needle in s for s in undefined_symbols(path))
    except (OSError, ValueError):
        return False


def test_the_counter_probe_fails_when_record_function_is_off():
    """The op counter's end-to-end witness, with the real library (the one the judgements above
    built into the trusted tier) and torch's own switch (no tripwires in this process)."""
    import torch

    from sandbox.build.buildcache import default_root
    from sandbox.rules import opcount

    path, why = opcount.ensure(str(default_root() / "trusted"))
    assert path, why
    c = opcount.Counter(path)
    x = torch.ones(3)
    c.arm(True)
    try:
        assert c.probe() and c.rf_enabled()
        torch._C._autograd._enable_record_function(False)
        assert not c.probe() and not c.rf_enabled()
        torch._C._autograd._enable_record_function(True)
        assert c.probe()
        torch.relu(x)
    finally:
        c.arm(False)
        torch._C._autograd._enable_record_function(True)
    assert c.take_trees() == {"aten::relu>aten::clamp_min": 1}


def test_fused_and_nested_ops_count_for_every_family_they_compute():
    from sandbox.rules.partial import family, family_set, tree_families

    assert family_set("aten::_addmm_activation") == ("matmul", "add", "relu")
    assert family("mkldnn::_linear_pointwise") == "mkldnn::_linear_pointwise"
    ref = tree_families({"aten::linear>aten::addmm,aten::t,aten::transpose": 1, "aten::relu>aten::clamp_min": 1})
    assert ref == {"matmul": 1, "add": 1, "relu": 1}
    fused = tree_families({"aten::_addmm_activation>aten::clamp_min_,aten::copy_,aten::relu_": 1})
    assert not ref - fused  # nothing of the reference left for the candidate's kernel
    assert tree_families({"mylib::relu>aten::empty": 1}, frozenset({"mylib"})) == {}


def test_the_worker_hooks_check_sees_what_calls_back_into_the_candidate():
    """sandbox/rules/hooks.py in this process: a gc callback, the collector turned on, a Python signal
    handler, a replaced builtin, a method added to torch.Tensor and a dispatch mode left on are each
    named, one at a time; undone, nothing is."""
    import builtins

    import torch

    from sandbox.rules.hooks import Hooks

    cb = lambda phase, info: None  # noqa: E731
    old_zip, old_sig, gc_was = builtins.zip, signal.getsignal(signal.SIGUSR2), gc.isenabled()
    gc.disable()
    mode = torch.inference_mode()

    def set_zip():
        builtins.zip = lambda *a, **k: old_zip(*a, **k)

    def unset_zip():
        builtins.zip = old_zip

    def del_copy():
        del torch.Tensor.copy_

    cases = [
        (lambda: gc.callbacks.append(cb), lambda: gc.callbacks.remove(cb), "gc.callbacks"),
        (gc.enable, gc.disable, "garbage collector"),
        (lambda: signal.signal(signal.SIGUSR2, lambda *a: None), lambda: signal.signal(signal.SIGUSR2, old_sig),
         "signal"),
        (set_zip, unset_zip, "builtin zip"),
        (lambda: setattr(torch.Tensor, "copy_", torch._C.TensorBase.copy_), del_copy, "torch.Tensor"),
        (mode.__enter__, lambda: mode.__exit__(None, None, None), "dispatch key sets"),
    ]
    try:
        h = Hooks(torch)
        assert h.found() == []
        for do, undo, phrase in cases:
            do()
            try:
                found = " | ".join(h.found(native=False))
            finally:
                undo()
            assert phrase in found, (phrase, found)
        assert h.found() == []
    finally:
        (gc.enable if gc_was else gc.disable)()


def test_every_new_cheat_file_is_in_a_class():
    stems = {p.stem for p in CANDIDATES.glob("cheat_3[89]*.py")} | {p.stem for p in CANDIDATES.glob("cheat_4[01]*.py")}
    listed = {c.candidate for c, _ in CLASS1 + CLASS2 + CLASS3 + CLASS4}
    assert stems == listed, stems ^ listed
