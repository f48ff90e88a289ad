"""Quiet rounds (sandbox/lane/quiet.py): a judgement confirming a timing check stops every build
worker of its process for the round, overlapping rounds keep them stopped until the last ends,
and a build that registers during a round is stopped too."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from sandbox.isolation.proctree import continue_tree, stop_tree
from sandbox.lane import quiet

SPIN = "import time\nwhile True:\n    pass\n"


class Build:
    """A stand-in for a build worker's handle with the real freeze: a spinning process."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", SPIN])
        self.pid = self.proc.pid

    def freeze(self):
        return stop_tree(self.pid)

    def thaw(self, token):
        continue_tree(token)

    def ticks(self) -> int:
        with open(f"/proc/{self.pid}/stat", "rb") as f:
            rest = f.read().rsplit(b")", 1)[1].split()
        return int(rest[11]) + int(rest[12])  # utime + stime

    def runs(self) -> bool:
        t = self.ticks()
        time.sleep(0.3)
        return self.ticks() > t

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def builds():
    made: list[Build] = []
    yield made
    for b in made:
        quiet.unregister(b)
        b.close()


def test_a_round_stops_every_registered_build_and_the_last_round_resumes_them(builds):
    a, b = Build(), Build()
    builds += [a, b]
    quiet.register(a)
    quiet.register(b)
    assert a.runs() and b.runs()
    with quiet.builds_stopped() as n:
        assert n == 2
        assert not a.runs() and not b.runs()
        with quiet.builds_stopped():  # a second lane's round overlaps the first
            assert not a.runs()
        assert not a.runs() and not b.runs()  # the first round is still on: still stopped
        c = Build()
        builds.append(c)
        quiet.register(c)  # a build that starts during a round is stopped as it registers
        assert not c.runs()
    assert a.runs() and b.runs() and c.runs()


def test_a_build_closed_during_a_round_is_not_left_stopped(builds):
    a = Build()
    builds.append(a)
    quiet.register(a)
    with quiet.builds_stopped():
        assert not a.runs()
        quiet.unregister(a)
        assert a.runs()
