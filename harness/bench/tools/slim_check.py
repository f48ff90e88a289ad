#!/usr/bin/env python3
"""The slim compile cut (sandbox/build/slim.py) against the headers it replaces, kernel by kernel.

    python3 harness/bench/tools/slim_check.py --out DIR [--kernels a,b] [--jobs 2]

For every CUDA kernel of the conformance set (tests/conformance/kernels/cuda_inline_*.py, read as
their ``load_inline`` call receives them) and the three kernels of compile_breakdown.py, it writes
main.cpp and cuda.cu as ``load_inline`` does (torch's own function, which writes both before it
looks for CUDA), once slim (``no_implicit_headers`` with slim.py's preludes) and once as the
harness built them before (main.cpp stock, cuda.cu with the lite cut), and compiles each with the
commands of torch's build.ninja, timing CPU seconds. No GPU needed; ``nvcc`` must be installed.
Writes DIR/slim-check.json and prints a table. A slim file that does not compile is a finding:
the cut then costs that failed attempt before the lite build.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
KERNELS = REPO / "tests" / "conformance" / "kernels"
sys.path.insert(0, str(REPO))


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class _Called(Exception):
    pass


def load_inline_args(path: Path) -> dict:
    """The arguments a kernel file passes to ``load_inline`` (it runs with load_inline recording)."""
    from torch.utils import cpp_extension as ce

    seen: dict = {}

    def record(name, cpp_sources, cuda_sources=None, *args, **kw):
        seen.update(kw, name=name, cpp_sources=cpp_sources, cuda_sources=cuda_sources)
        raise _Called

    spec = importlib.util.spec_from_file_location(f"_slim_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    orig, ce.load_inline = ce.load_inline, record
    try:
        spec.loader.exec_module(mod)
    except _Called:
        pass
    finally:
        ce.load_inline = orig
    if not seen:
        raise ValueError(f"{path}: no load_inline call")
    return seen


_WRITE = r"""
import json, os, sys
a = json.loads(sys.argv[2])
os.makedirs(sys.argv[1], exist_ok=True)
from torch.utils.cpp_extension import load_inline
try:
    load_inline("kh_slim_t", a["cpp"], a["cuda"], functions=a["functions"], build_directory=sys.argv[1],
                no_implicit_headers=True)
except Exception as e:
    print(type(e).__name__, e, file=sys.stderr)
"""


def write_sources(d: Path, cpp: list[str], cuda: list[str], functions) -> None:
    """main.cpp and cuda.cu in ``d`` exactly as load_inline writes them (in a child process)."""
    subprocess.run([sys.executable, "-c", _WRITE, str(d), json.dumps({"cpp": cpp, "cuda": cuda, "functions": functions})],
                   capture_output=True, text=True, timeout=600)
    if not (d / "cuda.cu").exists():
        raise RuntimeError(f"{d}: load_inline wrote no cuda.cu")


def compile_both(cb, d: Path, cpp: list[str], cuda: list[str], a: dict) -> dict:
    """Compile main.cpp and cuda.cu of these sources; CPU seconds and return codes of each."""
    write_sources(d / "src", cpp, cuda, a.get("functions"))
    k = cb.KERNELS[0]._replace(cflags=list(a.get("extra_cflags") or []), cuda_flags=list(a.get("extra_cuda_cflags") or []))
    cmds = cb.commands(k, "kh_slim_t", d / "b")
    for inc in a.get("extra_include_paths") or []:
        for step in ("main", "cuda"):
            cmds[step].insert(1, f"-I{inc}")
    for f in ("main.cpp", "cuda.cu"):
        (d / "b" / f).write_text((d / "src" / f).read_text())
    out = {}
    for step in ("main", "cuda"):
        r = cb.timed(cmds[step], d / f"{step}.log")
        out[step] = {"rc": r["rc"], "cpu_s": r.get("cpu_s"), "wall_s": r.get("wall_s")}
        if r["rc"]:
            out[step]["tail"] = (d / f"{step}.log").read_text()[-1500:]
    return out


def cases(cb) -> dict[str, dict]:
    out = {p.stem: load_inline_args(p) for p in sorted(KERNELS.glob("cuda_inline_*.py"))}
    for k in cb.KERNELS:
        out[f"bench_{k.name}"] = {"cpp_sources": k.decl, "cuda_sources": cb.cuda_src(k), "functions": [cb.fn_name(k)],
                                  "extra_cflags": k.cflags, "extra_cuda_cflags": k.cuda_flags}
    return out


def check(name: str, a: dict, out: Path) -> dict:
    from sandbox.build.buildcache import lite_cuda_sources
    from sandbox.build.slim import STOCK_CUDA, STOCK_MAIN, slim_sources

    cb = _tool("compile_breakdown")
    slimmed = slim_sources(a["cpp_sources"], a["cuda_sources"])
    if slimmed is None:
        return {"kernel": name, "slim": None}
    cuda = a["cuda_sources"]
    lite = lite_cuda_sources(cuda) or cuda
    before = ([STOCK_MAIN, *([a["cpp_sources"]] if isinstance(a["cpp_sources"], str) else a["cpp_sources"])],
              [STOCK_CUDA, *([lite] if isinstance(lite, str) else lite)])
    row = {"kernel": name, "main_slim": slimmed[0][0] != STOCK_MAIN, "cuda_slim": slimmed[1][0] != STOCK_CUDA}
    row["slim"] = compile_both(cb, out / name / "slim", *slimmed, a)
    row["before"] = compile_both(cb, out / name / "before", *before, a)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--kernels", default="", help="comma-separated names (default: all)")
    ap.add_argument("--jobs", type=int, default=1, help="kernels checked at once (CPU times stay per compile)")
    args = ap.parse_args()
    cb = _tool("compile_breakdown")
    todo = cases(cb)
    if args.kernels:
        todo = {k: v for k, v in todo.items() if k in args.kernels.split(",")}
    args.out.mkdir(parents=True, exist_ok=True)
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(lambda kv: check(kv[0], kv[1], args.out), todo.items()))
    (args.out / "slim-check.json").write_text(json.dumps(rows, indent=1))
    print(f"{'kernel':40} {'main slim':>9} {'cpu s':>13} {'cuda slim':>9} {'cpu s':>13}  ok")
    bad = 0
    for r in rows:
        if r["slim"] is None:
            print(f"{r['kernel']:40} not slimmed")
            continue
        s, b = r["slim"], r["before"]
        ok = all(s[x]["rc"] == 0 for x in ("main", "cuda")) and all(b[x]["rc"] == 0 for x in ("main", "cuda"))
        bad += not ok
        print(f"{r['kernel']:40} {str(r['main_slim']):>9} {b['main']['cpu_s']:>5} -> {s['main']['cpu_s']:>5} "
              f"{str(r['cuda_slim']):>9} {b['cuda']['cpu_s']:>5} -> {s['cuda']['cpu_s']:>5}  {'yes' if ok else 'NO'}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
