"""`harness run --executor/--ray-address/--compile-workers` reach the runner's RunConfig."""

from __future__ import annotations

from tests.support.cli import invoke


class Captured(Exception):
    pass


def test_run_passes_executor_options_to_the_runner(monkeypatch):
    import harness.runner as runner

    seen = {}

    def fake_run(cfg, **kw):
        seen["cfg"] = cfg
        raise Captured

    monkeypatch.setattr(runner, "run", fake_run)
    res = invoke("run", "--method", "one-shot", "--ops", "relu", "--device", "cpu",
                 "--executor", "ray", "--ray-address", "auto", "--compile-workers", "3")
    assert isinstance(res.exception, Captured), res.output
    cfg = seen["cfg"]
    assert (cfg.executor, cfg.ray_address, cfg.compile_workers) == ("ray", "auto", 3)


def test_serial_is_the_default_executor(monkeypatch):
    import harness.runner as runner

    seen = {}
    monkeypatch.setattr(runner, "run", lambda cfg, **kw: seen.setdefault("cfg", cfg) and (_ for _ in ()).throw(Captured))
    res = invoke("run", "--method", "one-shot", "--ops", "relu", "--device", "cpu")
    assert isinstance(res.exception, Captured), res.output
    assert seen["cfg"].executor == "serial"


def test_unknown_executor_is_a_usage_error():
    res = invoke("run", "--method", "one-shot", "--ops", "relu", "--executor", "threads")
    assert res.exit_code == 2 and "threads" in res.output
