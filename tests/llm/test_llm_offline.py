"""The offline model: deterministic, labelled offline, covers the smoke suite, breaks on purpose."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from harness.llm.base import CallContext
from harness.llm.factory import make_model
from harness.llm.offline import OfflineModel
from harness.llm.offline.analyze import analyze
from harness.llm.offline.render import Variant, render
from harness.methods.reply import parse_reply

SMOKE = {"relu": "activation/relu", "softmax": "softmax/softmax", "sum_dim": "reduction/sum_dim",
         "matmul_square": "matmul/matmul_square", "layer_norm": "normalization/layer_norm"}
ROOT = Path(__file__).resolve().parents[2] / "reference_ops"


def _ref(op: str) -> str:
    return (ROOT / f"{SMOKE[op]}.py").read_text()


def _msgs(op: str, note: str = "") -> list[dict[str, str]]:
    return [{"role": "system", "content": "You write fast, correct C++ kernels."},
            {"role": "user", "content": f"{note}\n# Reference\n```python\n{_ref(op)}```\n"}]


def _ask(model, op, trial=0, note="", purpose="init"):
    return model.chat(_msgs(op, note), context=CallContext(op=op, trial=trial, purpose=purpose))


def test_same_seed_gives_the_same_replies():
    a, b = OfflineModel(seed=7), OfflineModel(seed=7)
    for op in SMOKE:
        for trial in range(4):
            assert _ask(a, op, trial).text == _ask(b, op, trial).text


def test_other_seeds_and_repeated_prompts_vary_the_kernel():
    texts = {_ask(OfflineModel(seed=s), "relu").text for s in range(6)}
    assert len(texts) > 2
    m = OfflineModel(seed=1, broken_rate=0)
    repeats = {_ask(m, "relu").text for _ in range(8)}  # best-of-N sends one prompt N times
    assert len(repeats) > 2


def test_results_are_labelled_offline_with_estimated_tokens():
    r = _ask(make_model("offline"), "softmax")
    assert r.offline and r.model == "offline" and r.raw["token_estimate"] is True
    assert r.prompt_tokens == len("\n".join(m["content"] for m in _msgs("softmax"))) // 4


@pytest.mark.parametrize("op", sorted(SMOKE))
def test_every_smoke_op_gets_a_parsable_modelnew_reply(op):
    m = OfflineModel(seed=3, device="cpu", broken_rate=0)
    parsed = parse_reply(_ask(m, op).text)
    assert parsed.ok and parsed.name and parsed.thought
    compile(parsed.code, f"<{op}>", "exec")
    assert "class ModelNew(nn.Module)" in parsed.code and "load_inline" in parsed.code
    assert "cuda_sources" not in parsed.code
    # ModelNew keeps Model's constructor and forward signature
    ref_init = re.search(r"def __init__\(self[^)]*\)", _ref(op)).group(0)
    assert ref_init in parsed.code
    assert re.search(r"def forward\(self[^)]*\)", _ref(op)).group(0) in parsed.code


@pytest.mark.parametrize("op", sorted(SMOKE))
def test_cuda_replies_use_cuda_kernels(op):
    code = parse_reply(_ask(OfflineModel(seed=2, device="cuda", broken_rate=0), op).text).code
    assert "cuda_sources=[_SRC]" in code and "__global__" in code and "getCurrentCUDAStream" in code


def test_device_is_guessed_from_the_prompt_when_not_given():
    m = OfflineModel(seed=0, broken_rate=0)
    gpu = [{"role": "system", "content": "You write fast, correct CUDA kernels for PyTorch operators."},
           {"role": "user", "content": f"```python\n{_ref('relu')}```"}]
    assert "__global__" in parse_reply(m.chat(gpu, context=CallContext(op="relu")).text).code
    assert "__global__" not in parse_reply(_ask(m, "relu").text).code


def test_compiled_source_is_identical_across_variants_of_an_op():
    """Variants differ only in Python constants, so the build cache compiles each family once."""
    m = OfflineModel(seed=11, device="cpu", broken_rate=0)
    for op in SMOKE:
        codes = {parse_reply(_ask(m, op, t).text).code for t in range(8)}
        assert len(codes) > 1
        srcs = {re.search(r'_SRC = r"""(.*?)"""', c, re.S).group(1) for c in codes}
        assert len(srcs) == 1
    spec_a, spec_b = analyze(_ref("softmax")), analyze(_ref("layer_norm"))
    src = lambda s: re.search(r'_SRC = r"""(.*?)"""', render(s, Variant("cpp", 64)), re.S).group(1)  # noqa: E731
    assert src(spec_a) == src(spec_b)  # softmax and layer norm share one compiled source


def test_broken_replies_come_at_the_configured_rate_and_cover_every_failure():
    m = OfflineModel(seed=5, device="cpu", broken_rate=0.15)
    faults = Counter()
    for t in range(200):
        faults[m.chat(_msgs("relu"), context=CallContext(op="relu", trial=t)).raw["offline"]["fault"]] += 1
    broken = 200 - faults[None]
    assert 15 <= broken <= 50
    assert {"compile_error", "wrong_result", "unparsable"} <= set(faults)


def test_each_fault_looks_like_what_it_claims():
    spec = analyze(_ref("sum_dim"))
    ok, wrong = render(spec, Variant("cpp", 4)), render(spec, Variant("cpp", 4, fault="wrong_result"))
    assert "WRONG = 0" in ok and "WRONG = 1" in wrong
    broken = render(spec, Variant("cpp", 4, fault="compile_error"))
    assert "<torch/extensions.h>" in broken and "_broken_v1" in broken
    m = OfflineModel(seed=0, device="cpu", broken_rate=1.0)
    for t in range(30):
        r = m.chat(_msgs("relu"), context=CallContext(op="relu", trial=t))
        if r.raw["offline"]["fault"] == "unparsable":
            assert not parse_reply(r.text).ok
            break
    else:
        pytest.fail("no unparsable reply in 30 fully broken tries")


def test_summaries_and_unknown_ops_are_plain_text():
    m = OfflineModel()
    s = m.chat([{"role": "user", "content": "Message: compile error: 'foo' was not declared\nSummarize."}],
               context=CallContext(op="relu", purpose="summarize-error"))
    assert "was not declared" in s.text and "```" not in s.text
    weird = "```python\nimport torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.fft.fft(x)\n```"
    r = m.chat([{"role": "user", "content": weird}], context=CallContext(op="fft"))
    assert not parse_reply(r.text).ok and "cannot write this op" in r.text


def test_convert_stage_gets_a_functional_modelnew():
    m = OfflineModel()
    r = m.chat(_msgs("sum_dim"), context=CallContext(op="sum_dim", purpose="convert"))
    code = parse_reply(r.text).code
    assert "class ModelNew(" in code and "class Model(" not in code


def test_a_parent_kernel_in_the_prompt_is_varied_one_step():
    m = OfflineModel(seed=9, device="cpu", broken_rate=0)
    parent = parse_reply(_ask(m, "relu").text).code

    def tunables(code):
        return tuple(int(re.search(rf"^{k} = (\d+)", code, re.M).group(1)) for k in ("BLOCK", "UNROLL"))

    steps = 0
    for t in range(12):
        child = parse_reply(_ask(m, "relu", t, note=f"Improve this kernel:\n```python\n{parent}```").text).code
        steps += sum(a != b for a, b in zip(tunables(child), tunables(parent), strict=True)) == 1
    assert steps >= 6  # mostly one tunable changed: search walks the grid from the parent
