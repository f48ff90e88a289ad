"""The GPU benchmark tool: named scenarios, each run writing one JSON record (machine, commit,
command, exit, seconds, its summary) — ``python -m harness.bench list`` shows them.

The scenarios' programs are in ``harness/bench/tools/`` (one measurement each, runnable alone);
``harness/bench/scenarios.py`` names them, with their default arguments and time limits;
``harness/bench/record.py`` writes the records (docs/records/bench/, and $OUT when set, so that a
device call brings them back). docs/performance.md and docs/testing.md say which numbers come
from which scenario.
"""
