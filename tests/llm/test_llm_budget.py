"""The harness-enforced budget: the meter, the metered model and the evaluation guard."""

from __future__ import annotations

import pytest

from harness.llm.base import BudgetExhausted, CallContext
from harness.llm.budget import MeteredModel, UsageMeter, guarded_evaluate
from harness.llm.config import Price
from harness.llm.factory import make_model
from harness.methods.base import Budget

CTX = CallContext(op="relu")
MSG = [{"role": "user", "content": "hi"}]


def test_llm_call_cap_stops_before_the_call(fake_server, llm_config):
    meter = UsageMeter(Budget(evaluations=45, llm_calls=2))
    model = MeteredModel(make_model("fake-model", config=llm_config), meter)
    model.chat(MSG, context=CTX)
    model.chat(MSG, context=CTX)
    with pytest.raises(BudgetExhausted, match="LLM calls spent"):
        model.chat(MSG, context=CTX)
    assert len(fake_server.requests) == 2


def test_token_accounting_equals_what_the_server_sent(fake_server, llm_config):
    meter = UsageMeter(Budget(evaluations=45), prices={"fake-model": Price(1.0, 2.0)})
    model = MeteredModel(make_model("fake-model", config=llm_config), meter)
    for _ in range(3):
        model.chat(MSG, context=CTX)
    snap = meter.snapshot()
    assert snap["prompt_tokens"] == 3 * (10 + 2) and snap["completion_tokens"] == 3 * 7
    assert snap["llm_calls"] == 3 and snap["tokens_are_estimates"] is False
    assert snap["cost_usd"] == pytest.approx((36 * 1.0 + 21 * 2.0) / 1e6)


def test_token_cap_refuses_a_call_that_would_exceed_it(fake_server, llm_config):
    meter = UsageMeter(Budget(evaluations=45, tokens=25))
    model = MeteredModel(make_model("fake-model", config=llm_config), meter)
    model.chat(MSG, context=CTX)  # 12 + 7 = 19 tokens
    with pytest.raises(BudgetExhausted, match="tokens spent"):
        model.chat([{"role": "user", "content": "x" * 400}], context=CTX)  # ~100 more would exceed
    assert meter.snapshot()["exhausted"].startswith("tokens spent")


def test_evaluations_are_capped_and_end_llm_calls_too():
    meter = UsageMeter(Budget(evaluations=2))
    judged = []
    evaluate = guarded_evaluate(judged.append, meter)
    evaluate("p1")
    evaluate("p2")
    with pytest.raises(BudgetExhausted, match="evaluations spent"):
        evaluate("p3")
    assert judged == ["p1", "p2"]
    with pytest.raises(BudgetExhausted):
        MeteredModel(make_model("offline"), meter).chat(MSG, context=CTX)


def test_wall_time_budget_uses_the_clock():
    now = [0.0]
    meter = UsageMeter(Budget(evaluations=45, wall_s=10), clock=lambda: now[0])
    meter.check()
    now[0] = 10.5
    with pytest.raises(BudgetExhausted, match="wall time"):
        meter.check()


def test_unpriced_model_reports_no_cost_rather_than_zero():
    meter = UsageMeter(Budget(), prices={"gpt-4.1": Price(2, 8)})
    meter.charge_call(100, 10, model="other-model")
    snap = meter.snapshot()
    assert snap["cost_usd"] is None and snap["unpriced_models"] == ["other-model"]


def test_resumed_meter_continues_from_the_snapshot():
    meter = UsageMeter(Budget(evaluations=3))
    meter.charge_evaluation()
    meter.charge_evaluation()
    meter.charge_call(5, 5, model="offline", estimate=True)
    resumed = UsageMeter.resume(Budget(evaluations=3), meter.snapshot())
    resumed.check()
    resumed.charge_evaluation()
    with pytest.raises(BudgetExhausted):
        resumed.check("evaluation")
    assert resumed.snapshot()["tokens_are_estimates"] is True


def test_offline_calls_are_charged_as_estimates():
    meter = UsageMeter(Budget())
    MeteredModel(make_model("offline"), meter).chat(MSG, context=CTX)
    assert meter.snapshot()["tokens_are_estimates"] is True
