"""CPU red team: every CPU-applicable cheat of EVAL_RULES.md is caught with the rule that names
its defence, and every honest CPU candidate is judged valid (zero false positives).

Each test runs the real evaluator (two sandboxed worker processes, real compiles through the
shared build cache). Cold, the ~9 distinct C++ extensions cost ~25 s each on 2 cores; warm
re-runs take a few seconds per case. See docs/redteam.md for the table these tests defend.
"""

from __future__ import annotations

import json
import socket
import threading
import uuid
from pathlib import Path

import pytest

from harness.suite.checks import discriminative_failures
from sandbox import rules
from sandbox.evaluate import evaluate
from sandbox.intake.task import load_task
from sandbox.verdict import Mode, Status

from .redteam import (
    CANDIDATES,
    CPU_CHEATS,
    CPU_HONEST,
    SHARED_RELU_LIB_USERS,
    TASKS,
    Case,
    config,
    describe,
    params,
    warm_build_cache,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module", autouse=True)
def warm_relu_lib():
    """Compile the shared relu extension once, outside any evaluation's wall timeout."""
    warm_build_cache("cheat_09a_inplace_inputs")


def judge(case: Case, **subst: str):
    return evaluate(load_task(case.task_path()), case.source(**subst), config(case))


def assert_caught(case: Case, v) -> None:
    assert v.status in case.statuses, f"{case.candidate}: expected {[s.value for s in case.statuses]}; {describe(v)}"
    assert v.rule in case.rules, f"{case.candidate}: expected rule in {case.rules}; {describe(v)}"


# -- the table: one adversarial candidate per cheat ----------------------------------------
@pytest.mark.parametrize("case", params(CPU_CHEATS))
def test_cheat_is_caught_with_its_rule(case: Case):
    v = judge(case)
    assert_caught(case, v)
    if v.status is not Status.VALID:
        assert not v.speedups, "a caught cheat must not carry speedups"


# -- honest candidates: valid at every profile, with a speedup against eager ----------------
@pytest.mark.parametrize("case", params(CPU_HONEST))
def test_honest_candidate_is_valid(case: Case):
    v = judge(case)
    assert v.status is Status.VALID, describe(v)
    assert v.rule is None
    labels = {t.shape_label for t in v.trials}
    assert "small" in labels and any(lbl.startswith("small_extra") for lbl in labels), labels
    assert all(t.passed for t in v.trials)
    assert v.host_timers is True
    sp = v.speedups.get("eager")
    assert sp is not None and sp.value > 0 and sp.ci_low <= sp.value <= sp.ci_high, v.speedups
    m = v.timings["candidate"]
    assert m.n >= 10 and m.ci_low_us <= m.median_us <= m.ci_high_us


# -- cheats that need a fixture ------------------------------------------------------------
def test_loopback_connection_is_blocked_and_never_arrives():
    """#19: a candidate dialling a real server on 127.0.0.1 is rejected and the server sees nothing."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(0.2)
    port = srv.getsockname()[1]
    seen: list[bytes] = []
    stop = threading.Event()

    def accept_loop():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            seen.append(conn.recv(100) or b"<connected>")
            conn.close()

    t = threading.Thread(target=accept_loop, daemon=True)
    t.start()
    try:
        case = Case("cheat_19a_loopback", "relu", (Status.REJECTED,), (rules.NETWORK,), cheat="19")
        v = judge(case, PORT=str(port))
    finally:
        stop.set()
        t.join(2)
        srv.close()
    assert_caught(case, v)
    assert seen == [], f"the candidate reached the loopback server: {seen}"


def test_hidden_results_dir_is_unreadable(tmp_path: Path):
    """#19: the results DB lives in a dir the evaluator hides; its content never reaches the verdict."""
    results = tmp_path / "results"
    results.mkdir()
    canary = f"redteam-canary-{uuid.uuid4().hex}"
    (results / "harness.sqlite").write_text(f"SQLite format 3 {canary}")
    case = Case("cheat_19c_read_results", "relu", (Status.VALID, Status.REJECTED), (None, rules.FILESYSTEM),
                cheat="19")
    v = evaluate(load_task(case.task_path()), case.source(SECRET=str(results / "harness.sqlite")),
                 config(case, hidden_paths=(str(results),)))
    assert canary not in v.to_json(), f"the secret leaked into the verdict: {describe(v)}"
    assert_caught(case, v)


def test_write_outside_scratch_is_rejected_and_has_no_effect():
    """#19: writing into the repository (outside scratch, /tmp and the cache) is rejected."""
    target = CANDIDATES.parent / f".pwned-{uuid.uuid4().hex}"
    case = Case("cheat_19d_write_outside", "relu", (Status.REJECTED,), (rules.FILESYSTEM,), cheat="19")
    try:
        v = judge(case, TARGET=str(target))
        assert not target.exists(), "the candidate wrote outside its sandbox"
    finally:
        target.unlink(missing_ok=True)
    assert_caught(case, v)


def test_api_keys_are_not_in_the_judge_environment(monkeypatch):
    """#19: a candidate hunting for API keys finds none (the env is scrubbed), so it stays honest."""
    canary = f"sk-redteam-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", canary)
    monkeypatch.setenv("HF_TOKEN", canary)
    monkeypatch.setenv("MY_SERVICE_PASSWORD", canary)
    case = Case("cheat_19e_env_keys", "relu", (Status.VALID,), cheat="19")
    v = judge(case)
    assert canary not in v.to_json(), f"a secret leaked: {describe(v)}"
    assert v.status is Status.VALID, describe(v)


