#!/usr/bin/env python3
"""Session 21: one summary of a call's outputs (a folder like /var/tmp/s21): the logs' text and, from
every verdict JSON, the fields this session checks (evidence.build and its pch count,
evidence.judging_workers_started_beside, build_apart)."""
import json
import sys
import tarfile
from pathlib import Path

W = Path(sys.argv[1])


def show(title, path):
    p = W / path
    print(f"===== {title} ({path})")
    print(p.read_text(errors="replace")[-7000:] if p.exists() else "(missing)")


def brief(v):
    ev = v.get("evidence") or {}
    return json.dumps({"status": v.get("status"), "rule": v.get("rule"), "message": (v.get("message") or "")[:160],
                       "build": ev.get("build"), "judging_workers_started_beside": ev.get("judging_workers_started_beside"),
                       "build_apart": ev.get("build_apart"), "sealed": ev.get("sealed"),
                       "durations_s": {k: v.get("durations_s", {}).get(k) for k in ("build", "compile", "total")}})


def verdict(text, name):
    try:
        v = json.loads(text)
    except ValueError as e:
        print(f"  {name}: no verdict ({e})")
        return
    print(f"  {name}: {brief(v)}")


for t, p in (("machine", "env.txt"), ("timeline", "timeline.txt"), ("pip", "pip.log")):
    show(t, p)
show("integrity summary", "integrity/summary.txt")
tgz = W / "integrity" / "logs.tgz"
if tgz.exists():
    print("===== integrity: relu repeat verdicts (logs.tgz)")
    with tarfile.open(tgz) as tf:
        for m in sorted(tf.getmembers(), key=lambda m: m.name):
            if m.name.endswith(".json") and m.isfile():
                verdict(tf.extractfile(m).read().decode(errors="replace"), m.name)
show("pch headers", "pch-headers.txt")
print("===== pch judgements (fresh build caches, KH_BUILD_PCH=1)")
for p in sorted(W.glob("pch-*.json")):
    verdict(p.read_text(errors="replace"), p.name)
    err = p.with_suffix(".err")
    if err.exists() and err.stat().st_size:
        print("    stderr tail:", err.read_text(errors="replace")[-600:].replace("\n", " | "))
print("===== pytest benchmark: main.cpp parsed vs precompiled")
b = W / "bench-pch.json"
if b.exists():
    for x in json.loads(b.read_text()).get("benchmarks", []):
        print(" ", x.get("name"), json.dumps(x.get("extra_info")), "mean_s", round(x.get("stats", {}).get("mean", 0), 2))
show("pytest benchmark log", "bench-pch.log")
show("slim summary", "slim/summary.txt")
c = W / "slim" / "conformance-slim.jsonl"
if c.exists():
    print("===== slim conformance: build evidence per judgement")
    for line in c.read_text().splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if "kernel" in r:
            print(f"  {r['kernel']:40} {r['rules']:8} {r['status']:10} agree={r['agree']} build={json.dumps(r.get('build'))} "
                  f"apart={(r.get('build_apart') or '')[:40] if isinstance(r.get('build_apart'), str) else r.get('build_apart')}")
