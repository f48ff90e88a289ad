"""The import graph runs one way: the evaluator (``sandbox/``) is a leaf that never imports the
orchestrator (``harness/``) or a submission, and no set of modules imports itself round.

The graph is read from source (``importgraph.py``): module-level, function-local and type-only
(``if TYPE_CHECKING:``) imports all count. The judging stages see the judgement through a
``Judging`` protocol of their own (what each uses of it), never by importing ``sandbox.judge``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from importgraph import build_graph, cycles  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GRAPH = build_graph(ROOT)


def test_graph_sees_the_packages():
    assert "sandbox.evaluate" in GRAPH and "harness.runner.orchestrate" in GRAPH
    assert "harness.store" in GRAPH["harness.runner.orchestrate"]


def test_graph_counts_local_and_type_only_imports(tmp_path):
    pkg = tmp_path / "harness"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from harness import b\n"
        "def f():\n    from . import c\n"
    )
    (pkg / "b.py").write_text("import harness.a\n")
    (pkg / "c.py").write_text("from .a import f\n")
    graph = build_graph(tmp_path)
    assert graph["harness.a"] == {"harness.b", "harness.c"}
    assert cycles(graph) == [["harness.a", "harness.b", "harness.c"]]


def test_evaluator_imports_no_harness_and_no_submission():
    arrows = sorted(
        f"{src} -> {dst}"
        for src, dsts in GRAPH.items()
        if src.split(".")[0] == "sandbox"
        for dst in dsts
        if dst.split(".")[0] in ("harness", "submissions")
    )
    assert not arrows, "the evaluator must not import the orchestrator:\n" + "\n".join(arrows)


def test_no_import_cycles():
    found = cycles(GRAPH)
    assert not found, "import cycles (each line: the modules of one cycle):\n" + "\n".join(
        ", ".join(c) for c in found
    )


def test_the_orchestrator_reaches_the_evaluator_only_through_its_contract():
    """harness/ imports sandbox.contract and nothing else of the evaluator (the contract
    re-exports the task format, EvalConfig, Verdict, the errors and the acts). The GPU benchmark
    tool's programs (harness/bench/tools/) are instruments, like the tests: they measure the
    evaluator's parts (its build cache, its phases, its data path) and are no part of the product's
    import graph (nothing imports them; harness.bench runs them as programs)."""
    arrows = sorted(
        f"{src} -> {dst}"
        for src, dsts in GRAPH.items()
        if src.split(".")[0] == "harness" and not src.startswith("harness.bench.tools.")
        for dst in dsts
        if dst.split(".")[0] == "sandbox" and dst not in ("sandbox", "sandbox.contract")
    )
    assert not arrows, "harness/ must import the evaluator from sandbox.contract:\n" + "\n".join(arrows)
    into_tools = sorted(f"{src} -> {dst}" for src, dsts in GRAPH.items() if not src.startswith("harness.bench.tools.")
                        for dst in dsts if dst.startswith("harness.bench.tools"))
    assert not into_tools, "the benchmark tool's programs are run, never imported:\n" + "\n".join(into_tools)
