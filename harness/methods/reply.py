"""The reply format every built-in method asks for, and its parser.

A reply has three parts: a name, a thought (the rationale / insight EvoEngineer stores as
I3; EoH's one-sentence idea), and the code (a ``ModelNew`` Python source). The canonical
form, which prompts show and the offline model writes::

    ## Name
    tiled_smem_matmul_v2
    ## Thought
    Tile A and B through shared memory so each element is read from DRAM once per tile.
    ## Code
    ```python
    ...ModelNew source...
    ```

Parsing is forgiving (any heading level, bold labels, missing name/thought, a lone code
fence, several fences: the one defining ``ModelNew`` wins) but a reply without a code block
defining ``ModelNew`` (``class ModelNew`` or ``ModelNew = YourClass``, as the evaluator accepts) is a
parse failure with a reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.S)
# A section label: "## Name", "**Thought:**", "Code:" ... A bare word at the start of a line
# ("insight-two", "Name the kernel ...") is text, not a label: it needs a heading mark, bold or
# a colon, and must end at whitespace, a colon, an asterisk or the end of the line.
_SECTION = re.compile(
    r"^[ \t]*(?P<h>#{1,6}[ \t]*)?(?P<b>\*\*)?(?P<label>name|thought|idea|insight|code)(?=[\s:*]|$)"
    r"(?:\*\*)?[ \t]*(?P<c>:)?(?:\*\*)?[ \t]*(?P<rest>.*)$",
    re.I | re.M,
)


@dataclass
class ParsedReply:
    name: str = ""
    thought: str = ""
    code: str = ""
    error: str | None = None  # None when the reply is usable

    @property
    def ok(self) -> bool:
        return self.error is None


def format_reply(name: str, thought: str, code: str) -> str:
    return f"## Name\n{name}\n## Thought\n{thought}\n## Code\n```python\n{code.rstrip()}\n```\n"


# ``class ModelNew`` or ``ModelNew = OtherClass`` (a binding the evaluator accepts too,
# sandbox/intake/candidate.py); a bare ``Model`` is not looked for: a reply may quote the reference's own
_DEFINES_MODELNEW = re.compile(r"^\s*(class\s+ModelNew\b|ModelNew\s*(:\s*[^=\n]+)?=(?!=))", re.M)


def parse_reply(text: str) -> ParsedReply:
    if not text or not text.strip():
        return ParsedReply(error="empty reply")
    fences = _FENCE.findall(text)
    code = ""
    for _lang, body in fences:
        if _DEFINES_MODELNEW.search(body):
            code = body
            break
    if not code:
        if fences:
            return ParsedReply(error="no code block defines ModelNew (class ModelNew, or ModelNew = YourClass)")
        if _DEFINES_MODELNEW.search(text) and "```" not in text:
            code = text  # a bare source without fences
        else:
            return ParsedReply(error="no fenced code block in the reply")
    sections: dict[str, str] = {}
    matches = [
        m
        for m in _SECTION.finditer(_strip_fences(text))
        if m.group("h") or m.group("b") or m.group("c")
    ]
    stripped = _strip_fences(text)
    for i, m in enumerate(matches):
        key = m.group("label").lower()
        key = "thought" if key in ("idea", "insight") else key
        end = matches[i + 1].start() if i + 1 < len(matches) else len(stripped)
        body = (
            (m.group("rest") + "\n" + stripped[m.end() : end].lstrip("\n"))
            .strip()
            .strip("*")
            .strip()
        )
        if key != "code" and key not in sections:
            sections[key] = body
    name = (
        re.sub(r"\s+", "_", sections.get("name", "").splitlines()[0].strip())
        if sections.get("name")
        else ""
    )
    return ParsedReply(
        name=name[:80], thought=sections.get("thought", "").strip(), code=code.strip() + "\n"
    )


def _strip_fences(text: str) -> str:
    return _FENCE.sub("", text)
