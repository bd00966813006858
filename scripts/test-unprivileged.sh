#!/usr/bin/env bash
# The suites about containment, the sandbox and the jobs' lifecycle, run again as another,
# unprivileged user (uid 65534), as the product's users run it (an SSH session, a
# container, a CI runner): once inside a cgroup subtree delegated to that user (what
# systemd's Delegate=yes or a container runtime gives) and once in a cgroup it cannot
# write (like an SSH session's session-N.scope, which is root's). Both must pass; a test
# whose capability is missing in a run is skipped with its reason (__test__/capabilities.ts).
# After each run nothing of it may be left running: the run's cgroup must be empty.
#
# Needs root (to become uid 65534 and to make the cgroups) and setpriv (util-linux);
# without either it says so and stops without failing. Run after `npm run build`
# (.ci/run does). `bash scripts/test-unprivileged.sh [test files...]`; with no files, the
# list below (`__test__/` gives the whole default suite: about 3 minutes a run here).
# NSS_UNPRIVILEGED_RUNS=delegated or =plain runs only that one.
#
# uid 65534 cannot write the checkout (nor, on a CI runner, read it: the runner's home is
# not open to others), so it runs in a copy of its own under /tmp: the sources, dist/ and
# the addon copied (tests rewrite some: dist/compat, docs/bad-input.md), node_modules/
# as hard links (650 MB: linked in a second, and files of another owner that it cannot
# change) in directories of its own (vitest's caches go there).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
user=65534
started=$SECONDS

