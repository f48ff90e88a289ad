"""``harness submit new NAME``: write a submission folder that validates and runs as is.

The method template is a small, complete optimizer (improve the best kernel so far, one
evaluation per trial) written only against the public contract, so an author can run it
with ``--llm offline`` at once and then change the prompting idea.
"""

from __future__ import annotations

from pathlib import Path

from harness.submissions.spec import NAME_RE

# what a fresh scaffold holds until its author fills it in: `harness submit validate` refuses these
PLACEHOLDER_AUTHOR = "Your Name"
PLACEHOLDER_DESCRIPTIONS = (
    "One or two sentences: what this method does differently.",
    "Where these kernels come from (method, model, search budget).",
)

TOML_METHOD = """\
# Submission manifest: `harness submit validate {folder}` checks every field.
[submission]
name = "{name}"
authors = ["{author}"]
description = "{desc_method}"
paper = ""          # https://arxiv.org/abs/... (optional)
code = ""           # https://github.com/... (optional)
license = "MIT"

[method]
entry = "plugin:{cls}"   # module:attr, the module is a .py file in this folder
# [method.options]        # keyword arguments passed to {cls}(...)

[llm]
models = ["gpt-4.1"]     # the model(s) the entry was developed / run with

[budget]
evaluations = 45         # evaluated trials per op (the paper setting)
"""

TOML_KERNELS = """\
# Evaluation-only submission: one precomputed ModelNew per op in kernels/<op>.py
# (or several in kernels/<op>/*.py). `harness submit validate {folder}` checks every field.
[submission]
name = "{name}"
authors = ["{author}"]
description = "{desc_kernels}"
paper = ""
code = ""
license = "MIT"

[method]
kernels = "kernels"

[llm]
models = ["gpt-4.1"]

[budget]
evaluations = 1          # proposals per op taken from kernels/
"""

PLUGIN = '''\
"""{name}: a method plugin for kernel-harness (see CONTRIBUTING.md)."""

from harness.llm.base import CallContext
from harness.methods.base import Proposal
from harness.methods.reply import parse_reply

PROMPT = """You write fast kernels. Target: {{hardware}}. Language: {{language}}.
Rules: {{rules}}
Reference PyTorch op:
```python
{{reference}}
```
{{best}}
Reply with three sections: "## Name" (a short name), "## Thought" (one sentence: your idea),
"## Code" (one ```python block defining class ModelNew with Model's constructor and forward signature).
"""


class {cls}:
    name = "{name}"
    paper = ""
    variant = "plugin"

    def optimize(self, task, llm, evaluate, budget):
        best = None
        for trial in range(budget.evaluations):
            shown = ("Current best kernel (improve it):\\n```python\\n" + best.source + "```"
                     if best is not None else "Write a first kernel.")
            prompt = PROMPT.format(hardware=task.hardware, language=task.language, rules=task.rules,
                                   reference=task.reference_source, best=shown)
            reply = llm.chat([{{"role": "user", "content": prompt}}],
                             context=CallContext(op=task.op, trial=trial, purpose="improve"))
            parsed = parse_reply(reply.text)
            proposal = Proposal(source=parsed.code, name=parsed.name, thought=parsed.thought,
                                operator="improve", parse_error=parsed.error,
                                llm_call_ids=[reply.call_id] if reply.call_id is not None else [])
            verdict = evaluate(proposal)
            yield proposal
            if verdict.valid and (best is None or _runtime(verdict) < _runtime(best.verdict)):
                best = proposal


def _runtime(verdict):
    m = verdict.timings.get("candidate")
    return m.median_us if m else float("inf")
'''


def scaffold(
    name: str, root: str | Path = "submissions", *, kernels: bool = False, author: str = PLACEHOLDER_AUTHOR,
    description: str | None = None
) -> Path:
    """Create ``root/name/``; raise ValueError (with the fix) when the name or folder is unusable."""
    if not NAME_RE.match(name):
        raise ValueError(
            f"{name!r} is not a valid submission name: use lowercase letters, digits and "
            "single dashes, starting with a letter (e.g. plan-then-code)"
        )
    folder = Path(root) / name
    if folder.exists():
        raise ValueError(f"{folder} already exists: pick another name or edit it in place")
    folder.mkdir(parents=True)
    fmt = {
        "name": name,
        "author": author.replace('"', "'"),
        "folder": folder,
        "cls": _class_name(name),
        "desc_method": (description or PLACEHOLDER_DESCRIPTIONS[0]).replace('"', "'"),
        "desc_kernels": (description or PLACEHOLDER_DESCRIPTIONS[1]).replace('"', "'"),
    }
    if kernels:
        (folder / "submission.toml").write_text(TOML_KERNELS.format(**fmt))
        (folder / "kernels").mkdir()
        (folder / "kernels" / "README.md").write_text(
            "Put one ModelNew source per op here, named after the op: relu.py, softmax.py, ...\n"
            "Each must define class ModelNew with the reference Model's constructor and forward signature.\n"
        )
    else:
        (folder / "submission.toml").write_text(TOML_METHOD.format(**fmt))
        (folder / "plugin.py").write_text(PLUGIN.format(**fmt))
    return folder


def _class_name(name: str) -> str:
    """The plugin class of submission ``name``: my-idea -> MyIdeaMethod, my-method -> MyMethod
    (not MyMethodMethod, which a newcomer following CONTRIBUTING.md's MyMethod got)."""
    camel = "".join(w.capitalize() for w in name.split("-"))
    return camel if camel.endswith("Method") else camel + "Method"
