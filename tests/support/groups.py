"""Which tests run together on one pytest-xdist worker (``-n 2 --dist loadgroup``, docs/testing.md).

Without a group, xdist hands tests out one at a time, and a costly module- or session-scoped
fixture is built once per worker that runs a test needing it: ``test_judge_integrity.py``'s
``_built`` took 368 s on each of the two workers at once (session 21's emulation). So:

* a file whose tests use a module-scoped fixture runs whole on one worker (group = its path);
* files whose tests use one of the costly session fixtures below run together, whole, on one
  worker (group = the fixture's name): one offline run, one container engine per session;
* every other test stays its own unit, handed out one at a time.

xdist orders the units by their number of tests, largest first (``--loadscope-reorder``, its
default), so the groups start before the single tests, which then even out the two workers' ends.
"""

from __future__ import annotations

import collections

import pytest

# session fixtures costly enough that every file using one belongs on one worker
SHARED_SESSION_FIXTURES = ("offline_relu_run", "docker_client")


def _scope_of(item: pytest.Item, name: str) -> str | None:
    defs = item._fixtureinfo.name2fixturedefs.get(name)  # pytest's resolved fixtures of this test
    return defs[-1].scope if defs else None


def group_of_each_file(items: list[pytest.Item]) -> dict[str, str]:
    """{file path: group name} for the files that need one."""
    by_file: dict[str, list[pytest.Item]] = collections.defaultdict(list)
    for item in items:
        by_file[item.nodeid.split("::", 1)[0]].append(item)
    groups: dict[str, str] = {}
    for path, file_items in by_file.items():
        names = {n for item in file_items for n in item.fixturenames}
        shared = sorted(n for n in SHARED_SESSION_FIXTURES if n in names)
        if shared:
            groups[path] = shared[0]
        elif any(_scope_of(item, n) == "module" for item in file_items for n in item.fixturenames):
            groups[path] = path
    return groups


def add_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test of a grouped file with its group, unless it names one itself."""
    if not getattr(config.option, "loadgroup", False):  # set in xdist's workers under --dist loadgroup
        return
    groups = group_of_each_file(items)
    for item in items:
        group = groups.get(item.nodeid.split("::", 1)[0])
        if group and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
            _suffix(item, group)


def _suffix(item: pytest.Item, group: str) -> None:
    """xdist's scheduler reads a test's group from its node id (``...::test@group``), which xdist's
    own hook writes to ``item._nodeid``. pytest 9.2 keeps the id in ``item._id`` (a ``NodeId``) and
    no longer reads ``_nodeid``: the suffix was lost and every test was handed out alone (found
    2026-11-27: the files above ran on both workers). Write it where this pytest reads it; with an
    older pytest xdist's hook still does (and the scheduler takes the text after the last ``@``)."""
    if not hasattr(item, "_id"):
        return  # a pytest before 9.2, whose ids xdist's hook still writes
    from _pytest.nodeid import coerce_node_id

    item._id = coerce_node_id(f"{item.nodeid}@{group}")
