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

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)

# name in torch / F -> (op code, default a, default b) of the elementwise kernel
ACTIVATIONS = {
    "relu": (0, 0.0, 0.0),
    "leaky_relu": (1, 0.01, 0.0),
    "sigmoid": (2, 0.0, 0.0),
    "tanh": (3, 0.0, 0.0),
    "gelu": (4, 0.0, 0.0),
    "silu": (5, 0.0, 0.0),
    "elu": (6, 1.0, 0.0),
    "softplus": (7, 1.0, 20.0),
    "hardtanh": (8, -1.0, 1.0),
}
_ACT_KW = {
    "leaky_relu": ("negative_slope", None),
    "elu": ("alpha", None),
    "softplus": ("beta", "threshold"),
    "hardtanh": ("min_val", "max_val"),
}
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
        from harness.suite.suites import ops_root

        stem = op.rsplit("/", 1)[-1]
        root = ops_root()
        for p in sorted(root.rglob(f"{stem}.py")) if root.is_dir() else []:
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
    _float32_only(tree)
    spec = _classify(fwd, init_src, args)
    spec.forward_def = forward_def
    spec.init_src = init_src
    spec.reference = reference
    used = set(re.findall(r"\b[A-Za-z_]\w*\b", init_src + " " + " ".join(spec.exprs.values())))
    spec.constants = _constants(tree, reference, used)
    return spec


def _callee(func: ast.expr, args: list[str]) -> tuple[str, str | None]:
    """("relu", None) for torch.relu / F.relu; ("sum", "x") for x.sum; ("self.norm", None)."""
    if not isinstance(func, ast.Attribute):
        return "", None
    owner = ast.unparse(func.value)
    if owner in ("torch", "F", "nn.functional", "torch.nn.functional"):
        return func.attr, None
    if owner in args:
        return func.attr, owner
    if owner == "self":
        return f"self.{func.attr}", None
    return "", None


def _classify(fwd: ast.FunctionDef, init_src: str, args: list[str]) -> OpSpec:
    """Only a forward that is exactly ``return <one supported op>(<its inputs>)`` is recognised;
    anything more (a fused chain, a transpose, an extra scale) is ``UnknownOp``."""
    stmts = [
        s for s in fwd.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if len(stmts) != 1 or not isinstance(stmts[0], ast.Return) or stmts[0].value is None:
        raise UnknownOp("forward is not a single `return op(inputs)`: fused ops have no template")
    v = stmts[0].value
    values = False
    if isinstance(v, ast.Attribute) and v.attr == "values":
        v, values = v.value, True
    elif isinstance(v, ast.Subscript) and isinstance(v.slice, ast.Constant) and v.slice.value == 0:
        v, values = v.value, True
    spec = OpSpec(family="", kind="", init_src="", forward_def="", args=args)
    if (
        isinstance(v, ast.BinOp)
        and isinstance(v.op, ast.MatMult)
        and not values
        and [ast.unparse(v.left), ast.unparse(v.right)] == args[:2]
        and len(args) == 2
    ):
        spec.family, spec.kind = "matmul", "matmul"
        return spec
    if not isinstance(v, ast.Call) or any(isinstance(a, ast.Starred) for a in v.args):
        raise UnknownOp("forward does not return one op call")
    name, receiver = _callee(v.func, args)
    ops = ([receiver] if receiver else []) + [ast.unparse(a) for a in v.args]
    kw = {k.arg: ast.unparse(k.value) for k in v.keywords if k.arg}
    if not ops or ops[0] not in args:
        raise UnknownOp(f"{name or 'the op'} is not applied directly to an input")
    if name in ("matmul", "mm") and ops == args and len(args) == 2 and not kw and not values:
        spec.family, spec.kind = "matmul", "matmul"
        return spec
    if len(args) != 1:
        raise UnknownOp("only single-input ops (and A @ B) have templates")
    if name in ("softmax", "log_softmax") and not values and set(kw) <= {"dim"} and len(ops) <= 2:
        spec.family, spec.kind = "rownorm", name
        spec.exprs["dim"] = kw.get("dim") or (ops[1] if len(ops) > 1 else "-1")
        return spec
    if name.startswith("self.") and len(ops) == 1 and not kw and not values:
        attr = name[5:]
        if re.search(rf"self\.{attr}\s*=\s*(?:nn|torch\.nn)\.LayerNorm\s*\(", init_src):
            spec.family, spec.kind = "rownorm", "layer_norm"
            spec.exprs.update(
                weight=f"self.{attr}.weight",
                bias=f"self.{attr}.bias",
                eps=f"self.{attr}.eps",
                shape=f"self.{attr}.normalized_shape",
            )
            return spec
    if name in REDUCTIONS and set(kw) <= {"dim", "keepdim"} and len(ops) <= 3:
        dim = kw.get("dim") or (ops[1] if len(ops) > 1 else None)
        if dim is None:
            raise UnknownOp(f"{name} without a dim: only reductions over one dim have a template")
        if values != (name in ("max", "min")):
            raise UnknownOp(f"{name}: values/indices form not supported")
        spec.family, spec.kind = "reduction", name
        spec.exprs["dim"] = dim
        spec.exprs["keepdim"] = kw.get("keepdim") or (ops[2] if len(ops) > 2 else "False")
        return spec
    if name in ACTIVATIONS and not values:
        names = [k for k in _ACT_KW.get(name, ()) if k]
        allowed = set(names) | {"inplace"} | ({"approximate"} if name == "gelu" else set())
        if set(kw) - allowed or len(ops) > 1 + len(names):
            raise UnknownOp(f"{name} with unsupported arguments {sorted(set(kw) - allowed)}")
        if kw.get("approximate", "'none'").strip("'\"") != "none":
            raise UnknownOp("gelu(approximate='tanh') has no template")
        _, a, b = ACTIVATIONS[name]
        given = dict(zip(names, ops[1:], strict=False)) | {k: kw[k] for k in names if k in kw}
        spec.family, spec.kind = "elementwise", name
        spec.exprs["a"] = given.get(names[0], repr(a)) if names else repr(a)
        spec.exprs["b"] = given.get(names[1], repr(b)) if len(names) > 1 else repr(b)
        return spec
    raise UnknownOp(
        "no offline template for this op (families: activations, sum/mean/max/min "
        "over a dim, softmax, log_softmax, LayerNorm, 2-D matmul)"
    )


def _float32_only(tree: ast.Module, path: str = "reference") -> None:
    for n in tree.body:
        if (
            isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and n.targets[0].id == "META"
        ):
            try:
                meta = ast.literal_eval(n.value)
            except ValueError:
                return
            dtype = meta.get("dtype", "float32") if isinstance(meta, dict) else "float32"
            if dtype != "float32":
                raise UnknownOp(f"{path}: dtype {dtype}: the offline templates are float32 only")


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
