"""The demo test's two phases as a script (session 25): python ctrlc.py RESULTS_DIR [DELAY].

Phase one (when RESULTS_DIR/results does not exist): `bash scripts/demo.sh` with the test's short
arguments (the test's own `demo` and `ops`), SIGINT to its process group once relu is finished.
Phase two: the demo again, SIGINT DELAY s after an op is `searching`. Prints the seconds from the signal to the exit; past WAIT s
(default 60) it prints HUNG, `ps`, a py-spy dump of the harness process and each process's wchan,
and kills the group. Run from the repository root (py-spy: `pip install py-spy` into .venv).
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.getcwd())
from tests.runner.test_demo_script import demo, ops  # noqa: E402 - the test's own helpers (run from the repository root)


def dump(p: subprocess.Popen) -> None:
    subprocess.run(["ps", "-o", "pid,ppid,pgid,stat,etime,cmd", "-g", str(p.pid)])
    subprocess.run(["bash", "-c", ".venv/bin/py-spy dump --pid $(pgrep -f 'harness run' | head -1) 2>&1 | head -80; "
                    f"for c in $(pgrep -s {p.pid}); do echo == $c; cat /proc/$c/wchan; echo; done"])


def ctrl_c_when(tmp: Path, p: subprocess.Popen, ready, delay: float = 0.0) -> str:
    t0 = time.time()
    while p.poll() is None and not ready():
        time.sleep(0.2)
    time.sleep(delay)
    print(f"ready after {time.time() - t0:.1f}s; ops={ops(tmp)}", flush=True)
    os.killpg(p.pid, signal.SIGINT)
    t1 = time.time()
    try:
        out = p.communicate(timeout=int(os.environ.get("WAIT", 60)))[0]
    except subprocess.TimeoutExpired:
        print("HUNG")
        dump(p)
        os.killpg(p.pid, signal.SIGKILL)
        return p.communicate()[0]
    print(f"exited rc={p.returncode} {time.time() - t1:.1f}s after SIGINT")
    return out


def main() -> None:
    tmp = Path(sys.argv[1])
    delay = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    if not (tmp / "results").exists():
        out = ctrl_c_when(tmp, demo(tmp), lambda: ops(tmp).get("relu") == "finished")
        print(out[-1500:])
    out = ctrl_c_when(tmp, demo(tmp), lambda: any(s == "searching" for s in ops(tmp).values()), delay)
    print(out)


if __name__ == "__main__":
    main()
