"""Read a reference op (KernelBench ``Model``) and classify it for the offline model.

Finds the reference in a prompt (the fenced block defining ``class Model``), or in the
bundled suite by op name, then recognises one of the template families from ``forward``:
elementwise activations, reductions over a dim, softmax / log-softmax, layer norm, and 2-D
matmul. Returns an ``OpSpec`` carrying what the renderer needs: ``Model.__init__`` copied
verbatim (so ``ModelNew`` keeps its constructor and parameters), ``forward``'s signature,
and Python expressions for the runtime arguments (dim, keepdim, eps...).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
REPO_OPS = Path(__file__).resolve().parents[3] / "reference_ops"

# name in torch / F -> (op code, default a, default b) of the elementwise kernel
ACTIVATIONS = {
    "relu": (0, 0.0, 0.0), "leaky_relu": (1, 0.01, 0.0), "sigmoid": (2, 0.0, 0.0),
    "tanh": (3, 0.0, 0.0), "gelu": (4, 0.0, 0.0), "silu": (5, 0.0, 0.0), "elu": (6, 1.0, 0.0),
    "softplus": (7, 1.0, 20.0), "hardtanh": (8, -1.0, 1.0),
}
_ACT_KW = {"leaky_relu": ("negative_slope", None), "elu": ("alpha", None),
           "softplus": ("beta", "threshold"), "hardtanh": ("min_val", "max_val")}
REDUCTIONS = {"sum": 0, "mean": 1, "max": 2, "amax": 2, "min": 3, "amin": 3}


class UnknownOp(ValueError):
    """The offline model has no template for this op."""


@dataclass
class OpSpec:
    family: str  # elementwise | reduction | rownorm | matmul
    kind: str  # relu, sum, softmax, layer_norm, matmul, ...
    init_src: str  # ModelNew.__init__ source, indented 4 spaces
    forward_def: str  # "def forward(self, x: torch.Tensor) -> torch.Tensor:"
    args: list[str]  # forward's tensor argument names
    exprs: dict[str, str] = field(default_factory=dict)  # runtime argument expressions
    constants: str = ""  # module-level constants the copied code refers to
    reference: str = ""


def find_reference(prompt: str, op: str | None) -> str | None:
    """The reference source: a fenced block in the prompt defining ``class Model``, else the
    bundled op file named ``op``."""
    for body in _FENCE.findall(prompt):
        if re.search(r"^class\s+Model\s*\(", body, re.M) and "def forward" in body:
            return body
    m = re.search(r"^(import torch.*?^class\s+Model\s*\(.*?)(?=^```|\Z)", prompt, re.M | re.S)
    if m and "def forward" in m.group(1):
        return m.group(1)
    if op:
        stem = op.rsplit("/", 1)[-1]
        for p in sorted(REPO_OPS.rglob(f"{stem}.py")) if REPO_OPS.is_dir() else []:
            return p.read_text()
    return None


def analyze(reference: str) -> OpSpec:
    try:
        tree = ast.parse(reference)
    except SyntaxError as e:
        raise UnknownOp(f"reference does not parse: {e}") from e
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    if cls is None:
        raise UnknownOp("no class Model in the reference")
    fns = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
    if "forward" not in fns:
        raise UnknownOp("Model has no forward")
    fwd = fns["forward"]
    init_src = _init_source(reference, fns.get("__init__"))
    args = [a.arg for a in fwd.args.args[1:]]
    forward_def = _def_line(fwd)
    body = "\n".join(ast.get_source_segment(reference, s) or "" for s in fwd.body)
    spec = _classify(body, init_src, args)
    spec.forward_def = forward_def
    spec.init_src = init_src
    spec.reference = reference
    used = set(re.findall(r"\b[A-Za-z_]\w*\b", init_src + " " + " ".join(spec.exprs.values())))
    spec.constants = _constants(tree, reference, used)
    return spec


def _classify(body: str, init_src: str, args: list[str]) -> OpSpec:
    b = re.sub(r"\s+", " ", body)
    blank = OpSpec(family="", kind="", init_src="", forward_def="", args=args)
    if len(args) == 2 and re.search(r"torch\.(matmul|mm)\s*\(|@", b) and "bmm" not in b:
        blank.family, blank.kind = "matmul", "matmul"
        return blank
    m = re.search(r"(?:torch|F|nn\.functional)\.(log_softmax|softmax)\s*\(|\.(log_softmax|softmax)\s*\(", b)
    if m:
        blank.family, blank.kind = "rownorm", (m.group(1) or m.group(2))
        blank.exprs["dim"] = _dim_expr(b, default="-1")
        return blank
    ln = re.search(r"self\.(\w+)\s*=\s*nn\.LayerNorm\s*\(", init_src)
    if ln and re.search(rf"self\.{ln.group(1)}\s*\(", b):
        attr = ln.group(1)
        blank.family, blank.kind = "rownorm", "layer_norm"
        blank.exprs.update(weight=f"self.{attr}.weight", bias=f"self.{attr}.bias",
                           eps=f"self.{attr}.eps", shape=f"self.{attr}.normalized_shape")
        return blank
    m = re.search(r"torch\.(sum|mean|amax|amin|max|min)\s*\(|\.(sum|mean|amax|amin|max|min)\s*\(", b)
    if m and len(args) == 1:
        kind = m.group(1) or m.group(2)
        dim = _dim_expr(b, default=None)
        if dim is None:
            raise UnknownOp(f"{kind} without a dim: only reductions over one dim have a template")
        blank.family, blank.kind = "reduction", kind
        blank.exprs["dim"] = dim
        kd = re.search(r"keepdim\s*=\s*([^,)]+)", b)
        blank.exprs["keepdim"] = kd.group(1).strip() if kd else "False"
        return blank
    for name in ACTIVATIONS:
        if re.search(rf"(?:torch|F|nn\.functional|torch\.nn\.functional)\.{name}\s*\(|\.{name}\s*\(\s*\)", b):
            blank.family, blank.kind = "elementwise", name
            code, a, bb = ACTIVATIONS[name]
            kws = _ACT_KW.get(name, (None, None))
            blank.exprs["a"] = _kw(b, kws[0], repr(a)) if kws[0] else repr(a)
            blank.exprs["b"] = _kw(b, kws[1], repr(bb)) if kws[1] else repr(bb)
            if name == "gelu" and "tanh" in b:
                raise UnknownOp("gelu(approximate='tanh') has no template")
            return blank
    raise UnknownOp("no offline template for this op (families: activations, sum/mean/max/min "
                    "over a dim, softmax, log_softmax, LayerNorm, 2-D matmul)")


def _dim_expr(b: str, default: str | None) -> str | None:
    m = re.search(r"\bdim\s*=\s*([^,)\]]+)", b)
    if m:
        return m.group(1).strip()
    m = re.search(r"(?:sum|mean|amax|amin|max|min|softmax|log_softmax)\s*\(\s*[\w.]+\s*,\s*([^,)=]+)\s*[,)]", b)
    if m:
        return m.group(1).strip()
    return default


def _kw(b: str, key: str, default: str) -> str:
    m = re.search(rf"\b{key}\s*=\s*([^,)]+)", b)
    return m.group(1).strip() if m else default


def _def_line(fn: ast.FunctionDef) -> str:
    ret = f" -> {ast.unparse(fn.returns)}" if fn.returns is not None else ""
    return f"def forward({ast.unparse(fn.args)}){ret}:"


def _init_source(src: str, fn: ast.FunctionDef | None) -> str:
    if fn is None:
        return "    def __init__(self):\n        super().__init__()\n"
    seg = ast.get_source_segment(src, fn, padded=True) or ""
    lines = seg.splitlines()
    indent = len(lines[0]) - len(lines[0].lstrip())
    out = "\n".join("    " + ln[indent:] if ln.strip() else "" for ln in lines)
    out = re.sub(r"super\s*\(\s*Model\s*,\s*self\s*\)", "super(ModelNew, self)", out)
    return out + "\n"


def _constants(tree: ast.Module, src: str, used: set[str]) -> str:
    out = []
    for n in tree.body:
        if isinstance(n, ast.Assign) and all(isinstance(t, ast.Name) for t in n.targets):
            names = {t.id for t in n.targets}
            if names & used and names.isdisjoint({"META", "SHAPES"}):
                out.append(ast.get_source_segment(src, n) or "")
    return "\n".join(out)