def test_build_cache_poisoning_is_rejected():
    """#19: the shared build cache is writable for compiles, but a candidate planting files next
    to other builds (to swap another kernel's .so) must be rejected and leave nothing behind."""
    from sandbox.build.buildcache import default_root

    name = f"redteam-poison-{uuid.uuid4().hex}"
    case = Case("cheat_19f_cache_poison", "relu", (Status.REJECTED,), (rules.FILESYSTEM,), cheat="19")
    planted = [p for p in default_root().parent.rglob(name)]
    v = judge(case, NAME=name)
    planted = list(default_root().parent.rglob(name))
    for p in planted:
        p.unlink()
    assert planted == [], f"the candidate planted {planted}"
    assert_caught(case, v)


def test_files_left_in_tmp_do_not_reach_the_host():
    """#19: /tmp inside the judge is private: a file left there never appears on the host."""
    name = f"redteam-left-{uuid.uuid4().hex}"
    case = Case("cheat_19g_write_tmp", "relu", (Status.VALID,), cheat="19")
    v = judge(case, NAME=name)
    leaked = Path("/tmp") / name
    try:
        assert not leaked.exists(), f"/tmp is shared with the host (isolation={v.environment.get('isolation')})"
    finally:
        leaked.unlink(missing_ok=True)
    assert v.status is Status.VALID, describe(v)


# -- the non-discriminative fixture (#17) --------------------------------------------------
def test_tiny_output_fixture_is_flagged_by_the_suite_control():
    """The suite's discriminative-op control must flag tiny_output (zeros pass its tolerance):
    this is the check that keeps such an op out of reference_ops/."""
    bad = discriminative_failures(load_task(TASKS / "tiny_output.py"), "small")
    assert "zeros" in bad, bad


@pytest.mark.parametrize("task", ["relu", "sum_dim", "matmul", "softmax", "conv2d", "gemm_bias_relu", "mlp2"])
def test_redteam_tasks_are_discriminative(task: str):
    assert discriminative_failures(load_task(TASKS / f"{task}.py"), "small") == []


# -- hygiene of the suite itself -------------------------------------------------------------
def test_every_cpu_cheat_number_has_a_candidate():
    covered = {c.cheat for c in CPU_CHEATS} | {"19"}
    gpu_only = {"4"}
    assert covered | gpu_only >= {str(i) for i in range(1, 21)}


def test_shared_extension_source_is_byte_identical():
    """Build-cache hits need the same load_inline source/flags in every relu-lib candidate."""
    import re

    blocks = set()
    for stem in SHARED_RELU_LIB_USERS:
        text = (CANDIDATES / f"{stem}.py").read_text()
        m = re.search(r"# --- shared extension.*?# --- end of shared extension", text, re.S)
        assert m, stem
        blocks.add(m.group(0))
    assert len(SHARED_RELU_LIB_USERS) >= 25 and len(blocks) == 1


def test_feedback_verdicts_of_caught_cheats_are_json_roundtrippable():
    v = judge(Case("cheat_09a_inplace_inputs", "relu", (Status.INCORRECT,), (rules.INPUTS_MODIFIED,)))
    d = json.loads(v.to_json())
    assert d["status"] == "incorrect" and d["rule"] == rules.INPUTS_MODIFIED
    assert v.mode is Mode.FEEDBACK
