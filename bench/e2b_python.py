"""bench/e2b-remote.mjs's Python part: the e2b PyPI SDK (E2B_DEBUG, E2B_SANDBOX_URL set by
the caller) timing commands.run("true") and a REPL round trip (send_stdin, then the
stream's answer). Prints `RESULT {...}`. Usage: e2b_python.py N"""

import json
import sys
import threading
import time

from e2b import Sandbox

n = int(sys.argv[1])
warmup = 5
sandbox = Sandbox.create(debug=True)


def stats(xs):
    s = sorted(xs)
    return {"median": s[len(s) // 2], "p99": s[min(len(s) - 1, int(0.99 * len(s)))], "n": len(s)}


runs = []
for i in range(n + warmup):
    t0 = time.perf_counter()
    sandbox.commands.run("true")
    if i >= warmup:
        runs.append((time.perf_counter() - t0) * 1000)

repl = sandbox.commands.run("exec python3 -q -u -i", background=True, stdin=True, timeout=0)
buf = []
cond = threading.Condition()


def reader():
    for stdout, _stderr, _pty in repl:
        if stdout:
            with cond:
                buf.append(stdout)
                cond.notify_all()


threading.Thread(target=reader, daemon=True).start()
rtts = []
for i in range(n + warmup):
    k = 1_000_000 + i
    want = f"{k}\n"
    with cond:
        buf.clear()
    t0 = time.perf_counter()
    sandbox.commands.send_stdin(repl.pid, f"print({k})\n")
    with cond:
        if not cond.wait_for(lambda: want in "".join(buf), timeout=30):
            raise SystemExit(f"round trip {k}: no answer")
    if i >= warmup:
        rtts.append((time.perf_counter() - t0) * 1000)
sandbox.commands.kill(repl.pid)
print("RESULT " + json.dumps({"run": stats(runs), "rtt": stats(rtts)}))
