"""A name -> factory table: how executors, LLM backends, methods and isolation backends are
found by name. A leaf module (standard library only) so that both the evaluator and the
orchestrator use it without the evaluator importing ``harness``.

A factory is a callable or a lazy ``"module:attr"`` string, imported on first use so that an
optional or broken backend breaks only itself. Unknown names raise ``UnknownName`` (a
``LookupError`` and a ``ValueError``) whose message lists the known names in the order they
were registered, with a "did you mean" where one is close.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class UnknownName(LookupError, ValueError):
    """No entry of that name in a registry."""


def load_target(target: str) -> Any:
    """Import ``"module:attr"`` (``attr`` may be dotted) and return the attribute."""
    if ":" not in target:
        raise ValueError(f"target {target!r}: expected 'module:attr'")
    mod_name, attr = target.split(":", 1)
    obj: Any = importlib.import_module(mod_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class Registry(MutableMapping[str, "Callable[..., T] | str"], Generic[T]):
    """Named factories of one kind, in registration order. A mapping of name -> factory (or
    ``"module:attr"``) plus aliases; ``kind`` and ``option`` only shape the error message."""

    def __init__(self, kind: str, *, option: str = "") -> None:
        self.kind = kind
        self.option = option
        self._entries: dict[str, Callable[..., T] | str] = {}
        self.aliases: dict[str, str] = {}

    # -- the mapping: registered names only (aliases are not keys) --
    def __getitem__(self, name: str) -> Callable[..., T] | str:
        return self._entries[name]

    def __setitem__(self, name: str, factory: Callable[..., T] | str) -> None:
        self._entries[name] = factory

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def register(self, name: str, factory: Callable[..., T] | str | None = None) -> Any:
        """Add ``name``; without ``factory``, a decorator that registers what it decorates."""
        if factory is None:
            def deco(f: Callable[..., T]) -> Callable[..., T]:
                self._entries[name] = f
                return f

            return deco
        self._entries[name] = factory
        return factory

    def alias(self, name: str, target: str) -> None:
        self.aliases[name] = target

    def canonical(self, name: str) -> str:
        return self.aliases.get(name, name)

    def names(self, aliases: bool = False) -> list[str]:
        return list(self._entries) + (list(self.aliases) if aliases else [])

    def factory(self, name: str) -> Callable[..., T]:
        """The callable behind ``name`` (alias resolved, ``"module:attr"`` imported)."""
        real = self.canonical(name)
        if real not in self._entries:
            raise self.unknown(name)
        t = self._entries[real]
        return load_target(t) if isinstance(t, str) else t

    def create(self, name: str, *args: Any, **kwargs: Any) -> T:
        """Build the entry ``name`` with the given arguments."""
        return self.factory(name)(*args, **kwargs)

    def unknown(self, name: str, known: list[str] | None = None) -> UnknownName:
        """The error for ``name``: the known names (``known``, else this registry's), with a
        "did you mean" when one is close."""
        known = self.names(aliases=True) if known is None else known
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        where = f" ({self.option})" if self.option else ""
        return UnknownName(
            f"unknown {self.kind} {name!r}.{hint} Use one of {', '.join(known)}{where}."
        )
