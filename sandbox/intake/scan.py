"""Static checks of a candidate's source, in the parent, before anything runs.

``validate`` raises ``CandidateError`` for unusable input (does not parse, no class to judge,
a signature that cannot accept the reference's calls: sandbox/intake/candidate.py). ``scan`` finds constructs honest kernels never need
(gc/frame introspection, raw fd writes, timer assignment, threads/subprocess/network
imports) and returns (rule, message) for the first one. It is ONE layer: the runtime audit
hook, the separate reference process and the parent's clock catch what it cannot see.
String constants are not scanned (except for "/proc/self/fd"), so CUDA/C++ source text
inside a Python string does not cause false positives.
"""

from __future__ import annotations

import ast

from sandbox import rules
from sandbox.errors import CandidateError

BANNED_IMPORTS = {
    "threading": rules.THREADS, "_thread": rules.THREADS, "concurrent": rules.THREADS,
    "multiprocessing": rules.SUBPROCESS, "subprocess": rules.SUBPROCESS, "pty": rules.SUBPROCESS,
    "socket": rules.NETWORK, "urllib": rules.NETWORK, "http": rules.NETWORK, "requests": rules.NETWORK,
    "httpx": rules.NETWORK, "ftplib": rules.NETWORK, "asyncio": rules.THREADS,
}
BANNED_CALLS = {
    ("gc", "get_objects"): rules.INTROSPECTION, ("gc", "get_referrers"): rules.INTROSPECTION,
    ("gc", "get_referents"): rules.INTROSPECTION, ("sys", "_getframe"): rules.INTROSPECTION,
    ("sys", "_current_frames"): rules.INTROSPECTION, ("inspect", "stack"): rules.INTROSPECTION,
    ("inspect", "currentframe"): rules.INTROSPECTION, ("inspect", "getouterframes"): rules.INTROSPECTION,
    ("os", "write"): rules.RESULT_CHANNEL, ("os", "fork"): rules.SUBPROCESS, ("os", "system"): rules.SUBPROCESS,
    ("os", "popen"): rules.SUBPROCESS, ("os", "execv"): rules.SUBPROCESS, ("os", "execvp"): rules.SUBPROCESS,
    ("os", "posix_spawn"): rules.SUBPROCESS, ("sys", "settrace"): rules.INTROSPECTION,
    ("sys", "setprofile"): rules.INTROSPECTION,
}
OBSERVER_PROBES = ("profiler", "_profiler_enabled", "_get_dispatch_mode", "_len_torch_dispatch_stack",
                   "_is_torch_function_mode_enabled", "_get_current_dispatch_mode", "_python_dispatch",
                   "_kineto", "record_function")
TIMER_NAMES = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns",
               "elapsed_time", "synchronize", "record", "Event"}
TIMER_OWNERS = {"time", "cuda", "Event", "torch"}


def validate(source: str, filename: str, reference_source: str | None = None) -> ast.Module:
    """Parse and check the candidate's shape; raise CandidateError naming the problem."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as e:
        raise CandidateError(f"{filename}:{e.lineno}: does not parse: {e.msg}") from e
    from sandbox.intake.candidate import entry_point

    entry_point(tree, filename, reference_source)  # CandidateError when nothing is call-compatible
    return tree


def _dotted(node: ast.AST) -> list[str]:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return parts[::-1]


def scan(tree: ast.Module) -> tuple[str, str] | None:
    """(rule, message) for the first banned construct, or None."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                if top in BANNED_IMPORTS:
                    return BANNED_IMPORTS[top], f"line {node.lineno}: import {a.name} is not allowed in a kernel"
        elif isinstance(node, ast.ImportFrom) and node.module:
            top = node.module.split(".")[0]
            if top in BANNED_IMPORTS:
                return BANNED_IMPORTS[top], f"line {node.lineno}: from {node.module} import ... is not allowed"
            for a in node.names:
                if (top, a.name) in BANNED_CALLS:
                    return BANNED_CALLS[(top, a.name)], f"line {node.lineno}: from {top} import {a.name}"
        elif isinstance(node, ast.Call):
            d = _dotted(node.func)
            if len(d) >= 2 and (d[-2], d[-1]) in BANNED_CALLS:
                return BANNED_CALLS[(d[-2], d[-1])], f"line {node.lineno}: {'.'.join(d)}() is not allowed"
            if d and d[-1] == "setattr" and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                    and node.args[1].value in TIMER_NAMES:
                return rules.TIMER_PATCHED, f"line {node.lineno}: setattr(..., {node.args[1].value!r}, ...)"
            if d and d[-1] == "__import__" and node.args and isinstance(node.args[0], ast.Constant):
                top = str(node.args[0].value).split(".")[0]
                if top in BANNED_IMPORTS:
                    return BANNED_IMPORTS[top], f"line {node.lineno}: __import__({top!r})"
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                d = _dotted(t)
                if len(d) >= 2 and d[-1] in TIMER_NAMES and any(o in d[:-1] for o in TIMER_OWNERS):
                    return rules.TIMER_PATCHED, f"line {node.lineno}: assignment to {'.'.join(d)}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "/proc/self/fd" in node.value:
            return rules.RESULT_CHANNEL, "a string names /proc/self/fd (the harness's channel is off limits)"
        elif isinstance(node, ast.Attribute) and node.attr == "f_back":
            return rules.INTROSPECTION, f"line {node.lineno}: frame walking (f_back)"
        if isinstance(node, (ast.Attribute, ast.Name, ast.Constant)):
            name = node.attr if isinstance(node, ast.Attribute) else (
                node.id if isinstance(node, ast.Name) else node.value)
            if isinstance(name, str) and len(name) < 200 and any(p in name for p in OBSERVER_PROBES):
                return rules.TORCH_FALLBACK, (f"line {node.lineno}: the candidate looks at the profiler / "
                                              f"dispatch modes ({name!r}): behaving differently when observed")
    return None
