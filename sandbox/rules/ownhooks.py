"""What is the candidate's own code, as the judging worker sees it (trusted code, run in the
candidate's worker after the candidate's import, at the seal and at every monitor report):

* **its modules**: the shared objects it brought into the process (built from its sources
  through the build cache, or loaded from its scratch or /tmp) are the mapped files outside the
  Python installation, the system's library dirs and the harness's own trusted tier;
* **its functions**: every plain C function of those modules (a pybind11 function of a
  ``load_inline`` extension, a C extension's function) is wrapped in place by the op counter's
  library (``Counter.wrap``: the function object keeps its identity, so references taken at import
  count too); a call inside ``forward`` counts as the candidate's own code running, and the time in
  it is measured (the custom-time share);
* **its ops**: op namespaces registered after its import began, by its own code (the tripwire on
  ``torch.library``, sandbox/rules/tripwires.py) or from a C++ source of its own (the dispatcher's
  registration record names the file);
* **what is not its own**: torch (every namespace it had before the import), numpy and the
  libraries numpy's arrays lead to. The tensor <-> numpy bridges (``Tensor.numpy``,
  ``torch.from_numpy``, DLPack, ``as_tensor`` of an array) and numpy's functions on arrays are
  counted inside ``forward`` (``custom_code.library_compute``).

The link check of the same modules is sandbox/rules/linkcheck.py.
"""

from __future__ import annotations

import os
import site
import sys
import types
from typing import Any

from sandbox.rules import linkcheck

OWN, BRIDGE, BRIDGE_ARRAYS, NUMPY = 0, 1, 2, 3
_SUFFIXES = (".so", ".pyd", ".dylib")
_SYSTEM = ("/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/opt", "/snap")


def trusted_roots(extra: list[str]) -> tuple[str, ...]:
    """The Python installation, its site dirs, the harness checkout, the system's dirs and
    ``extra`` (the trusted build tier)."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages(), *_SYSTEM, *extra,
             os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))}
    try:
        roots.add(site.getusersitepackages())
    except Exception:  # noqa: BLE001
        pass
    return tuple(sorted({os.path.realpath(r) for r in roots if r}))


def provided(path: str, trusted: tuple[str, ...], candidate_dirs: tuple[str, ...]) -> bool:
    """A file the candidate brought: the most specific root it lies under decides (its own build
    dirs, scratch and /tmp against the Python installation, the checkout, the system's dirs and
    the trusted tier, which may nest either way: a checkout or venv in /tmp, a cache in the
    checkout); a file under none of them is the candidate's too."""
    real = os.path.realpath(path)
    best, mine = -1, True
    for roots, is_mine in ((trusted, False), (candidate_dirs, True)):
        for r in roots:
            if (real == r or real.startswith(r + os.sep)) and len(r) > best:
                best, mine = len(r), is_mine
    return mine


def mapped_objects() -> list[str]:
    """Paths of the shared objects mapped into this process (/proc/self/maps)."""
    out: list[str] = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6:
                    p = parts[5].strip()
                    if p.startswith("/") and (p.endswith(_SUFFIXES) or ".so." in p) and p not in out:
                        out.append(p)
    except OSError:
        pass
    return out


def candidate_modules(trusted: tuple[str, ...], candidate_dirs: tuple[str, ...]) -> list[types.ModuleType]:
    """Extension modules whose file the candidate brought: in sys.modules, or created since the
    garbage collector last ran (the build cache loads a build without registering it; the
    candidate's worker collects only inside windows, so a module made by the import or by a
    warm-up call is still among the young objects; about a millisecond per 10,000 of them)."""
    import gc

    out, seen = [], set()
    pool = list(sys.modules.values()) + [o for g in (0, 1) for o in gc.get_objects(g) if type(o) is types.ModuleType]
    for mod in pool:
        if type(mod) is not types.ModuleType or id(mod) in seen:
            continue
        seen.add(id(mod))
        f = vars(mod).get("__file__")
        if isinstance(f, str) and f.endswith(_SUFFIXES) and provided(f, trusted, candidate_dirs):
            out.append(mod)
    return out


def wrap_own(counter: Any, modules: list[types.ModuleType]) -> int:
    """Wrap every plain C function of the candidate's modules (and of the classes and submodules
    they define, one level down). Returns how many could not be wrapped for lack of slots."""
    missed = 0
    seen: set[int] = set()

    def one(v: Any) -> None:
        nonlocal missed
        if id(v) in seen:
            return
        seen.add(id(v))
        if counter.wrap(v, OWN) < 0:
            missed += 1

    for mod in modules:
        for v in list(vars(mod).values()):
            tv = type(v)
            if tv is types.BuiltinFunctionType:
                one(v)
            elif isinstance(v, type) or tv is types.ModuleType:
                for w in list(vars(v).values()):
                    if type(w) in (types.BuiltinFunctionType, types.MethodDescriptorType):
                        one(w)
                    elif type(w).__name__ == "instancemethod":  # pybind11 methods wrap a builtin function
                        f = getattr(w, "__func__", None)
                        if type(f) is types.BuiltinFunctionType:
                            one(f)
    return missed


