"""Methods run as isolated programs, talking only to the two endpoints (offline model).

A real run (``harness.runner.orchestrate.run``: SQLite store, offline LLM, real evaluator)
drives an ``IsolatedMethod``. The program starts through an isolation backend with the
eval endpoint and the LLM gateway as unix sockets; a wrapper inside the program first
asserts that the upstream key is nowhere in its environment, then runs
``harness.endpoints.method_main``. The harness process holds a fake upstream key.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from harness.endpoints.launcher import IsolatedMethod, ProgramSettings
from harness.methods.base import Budget
from harness.runner import orchestrate
from tests.support.evalconfig import FAST_OVERRIDES

REPO = Path(__file__).resolve().parents[2]
UPSTREAM_KEY = "sk-upstream-must-never-reach-a-method-0123456789"

# Runs inside the method program: only a hash of the key is in its source.
WRAPPER = f"""
import hashlib, os, runpy, sys
bad = {hashlib.sha256(UPSTREAM_KEY.encode()).hexdigest()!r}
for k, v in os.environ.items():
    for part in [v, *v.split(':'), *v.split('=')]:
        assert hashlib.sha256(part.encode()).hexdigest() != bad, 'upstream key visible in ' + k
assert os.environ['OPENAI_API_KEY'].startswith('kh-gw-'), 'OPENAI_API_KEY is not the gateway token'
print('env-check: upstream key absent', file=sys.stderr, flush=True)
sys.argv = ['method_main', *sys.argv[1:]]
runpy.run_module('harness.endpoints.method_main', run_name='__main__')
"""


def _run_isolated(tmp_path, monkeypatch, method: str, settings: ProgramSettings):
    monkeypatch.setenv("OPENAI_API_KEY", UPSTREAM_KEY)
    settings.argv = [sys.executable, "-c", WRAPPER, "--method", method]
    settings.hide = [str(tmp_path / "results")]
    made: list[IsolatedMethod] = []

    def isolated(name: str, **options):
        made.append(IsolatedMethod(name, settings))
        return made[0]

    monkeypatch.setattr(orchestrate, "get_method", isolated)
    cfg = orchestrate.RunConfig(method=method, ops=["relu"], llm="offline", budget=Budget(evaluations=1),
                                device="cpu", results=tmp_path / "results", progress=False,
                                eval_overrides=dict(FAST_OVERRIDES))
    report = orchestrate.run(cfg)
    return report, made[0]


def _check(report, method: IsolatedMethod, results_dir: Path):
    from harness.store import Results

    (op,) = report.ops
    assert op.status == "finished", f"{op.error}\n--- program log ---\n{method.last_log}"
    assert "env-check: upstream key absent" in method.last_log
    assert op.total == 1  # the budget of 1 evaluation, spent through the endpoint
    results = Results.open(results_dir)
    cands = results.list_candidates(report.run_id, "relu")
    assert len(cands) == 1 and cands[0].source.strip()
    calls = results.store.query("SELECT COUNT(*) AS n FROM llm_calls WHERE run_id=?", (report.run_id,))
    assert calls[0]["n"] >= 1  # the program's LLM calls went through the gateway and were recorded


@pytest.mark.slow
def test_builtin_method_runs_as_a_process_through_the_two_endpoints(tmp_path, monkeypatch):
    report, method = _run_isolated(tmp_path, monkeypatch, "one-shot", ProgramSettings(sandbox="process"))
    _check(report, method, tmp_path / "results")


@pytest.mark.slow
@pytest.mark.podman
def test_example_submission_runs_in_a_container_through_the_two_endpoints(
        tmp_path, monkeypatch, docker_client, hostenv_image):
    from sandbox.isolation.docker_backend import DockerLauncher

    launcher = DockerLauncher(image=hostenv_image, client=docker_client)
    settings = ProgramSettings(sandbox="docker", launcher=launcher)
    report, method = _run_isolated(tmp_path, monkeypatch, str(REPO / "submissions/plan-then-code"), settings)
    _check(report, method, tmp_path / "results")
