#!/bin/sh
# Builds a second native-shell-daemon stamped with another version (NATIVE_SHELL_BUILD_VERSION,
# read by src/bin/native-shell-daemon.rs), for the live-upgrade tests (tests/daemon_restart.rs):
# they restart a daemon of this build into that one and check the version changed.
# Only the binary's crate is rebuilt for the stamp; the plain binary is rebuilt after it.
#   scripts/build-next-daemon.sh [VERSION]   -> prints the path; export it as NATIVE_SHELL_NEXT_DAEMON
set -eu
cd "$(dirname "$0")/.."
version="${1:-99.0.0-next}"
out=target/next-daemon
mkdir -p "$out"
NATIVE_SHELL_BUILD_VERSION="$version" cargo build --quiet --bin native-shell-daemon
cp target/debug/native-shell-daemon "$out/native-shell-daemon"
cargo build --quiet --bin native-shell-daemon
echo "$PWD/$out/native-shell-daemon"