def install_library_counts(counter: Any, torch: Any, cuda: bool = False) -> dict[str, int]:
    """Count, while armed, the tensor <-> numpy bridges and numpy's functions called on arrays
    (before the candidate's import; numpy is already loaded by torch).

    ``cuda``: a judgement on a GPU leaves DLPack out. There DLPack is how a GPU library shares
    device memory with torch (a cupy ``RawKernel`` of the candidate's own source reads and writes
    torch's tensors through it), and what such a library computes is judged by who launched each
    kernel (sandbox/rules/kernelowners.py: cupy's array functions and cuBLAS are not the candidate's).
    ``Tensor.numpy``, ``from_numpy``, ``as_tensor`` of an array and numpy's compute stay counted:
    host compute launches no kernel to attribute (docs/evaluator.md, class 3, where it ends)."""
    done = {"bridges": 0, "numpy": 0}
    bridges = [(torch._C.TensorBase.numpy, BRIDGE)]
    if not cuda:
        bridges += [(getattr(torch._C, name, None), BRIDGE)
                    for name in ("_to_dlpack", "_to_dlpack_versioned", "_from_dlpack")]
    cls = vars(getattr(torch._C, "_VariableFunctionsClass", object))
    for name, kind in (("from_numpy", BRIDGE), ("as_tensor", BRIDGE_ARRAYS), ("asarray", BRIDGE_ARRAYS),
                       ("tensor", BRIDGE_ARRAYS), ("frombuffer", BRIDGE_ARRAYS)):
        # torch.X, and the builtin of the same name the class holds (another object, the same C function)
        bridges += [(getattr(torch, name, None), kind), (getattr(cls.get(name), "__func__", None), kind)]
    for f, kind in bridges:
        if f is not None and counter.wrap(f, kind) == 1:
            done["bridges"] += 1
    np = sys.modules.get("numpy")
    if np is None:
        return done
    counter.set_ndarray(np.ndarray)
    for name in ("asarray", "array", "asanyarray", "ascontiguousarray", "frombuffer", "copyto"):
        f = getattr(np, name, None)
        if f is not None and counter.wrap(f, BRIDGE_ARRAYS) == 1:
            done["bridges"] += 1
    kinds = (np.ufunc, type(np.dot))
    seen: set[int] = set()
    for modname, mod in list(sys.modules.items()):
        if not (modname == "numpy" or modname.startswith("numpy.")) or type(mod) is not types.ModuleType:
            continue
        for v in list(vars(mod).values()):
            if type(v) in kinds and id(v) not in seen:
                seen.add(id(v))
                done["numpy"] += counter.wrap_vectorcall(v) == 1
    for name in ("dot", "sum", "prod", "mean", "max", "min", "clip", "cumsum", "std", "var", "trace", "round",
                 "argmax", "argmin", "sort", "partition", "take", "choose", "compress", "searchsorted"):
        d = vars(np.ndarray).get(name)
        if d is not None and counter.wrap(d, NUMPY) == 1:
            done["numpy"] += 1
    return done


def op_namespaces(torch: Any) -> set[str]:
    return {n.split("::", 1)[0] for n in torch._C._dispatch_get_all_op_names() if "::" in n}


def own_namespaces(torch: Any, before: set[str], attributed: set[str], trusted: tuple[str, ...],
                   candidate_dirs: tuple[str, ...]) -> set[str]:
    """Op namespaces that are the candidate's own: registered by its Python code (``attributed``
    by the tripwire), or new since its import with an op whose registration names a file it brought."""
    own = set(attributed)
    new: dict[str, str] = {}
    for n in torch._C._dispatch_get_all_op_names():
        ns = n.split("::", 1)[0]
        if ns not in before and ns not in own and ns not in new:
            new[ns] = n
    for ns, op in new.items():
        try:
            dump = torch._C._dispatch_dump(op)
        except Exception:  # noqa: BLE001
            continue
        for line in dump.splitlines():
            if "registered at " in line:
                where = line.split("registered at ", 1)[1].split(" ", 1)[0].rsplit(":", 1)[0]
                if where.startswith("/") and provided(where, trusted, candidate_dirs):
                    own.add(ns)
                    break
    return own


def _compute_structs(torch: Any) -> dict[str, bool]:
    """``at::_ops`` struct name (``add_Tensor``) -> whether that aten op computes."""
    from sandbox.rules.atenops import is_compute

    table: dict[str, bool] = {}
    for n in torch._C._dispatch_get_all_op_names():
        if n.startswith("aten::"):
            base, _, overload = n[len("aten::"):].partition(".")
            table[f"{base}_{overload}" if overload else base] = is_compute("aten::" + base)
    return table


def link_report(torch: Any, paths: list[str]) -> dict[str, dict[str, list[str]]]:
    """The link check (sandbox/rules/linkcheck.py) of ``paths``; the op table is made when needed."""
    table: dict[str, bool] = {}

    def op_is_compute(struct_name: str) -> bool:
        if not table:
            table.update(_compute_structs(torch))
        return table.get(struct_name, False)

    return linkcheck.scan(paths, op_is_compute)