# The files whose tests depend on who runs them: escapes a kill must still end, the
# sandbox (Landlock, seccomp, user namespaces), a dying owner's jobs (a Node process's,
# the daemon's: __test__/daemon/).
default_files=(
  __test__/containment.test.ts
  __test__/lifecycle.test.ts
  __test__/exits.test.ts
  __test__/sandbox.test.ts
  __test__/sandbox-integrity.test.ts
  __test__/sandbox-escapes.test.ts
  __test__/sandbox-unix.test.ts
  __test__/sandbox-caches.test.ts
  __test__/sandbox-secrets.test.ts
  __test__/security.test.ts
  __test__/tools/jobs-kill.test.ts
  __test__/mcp/data.test.ts
  __test__/mcp/modern.test.ts
  __test__/faults/workers.test.ts
  __test__/faults/persist-disk.test.ts
  __test__/stress/trees.test.ts
  __test__/stress/node-sigkill.test.ts
  __test__/daemon/client.test.ts
  __test__/daemon/mcp.test.ts
  __test__/daemon/job-peers.test.ts
  __test__/daemon/short-turns.test.ts
)
files=("$@")
[ ${#files[@]} -gt 0 ] || files=("${default_files[@]}")

skip() {
  echo "skipped: the unprivileged run (scripts/test-unprivileged.sh): $*"
  exit 0
}
[ "$(uname -s)" = Linux ] || skip "it is about Linux's users and cgroups, and this is $(uname -s)"
[ "$(id -u)" = 0 ] || skip "it needs root, to become uid $user and to make the cgroups (run it with sudo)"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is not installed"
ls ./*.node >/dev/null 2>&1 && [ -d dist ] || { echo "test-unprivileged: build first (npm run build)" >&2; exit 1; }

node_bin="$(command -v node)"
as_user=(setpriv --reuid="$user" --regid="$user" --clear-groups)
if ! "${as_user[@]}" "$node_bin" --version >/dev/null 2>&1; then
  echo "test-unprivileged: uid $user cannot run $node_bin (a Node under a private home?); put a Node it can read first on PATH" >&2
  exit 1
fi

# --- The copy ---------------------------------------------------------------------------
stage="$(mktemp -d /tmp/nss-unprivileged.XXXXXX)"
chmod 755 "$stage"
# The user's home: not under /tmp, which every sandboxed job may read and write (the
# sandbox suite checks that a secret in the home directory is unreadable).
home="$stage/home"
[ -d /var/tmp ] && home="$(mktemp -d /var/tmp/nss-unprivileged-home.XXXXXX)"
cgroups=()
cleanup() {
  local cg
  for cg in "${cgroups[@]}"; do remove_cgroup "$cg" || true; done
  rm -rf "$stage" "$home"
}
trap cleanup EXIT

tree="$stage/tree"
mkdir "$tree"
shopt -s dotglob nullglob
for entry in *; do
  case "$entry" in
    .git | target | release | fuzz | .venv | .vitest-io | node_modules) continue ;;
  esac
  cp -a "$entry" "$tree/"
done
chown -R "$user:$user" "$tree"
# node_modules: hard links where the checkout and /tmp share a file system, else copied.
linked=0
ln "$root/package.json" "$stage/.probe" 2>/dev/null && linked=1 && rm "$stage/.probe"
if [ "$linked" = 1 ]; then
  cp -al node_modules "$tree/"
  # Only the directories are the copy's own: the linked files stay the checkout's.
  find "$tree/node_modules" -type d -exec chown "$user:$user" {} +
else
  cp -a node_modules "$tree/"
  chown -R "$user:$user" "$tree/node_modules"
fi
shopt -u dotglob nullglob
# The caches vitest and vite write (results, the configs' bundles) start empty.
rm -rf "$tree/node_modules/.vite" "$tree/node_modules/.vite-temp"
mkdir -p "$home" "$stage/tmp"
chown "$user:$user" "$home" "$stage/tmp"
chmod 700 "$home" "$stage/tmp"
echo "== the copy for uid $user: $tree (node_modules $([ "$linked" = 1 ] && echo 'hard-linked' || echo 'copied'), $((SECONDS - started)) s)"

# The user's PATH: root's, without the directories it cannot search (/root/.cargo/bin...),
# where execvp would fail with EACCES instead of ENOENT.
user_path=""
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -n "$d" ] && "${as_user[@]}" test -x "$d" && user_path="${user_path:+$user_path:}$d"
done

# --- Cgroups ----------------------------------------------------------------------------
# The cgroup2 mount (its place differs: /sys/fs/cgroup, or /sys/fs/cgroup/unified on a
# hybrid system); none on a cgroup v1 system.
cgroup_root="$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' /proc/self/mountinfo | head -n1)"

remove_cgroup() {
  local cg=$1 tries=0
  [ -d "$cg" ] || return 0
  # Deepest first: a cgroup is removable only once it has no children and no processes.
  while ! find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null; do
    tries=$((tries + 1))
    [ $tries -lt 100 ] || { echo "test-unprivileged: cannot remove $cg" >&2; return 1; }
    sleep 0.1
  done
}

# Prints the processes left in a cgroup subtree and kills them; fails if there were any.
# A daemon's or an addon's watchdog (src/platform/linux/watchdog.rs) sweeps after its
# owner's exit by design: it and what it runs are given up to 30 s to finish; anything
# else is a process left behind.
left_in() {
  local cg=$1 pids pid others="" waited=0
  pids="$(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -n | paste -sd, -)"
  [ -n "$pids" ] || return 0
  for pid in ${pids//,/ }; do
    [ -e "/proc/$pid" ] || continue # ended since the list was read
    of_watchdog "$pid" || others+="${others:+,}$pid"
  done
  while [ -z "$others" ] && [ $waited -lt 300 ] && [ -n "$(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null)" ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  pids="$(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -n | paste -sd, -)"
  [ -n "$pids" ] || [ -n "$others" ] || return 0
  echo "test-unprivileged: processes left behind in $cg:" >&2
  ps -o pid,ppid,user,args -p "${others:-$pids}" >&2 || true
  # shellcheck disable=SC2086 # a list of pids
  if [ -e "$cg/cgroup.kill" ]; then echo 1 >"$cg/cgroup.kill"; else kill -9 ${pids//,/ } 2>/dev/null || true; fi
  return 1
}

# Whether a process is a watchdog's shell, one of its subshells or a command they run.
of_watchdog() {
  local parent
  grep -qaF native-shell-watchdog "/proc/$1/cmdline" 2>/dev/null && return 0
  parent="$(awk '/^PPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null)"
  [ -n "$parent" ] && grep -qaF native-shell-watchdog "/proc/$parent/cmdline" 2>/dev/null
}

# --- The runs ---------------------------------------------------------------------------
default=()
stress=()
for f in "${files[@]}"; do
  case "$f" in
    __test__/stress/*) stress+=("$f") ;;
    *) default+=("$f") ;;
  esac
done

# Runs the files as uid $user inside cgroup $1 (empty: where this script is); $2: the
# containment the run must find (empty: whatever it finds).
run_suites() {
  local cg=$1 expect=$2 status=0 faults=() plain=() f
  for f in "${default[@]}"; do
    case "$f" in __test__/faults/*) faults+=("$f") ;; *) plain+=("$f") ;; esac
  done
  local env=(env -i "PATH=$user_path" "HOME=$home" "TMPDIR=$stage/tmp" "LANG=${LANG:-C.UTF-8}"
    "CI=${CI:-}")
  [ -z "${STRESS_SCALE:-}" ] || env+=("STRESS_SCALE=$STRESS_SCALE")
  [ -z "$expect" ] || env+=("NSS_EXPECT_CONTAINMENT=$expect")
  local enter=()
  # shellcheck disable=SC2016 # expanded by that shell
  [ -z "$cg" ] || enter=(sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg")
  # --passWithNoTests: a file this machine cannot run is left out (saying why), not a failure.
  local vitest=("$tree/node_modules/vitest/vitest.mjs" run --passWithNoTests)
  cd "$tree"
  if [ ${#plain[@]} -gt 0 ]; then
    "${enter[@]}" "${as_user[@]}" "${env[@]}" "$node_bin" "${vitest[@]}" "${plain[@]}" || status=1
  fi
  if [ ${#faults[@]} -gt 0 ]; then
    "${enter[@]}" "${as_user[@]}" "${env[@]}" "$node_bin" "${vitest[@]}" -c vitest.faults.config.mts "${faults[@]}" || status=1
  fi
  if [ ${#stress[@]} -gt 0 ]; then
    "${enter[@]}" "${as_user[@]}" "${env[@]}" "$node_bin" "${vitest[@]}" -c vitest.stress.config.mts "${stress[@]}" || status=1
  fi
  cd "$root"
  if [ -n "$cg" ]; then left_in "$cg" || status=1; fi
  return $status
}

runs="${NSS_UNPRIVILEGED_RUNS:-delegated plain}"
failed=()
for run in $runs; do
  t0=$SECONDS
  cg=""
  expect=""
  case "$run" in
    delegated)
      if [ -z "$cgroup_root" ] || ! mkdir "$cgroup_root/nss-unprivileged-$$-delegated" 2>/dev/null; then
        echo "== uid $user, delegated cgroup: skipped, no cgroup2 hierarchy here that root can add to (${cgroup_root:-none mounted})"
        continue
      fi
      cg="$cgroup_root/nss-unprivileged-$$-delegated"
      cgroups+=("$cg")
      # What delegation is: the subtree's directory and its files are the user's.
      chown -R "$user:$user" "$cg"
      # A delegated subtree is where the service must hold jobs in cgroups: finding
      # another containment fails the run instead of skipping what only a cgroup passes.
      expect=cgroup
      echo "== uid $user in a cgroup delegated to it ($cg)"
      ;;
    plain)
      # A cgroup of root's, as an SSH session's scope: the user's jobs cannot get
      # cgroups of their own, and what is left behind is still found here.
      if [ -n "$cgroup_root" ] && mkdir "$cgroup_root/nss-unprivileged-$$-plain" 2>/dev/null; then
        cg="$cgroup_root/nss-unprivileged-$$-plain"
        cgroups+=("$cg")
      fi
      echo "== uid $user without delegation (${cg:-in the cgroup this script runs in})"
      ;;
    *) echo "test-unprivileged: unknown run '$run' (delegated, plain)" >&2; exit 2 ;;
  esac
  if run_suites "$cg" "$expect"; then
    echo "== uid $user, $run: passed ($((SECONDS - t0)) s)"
  else
    echo "== uid $user, $run: FAILED ($((SECONDS - t0)) s)"
    failed+=("$run")
  fi
done

echo "== the unprivileged runs took $((SECONDS - started)) s"
[ ${#failed[@]} -eq 0 ] || { echo "test-unprivileged: failed: ${failed[*]}" >&2; exit 1; }
