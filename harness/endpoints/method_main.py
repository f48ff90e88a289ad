"""Run one method as an isolated program: ``python -m harness.endpoints.method_main --method NAME``.

The program sees only the two endpoints (see client.py for the environment): it fetches the
task and budget, builds the method by name (a built-in, an entry point, or a submission
folder path), and drives ``optimize`` with a ChatModel on the LLM gateway and an ``evaluate``
on the evaluation endpoint. The harness side stores and yields every judged proposal, so the
program's own output is only a log. Exit 0 when the method ends or the budget is spent.
"""

from __future__ import annotations

import sys

import click

from harness.endpoints.client import EndpointSession
from harness.llm.base import BudgetExhausted


@click.command()
@click.option(
    "--method",
    "method_name",
    required=True,
    help="built-in method name, entry point name, or submission folder path",
)
def main(method_name: str) -> None:
    from harness.methods.registry import get_method

    session = EndpointSession.from_env()
    task = session.task()
    budget = session.budget()
    method = get_method(method_name)
    llm = session.chat_model()
    n = 0
    gen = method.optimize(task, llm, session.evaluate, budget)
    try:
        for proposal in gen:  # each came in through session.evaluate: the one channel
            n += 1
            v = proposal.verdict
            print(
                f"[{method_name}] {task.op} proposal {n}: {v.status.value if v else '?'}",
                file=sys.stderr,
                flush=True,
            )
    except BudgetExhausted as e:
        print(f"[{method_name}] budget spent: {e}", file=sys.stderr, flush=True)
    finally:
        gen.close()
    print(f"[{method_name}] done: {n} proposals", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
