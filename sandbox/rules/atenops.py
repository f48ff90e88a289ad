"""Which ops compute. Torch may allocate, view and copy under either rule set; every other op of
any namespace (``aten::``, ``mkldnn::``, ``quantized::``, ``prims::``, a library's ...) computes,
unless it belongs to an op namespace the candidate registered itself (its own ops, whose kernels
are its own code: sandbox/rules/ownhooks.py finds them). Shared by both rule sets
(sandbox/rules/customcode.py, sandbox/rules/partial.py) and the profile summary (sandbox/rules/profsummary.py).
Plain data, no torch import: the workers' profile summary uses it too."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

ALLOWED_ATEN = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
    "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "fill_", "zero_",
    "view", "_unsafe_view", "reshape", "as_strided", "contiguous", "clone", "copy_", "t", "transpose",
    "permute", "expand", "expand_as", "squeeze", "unsqueeze", "select", "slice", "narrow", "split",
    "split_with_sizes", "chunk", "unbind", "cat", "stack", "detach", "detach_", "alias", "resize_",
    "_to_copy", "to", "lift_fresh", "item", "_local_scalar_dense", "flatten", "unflatten", "view_as",
    "reshape_as", "is_nonzero", "numel", "size", "stride", "set_", "record_stream",
    "_reshape_alias", "lift", "lift_fresh_copy", "resolve_conj", "resolve_neg", "conj", "result_type",
    "_has_compatible_shallow_copy_type", "dim", "is_contiguous", "data_ptr", "movedim", "moveaxis",
}
# ops of other namespaces that are not compute: the judge's own probe (sandbox/rules/opcount.cpp) and
# the profiler's record_function bookkeeping
ALLOWED_OTHER = {
    "kh::probe", "profiler::_record_function_enter", "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
}


def namespace(name: str) -> str:
    return name.split("::", 1)[0] if "::" in name else ""


def is_op(name: str, own: Iterable[str] = ()) -> bool:
    """An op of torch or a library (``ns::name``), not one of the candidate's own namespaces and
    not the judge's probe: under such an op, work is torch's, not the candidate's."""
    if "::" not in name or name in ALLOWED_OTHER:
        return False
    return namespace(name) not in own


def is_compute(name: str, own: Iterable[str] = ()) -> bool:
    """An op outside the allocation/view/copy allowlist, of any namespace but the candidate's own."""
    if not is_op(name, own):
        return False
    ns, op = name.split("::", 1)
    return op not in ALLOWED_ATEN if ns == "aten" else True


def disallowed(ops: Any, own: Iterable[str] = ()) -> list[str]:
    """The compute ops in ``ops`` (names), sorted."""
    own = frozenset(own)
    return sorted(k for k in ops if is_compute(k, own))
