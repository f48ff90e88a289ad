"""Write a ``ModelNew`` candidate source for an analysed op: the offline model's output.

The compiled source depends only on (family, language, broken-or-not), never on the op or
the tunables, so the evaluator's build cache compiles each family once per language. What
varies between variants lives in Python constants (``BLOCK``, ``UNROLL``, ``WRONG``...).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.llm.offline import cpu_sources, cuda_sources
from harness.llm.offline.analyze import ACTIVATIONS, REDUCTIONS, OpSpec

# Tunable grids: (BLOCK, UNROLL) per family and language. On CUDA BLOCK is threads per block
# (or the matmul tile edge); on CPU it is the loop chunk / inner block / tile.
GRIDS = {
    ("elementwise", "cpp"): ([256, 1024, 4096, 16384], [1, 2, 4, 8]),
    ("elementwise", "cuda"): ([128, 256, 512, 1024], [1, 2, 4, 8]),
    ("reduction", "cpp"): ([1, 4, 16, 64], [1]),
    ("reduction", "cuda"): ([64, 128, 256, 512, 1024], [1]),
    ("rownorm", "cpp"): ([64, 256, 1024], [1]),
    ("rownorm", "cuda"): ([64, 128, 256, 512, 1024], [1]),
    ("matmul", "cpp"): ([16, 32, 64, 128], [1]),
    ("matmul", "cuda"): ([8, 16, 32], [1]),
}
FAULTS = ("compile_error", "wrong_result", "unparsable")


@dataclass(frozen=True)
class Variant:
    language: str  # "cpp" | "cuda"
    block: int
    unroll: int = 1
    fault: str | None = None  # one of FAULTS, or None for an honest kernel


def extension_name(family: str, language: str, broken: bool) -> str:
    return f"offline_{family}_{language}{'_broken' if broken else ''}_v1"


def broken_source(src: str) -> str:
    """The family's source with a realistic mistake: a misspelt header. The compiler stops at
    once (a fatal error), so broken candidates cost seconds, not a full compile."""
    return src.replace("#include <torch/extension.h>", "#include <torch/extensions.h>", 1)


def render(spec: OpSpec, v: Variant) -> str:
    """The full candidate source (imports, load_inline, constants, ModelNew)."""
    broken = v.fault == "compile_error"
    wrong = 1 if v.fault == "wrong_result" else 0
    src = (cuda_sources if v.language == "cuda" else cpu_sources).SOURCES[spec.family]
    src = broken_source(src) if broken else src
    if v.language == "cuda":
        load = (
            f"_ext = load_inline(\n    name={extension_name(spec.family, 'cuda', broken)!r},\n"
            f"    cpp_sources=[_DECL],\n    cuda_sources=[_SRC],\n"
            f"    functions={cuda_functions(spec.family)!r},\n    verbose=False,\n)\n"
        )
        decl = f"_DECL = {cuda_sources.DECLARATIONS[spec.family]!r}\n"
    else:
        load = (
            f"_ext = load_inline(\n    name={extension_name(spec.family, 'cpp', broken)!r},\n"
            f"    cpp_sources=[_SRC],\n    functions={cpu_sources.FUNCTIONS[spec.family]!r},\n"
            f"    verbose=False,\n)\n"
        )
        decl = ""
    header = "import math\n\nimport torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
    top = [
        header,
        spec.constants,
        f'_SRC = r"""{src}"""\n' + decl,
        load,
        f"_EMPTY = torch.empty(0)\nBLOCK = {v.block}\nUNROLL = {v.unroll}\nWRONG = {wrong}\n",
    ]
    cls = (
        "class ModelNew(nn.Module):\n" + spec.init_src.rstrip() + "\n\n"
        f"    {spec.forward_def}\n" + _forward_body(spec)
    )
    return "\n".join(t.rstrip() + "\n" for t in top if t.strip()) + "\n\n" + cls


def cuda_functions(family: str) -> list[str]:
    return cpu_sources.FUNCTIONS[family]


def _forward_body(spec: OpSpec) -> str:
    x = spec.args[0] if spec.args else "x"
    e = spec.exprs
    if spec.family == "elementwise":
        code = ACTIVATIONS[spec.kind][0]
        return (
            f"        op = ({code} + 3 * WRONG) % 9\n"
            f"        return _ext.elementwise_forward({x}, op, float({e['a']}), float({e['b']}), BLOCK, UNROLL)\n"
        )
    if spec.family == "reduction":
        return (
            f"        dim = int({e['dim']})\n"
            f"        return _ext.reduce_forward({x}, dim, bool({e['keepdim']}), {REDUCTIONS[spec.kind]}, "
            f"{x}.shape[dim] - WRONG, BLOCK)\n"
        )
    if spec.kind in ("softmax", "log_softmax"):
        return (
            f"        dim = int({e['dim']})\n"
            f"        return _ext.softmax_forward({x}, dim, {spec.kind == 'log_softmax'}, "
            f"{x}.shape[dim] - WRONG, BLOCK)\n"
        )
    if spec.kind == "layer_norm":
        return (
            f"        w = {e['weight']}\n        b = {e['bias']}\n"
            f"        n = math.prod({e['shape']})\n"
            f"        eps = float({e['eps']}) * (1e6 if WRONG else 1.0)\n"
            f"        return _ext.layernorm_forward({x}, _EMPTY if w is None else w, "
            f"_EMPTY if b is None else b, n, eps, BLOCK)\n"
        )
    if spec.family == "matmul":
        a, b = spec.args[0], spec.args[1]
        return f"        return _ext.matmul_forward({a}, {b}, {a}.shape[-1] - WRONG, BLOCK)\n"
    raise ValueError(f"no forward template for {spec.family}/{spec.kind}")


# family -> (how a CUDA variant works, how a CPU variant works, the thought around it); a family
# not listed reads as matmul
_THOUGHTS = {
    "elementwise": (
        "{block} threads per block, each thread handling {unroll} elements per grid-stride step",
        "chunks of {block} elements with the inner loop unrolled {unroll} times",
        "Apply {kind} in one pass over memory, using {how}, so each element is read and written once.",
    ),
    "reduction": (
        "one block of {block} threads per output with a shared-memory tree reduction",
        "{block} adjacent outputs accumulated together in double precision",
        "Reduce ({kind}) along the dim with {how} to keep reads contiguous.",
    ),
    "rownorm": (
        "one block of {block} threads per row, block-wide reductions in shared memory",
        "one row at a time, statistics in double precision",
        "Compute {kind} row-wise with {how}; two passes for statistics, one for the output.",
    ),
    "matmul": (
        "{block}x{block} tiles of A and B staged in shared memory",
        "{block}x{block}x{block} cache blocks with an i-k-j loop order",
        "Blocked matmul with {how}, so each loaded value is reused across a tile.",
    ),
}


def describe(spec: OpSpec, v: Variant) -> tuple[str, str]:
    """(name, thought) for the reply."""
    lang = "cuda" if v.language == "cuda" else "cpu"
    name = f"{spec.kind}_{lang}_b{v.block}" + (f"_u{v.unroll}" if v.unroll > 1 else "")
    cuda_how, cpu_how, thought = _THOUGHTS.get(spec.family, _THOUGHTS["matmul"])
    how = (cuda_how if v.language == "cuda" else cpu_how).format(block=v.block, unroll=v.unroll)
    return name, thought.format(kind=spec.kind, how=how)
