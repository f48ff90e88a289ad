"""Which aten ops compute. Torch may allocate, view and copy under either rule set; every other
``aten::`` op computes (sandbox/customcode.py, sandbox/partial.py, sandbox/profsummary.py).
Plain data, no torch import: the workers' profile summary uses it too."""

from __future__ import annotations

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


def is_compute(name: str) -> bool:
    """An ``aten::`` op outside the allocation/view/copy allowlist."""
    return name.startswith("aten::") and name.split("::", 1)[1] not in ALLOWED_ATEN


def disallowed(ops: Any) -> list[str]:
    """The ``aten::`` ops in ``ops`` outside the allocation/view/copy allowlist, sorted."""
    return sorted(k for k in ops if is_compute(k))
