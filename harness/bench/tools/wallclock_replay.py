"""Replay the wall-clock cross-checks (sandbox/timing/wallclock.py) on recorded verdicts.

    python3 harness/bench/tools/wallclock_replay.py VERDICT.json|DIR|CASES.jsonl ...

Each GPU verdict keeps the samples its tail, tail-after-steps and parent-clock checks decided on
(evidence ``tail_us``, ``steps_tail_us``, ``gap_us``). This decides them again with the current
``wallclock.check`` (the confirmation round's samples when that round ran, as the judge does)
and prints, per check, the verdicts flagged and the largest honest margins, so a change to the
decision is measured on what the GPU recorded before it is run there. A file whose name holds
``34_hidden`` is cheat #34 (30 us hidden, must be flagged); every other one is taken as honest.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from sandbox.timing import wallclock  # noqa: E402

CHECKS = {"tail_us": "tail", "steps_tail_us": wallclock.STEPS_TAIL, "gap_us": "parent clock"}


def verdicts(paths: list[str]):
    for a in paths:
        p = Path(a)
        files = sorted(p.rglob("*.json")) if p.is_dir() else [p]
        for f in files:
            lines = f.read_text().splitlines() if f.suffix == ".jsonl" else [f.read_text()]
            for i, line in enumerate(lines):
                try:
                    d = json.loads(line)
                except ValueError:
                    continue
                name = d.get("case") or f.name
                yield f"{f.name}:{i}" if f.suffix == ".jsonl" else f.name, name, d.get("evidence", d)


def main(paths: list[str]) -> int:
    rows: dict[str, list[tuple[float, bool, str]]] = {k: [] for k in CHECKS}
    for where, name, ev in verdicts(paths):
        for key, what in CHECKS.items():
            t = ev.get(key)
            if not isinstance(t, dict) or "samples" not in t:
                continue
            s = t["samples"]
            c, k = list(s.get("candidate", [])), list(s.get("control", []))
            if t.get("confirmation_round"):
                c, k = c[-wallclock.CONFIRM_CALLS:], k[-wallclock.CONFIRM_CALLS:]
            # the device time the judge sized the floor from, back from the recorded floor
            frac = wallclock.PARENT_FRACTION if what == "parent clock" else wallclock.TAIL_FRACTION
            g = wallclock.check(c, k, float(t.get("floor", 0.0)) / frac, what)
            if g is None:
                continue
            margin = max(g.excess_us, g.paired_us if g.paired_us is not None else g.excess_us) / g.threshold_us
            rows[key].append((margin, g.hidden, f"{where} ({name})"))
    bad = 0
    for key, r in rows.items():
        cheat = [x for x in r if "34_hidden" in x[2]]
        honest = sorted(x for x in r if "34_hidden" not in x[2])
        caught = sum(h for _, h, _ in cheat) if key == "tail_us" else None
        flagged = [x for x in honest if x[1]]
        bad += len(flagged) + (len(cheat) - caught if caught is not None else 0)
        print(f"{CHECKS[key]}: {len(honest)} honest, {len(flagged)} flagged; largest margins (x threshold): "
              + ", ".join(f"{m:.2f} {w}" for m, _, w in honest[-3:]))
        if caught is not None:
            print(f"  #34: {caught} of {len(cheat)} flagged; smallest margin "
                  f"{min((m for m, _, _ in cheat), default=float('nan')):.2f}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
