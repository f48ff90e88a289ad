"""Several models behind one ``ChatModel`` (AI CUDA Engineer samples from an ensemble).

``chat(model=NAME)`` routes to the member whose name (or bare model name) is NAME;
``model=None`` uses the first member. ``members`` lists the names a method may pick.
"""

from __future__ import annotations

from harness.llm.base import CallContext, ChatModel, ChatResult, LLMError


class EnsembleModel:
    def __init__(self, models: list[ChatModel]):
        if not models:
            raise ValueError("an ensemble needs at least one model")
        self.models = list(models)
        self.name = ",".join(m.name for m in models)
        self.offline = all(m.offline for m in models)

    @property
    def members(self) -> list[str]:
        return [m.name for m in self.models]

    def pick(self, model: str | None) -> ChatModel:
        if model is None:
            return self.models[0]
        for m in self.models:
            if model in (m.name, m.name.split(":", 1)[-1], getattr(m, "model", None)):
                return m
        raise LLMError(f"model {model!r} is not in the ensemble {self.members}; pick one of those")

    # the ChatModel.chat signature (harness/llm/base.py), repeated on purpose: a backend
    # implements the protocol; wrappers write it once (ModelWrapper)
    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        context: CallContext,
        temperature: float | None = None,
        max_tokens: int | None = None,
        model: str | None = None,
    ) -> ChatResult:
        return self.pick(model).chat(
            messages, context=context, temperature=temperature, max_tokens=max_tokens
        )
