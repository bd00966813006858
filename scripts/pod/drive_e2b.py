"""scripts/test-pod.sh's E2B client: the e2b PyPI SDK against the pod's daemon, with the
token (the token-protected image's way in: docs/remote.md, "The container"). A few calls,
then JOBS background commands started and killed, each leaving a process tree behind.
Prints one JSON object. Usage: drive_e2b.py URL TOKEN JOBS"""

import json
import sys
import time

from packaging.version import Version

from e2b import ConnectionConfig, Sandbox

url, token, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
sandbox = Sandbox(
    sandbox_id="pod",
    sandbox_domain=None,
    envd_version=Version("0.6.4"),
    envd_access_token=token,
    traffic_access_token=None,
    # The SDK sends the token it finds in these headers (its sandbox constructor does not
    # add it in debug mode).
    connection_config=ConnectionConfig(
        debug=True, sandbox_url=url, extra_sandbox_headers={"E2b-Sandbox-Id": "pod", "X-Access-Token": token}
    ),
)
seen = {}
r = sandbox.commands.run("echo hello; id -u; node --version; python3 -m venv /tmp/v && /tmp/v/bin/pip --version >/dev/null && echo venv-ok")
seen["run"] = {"exit_code": r.exit_code, "stdout": r.stdout}
r = sandbox.commands.run(
    "for t in make gcc less unzip xz ssh git curl pip3; do command -v $t >/dev/null || echo missing:$t; done; echo checked"
)
seen["tools"] = r.stdout
sandbox.files.write("/workspace/hello.txt", "from the sdk")
seen["file"] = sandbox.files.read("/workspace/hello.txt")

started = time.monotonic()
for _ in range(jobs):
    # A tree: a background child, a double-forked grandchild (re-parented at once), a wait.
    h = sandbox.commands.run("sleep 300 & (sleep 300 &); sleep 300 & wait", background=True)
    sandbox.commands.kill(h.pid)
seen["jobs"] = jobs
seen["jobs_seconds"] = round(time.monotonic() - started, 1)
print(json.dumps(seen))
