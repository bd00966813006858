#!/bin/sh
# Builds a second native-shell-daemon stamped with another version (NATIVE_SHELL_BUILD_VERSION,
# read by src/bin/native-shell-daemon.rs), for the live-upgrade tests (tests/daemon/daemon_restart.rs, tests/daemon/daemon_restart_jobs.rs):
# they restart a daemon of this build into that one and check the version changed.
# Built as scripts/build-daemon.mjs builds the daemon (release, this machine's triple named
# with --target), so it shares every dependency with the addon's, the daemon's and
# `cargo test`'s builds: only the binary's crate is compiled for the stamp, and again
# without it. `npm test` runs it after its build (scripts/test.mjs) unless
# NATIVE_SHELL_NEXT_DAEMON already names one.
#   scripts/build-next-daemon.sh [VERSION]   -> prints the path; export it as NATIVE_SHELL_NEXT_DAEMON
set -eu
cd "$(dirname "$0")/.."
version="${1:-99.0.0-next}"
triple="${CARGO_BUILD_TARGET:-$(rustc -vV | sed -n 's/^host: //p')}"
# A target folder given in CARGO_TARGET_DIR (a fresh clone measured with an empty one).
target_dir="${CARGO_TARGET_DIR:-target}"
out="$target_dir/next-daemon"
mkdir -p "$out"
NATIVE_SHELL_BUILD_VERSION="$version" cargo build --quiet --release --target "$triple" --bin native-shell-daemon
cp "$target_dir/$triple/release/native-shell-daemon" "$out/native-shell-daemon"
cargo build --quiet --release --target "$triple" --bin native-shell-daemon
echo "$(cd "$out" && pwd)/native-shell-daemon"
