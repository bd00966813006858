#!/bin/bash
# E2B's own SDK test suites (commands, pty, files; JS and Python) against the daemon's
# envd face, in the SDKs' debug mode: what docs/remote.md ("Measured with E2B's own SDK
# tests") reports. Not part of CI: it needs a checkout of github.com/e2b-dev/E2B, which
# CI cannot fetch.
#
#   scripts/e2b-own-suites.sh E2B_CHECKOUT [DAEMON_BINARY]
#
# The suites' paths are /home/user (E2B's sandbox user), so the daemon's project root
# and HOME are /home/user: the script makes it and removes it after, and refuses to run
# where it already exists (it is not ours to empty). Root only (it makes /home/user).
# The JS suite runs on this repository's node_modules (the e2b version package.json
# pins); the Python one in a venv of its own with PyPI's newest e2b, pytest,
# pytest-asyncio and pytest-timeout.
set -euo pipefail
e2b=$(cd "$1" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${2:-$repo/target/debug/native-shell-daemon}
[ "$(id -u)" = 0 ] || { echo "run as root (the suites need /home/user)" >&2; exit 1; }
[ ! -e /home/user ] || { echo "/home/user exists: not running (the suites would write there)" >&2; exit 1; }
work=$(mktemp -d)
cleanup() { rm -rf /home/user "$work"; }
trap cleanup EXIT

# The JS suite: E2B's tests with the SDK's sources replaced by the published package and
# its fixtures by a debug-mode shim; the SDK's unit tests of its own code left out.
js=$work/js
mkdir -p "$js/tests/sandbox"
for part in commands files pty; do
  cp -r "$e2b/packages/js-sdk/tests/sandbox/$part" "$js/tests/sandbox/"
done
rm -f "$js/tests/sandbox/files/entryInfo.test.ts" "$js/tests/sandbox/files/watchHandle.test.ts" "$js/tests/sandbox/commands/commandHandle.test.ts"
find "$js/tests" -name '*.ts' -exec sed -i "s#from '../../../src[^']*'#from 'e2b'#" {} +
ln -s "$repo/node_modules" "$js/node_modules"
cat > "$js/tests/setup.ts" <<'TS'
import { test as base } from 'vitest'
import { Sandbox } from 'e2b'
export const isDebug = true
export const template = 'base'
export const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
export const sandboxTest = base.extend<{ sandbox: Sandbox; template: string; sandboxTestId: string; sandboxOpts: Record<string, unknown> }>({
  template: 'base',
  sandboxTestId: 'test',
  sandboxOpts: {},
  sandbox: async ({ sandboxOpts }, use) => {
    await use(await Sandbox.create({ debug: true, sandboxUrl: process.env.E2B_SANDBOX_URL, ...sandboxOpts }))
  },
})
TS
cat > "$js/vitest.config.mts" <<'TS'
import { defineConfig } from 'vitest/config'
export default defineConfig({ test: { include: ['tests/**/*.test.ts'], testTimeout: 60_000, fileParallelism: false } })
TS

# The Python suites (sync and async), with a debug-mode conftest.
py=$work/py
mkdir -p "$py/tests/sync" "$py/tests/async"
for part in commands files pty; do
  cp -r "$e2b/packages/python-sdk/tests/sync/sandbox_sync/$part" "$py/tests/sync/"
  cp -r "$e2b/packages/python-sdk/tests/async/sandbox_async/$part" "$py/tests/async/"
done
cat > "$py/pytest.ini" <<'INI'
[pytest]
markers =
    skip_debug: skip test if E2B_DEBUG is set.
asyncio_mode=auto
asyncio_default_fixture_loop_scope=session
asyncio_default_test_loop_scope=session
addopts = "--import-mode=importlib"
timeout = 60
INI
cat > "$py/tests/conftest.py" <<'PY'
import os

import pytest
import pytest_asyncio

from e2b import AsyncSandbox, Sandbox


@pytest.fixture
def debug():
    return os.getenv("E2B_DEBUG") is not None


@pytest.fixture(autouse=True)
def skip_by_debug(request, debug):
    if request.node.get_closest_marker("skip_debug") and debug:
        pytest.skip("skipped because E2B_DEBUG is set")


@pytest.fixture()
def sandbox_factory():
    def factory(**kwargs):
        kwargs.pop("template_name", None)
        return Sandbox.create(**kwargs)

    return factory


@pytest.fixture()
def sandbox(sandbox_factory):
    return sandbox_factory()


@pytest_asyncio.fixture
async def async_sandbox_factory():
    async def factory(**kwargs):
        kwargs.pop("template_name", None)
        return await AsyncSandbox.create(**kwargs)

    return factory


@pytest_asyncio.fixture
async def async_sandbox(async_sandbox_factory):
    return await async_sandbox_factory()
PY
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet e2b pytest pytest-asyncio pytest-timeout

# One daemon per suite, on a port of its own, /home/user fresh each time.
run_suite() {
  local name=$1; shift
  rm -rf /home/user && mkdir -p /home/user
  local run port=$((49300 + RANDOM % 500))
  run=$(mktemp -d -p "$work")
  HOME=/home/user XDG_RUNTIME_DIR=$run "$bin" --socket "$run/d.sock" --listen "127.0.0.1:$port" --project-root /home/user 2>"$run/log" &
  local pid=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.1; done
  echo "== $name"
  E2B_DEBUG=true E2B_SANDBOX_URL="http://127.0.0.1:$port" "$@" || true
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
run_suite "E2B's JS suite" bash -c "cd '$js' && npx vitest run 2>&1 | grep -E '✗|×|FAIL|Tests ' || true"
run_suite "E2B's Python suites" bash -c "cd '$py' && '$work/venv/bin/pytest' -q -p no:cacheprovider -rf tests 2>&1 | grep -E '^FAILED|passed|failed' || true"
