#!/usr/bin/env bash
# The checks that guard a release rather than each change: long fuzzing, the five
# platforms' cross builds and their extension archives, the macOS lint through zig, and
# the Windows suite under Wine. release.yml runs it whole before publishing; its short
# form (`--short`: all four fuzz targets built and each fed its committed corpus and some seconds
# of new inputs) is for a look by hand. `.ci/run` runs neither: the fuzz targets' build
# under AddressSanitizer compiles the core and every dependency once more (about 7
# minutes on two cores), which does not fit its 25 minutes; every change has the
# committed corpora replayed by cargo test instead (tests/fuzz_corpus.rs, in npm test).
#
# Why these and not others: none of them is about Linux's behaviour, which `.ci/run`
# checks whole (npm test, the fault, stress and unprivileged suites), and fuzzing finds
# new inputs, which a change's check need not wait for: the inputs found so far are
# replayed on every change. The cross builds and
# the extension archives run on every push in ci.yml's `cross` job, and macOS and Windows
# are built, linted and tested natively there; what only this script adds is Wine (a
# Windows build tested without Windows) and fuzzing minutes instead of seconds. Together
# they took about 20 of `.ci/run`'s 47 minutes on this project's machine (the cross
# builds 678 s, docs/platforms.md; Wine 212 s, docs/windows.md; the rest estimated).
#
#   bash scripts/release-check.sh [--short] [--fuzz-seconds=N]
#
# Installs what it lacks, as `.ci/run` does: system packages with apt-get as root (or
# through `sudo -n` on a CI runner), cargo-fuzz with cargo, zig and cargo-zigbuild with
# pip (scripts/build-all.mjs). Run after `npm install` and `npm run build` (the
# extension archives take this machine's addon from the build).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

short=0
fuzz_seconds=300
for arg in "$@"; do
  case "$arg" in
    --short) short=1; fuzz_seconds=15 ;;
    --fuzz-seconds=*) fuzz_seconds=${arg#--fuzz-seconds=} ;;
    *) echo "release-check: unknown argument $arg (--short, --fuzz-seconds=N)" >&2; exit 2 ;;
  esac
done
phase() { echo "== release-check: $* ($((SECONDS - started)) s)"; }

# Installs Debian packages as root, or through a sudo that asks no password; else names
# them and fails.
apt_install() {
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo=(sudo -n); else
      echo "not installed (needs root and apt-get): $*"
      return 1
    fi
  fi
  command -v apt-get >/dev/null 2>&1 || { echo "not installed (no apt-get): $*"; return 1; }
  echo "installing: $*"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# Python tools (zig for the cross builds) go into the .venv/ that .ci/run makes, where
# there is one (Debian and Ubuntu refuse the system's pip); a CI runner's Python has its
# own pip.
if [ -z "${VIRTUAL_ENV:-}" ] && [ -x .venv/bin/python ]; then
  export VIRTUAL_ENV="$PWD/.venv"
  export PATH="$VIRTUAL_ENV/bin:$PATH"
fi

# --- envd's generated messages ----------------------------------------------------------
# They are committed (src/daemon/envd/generated/); `npm test` checks them against the
# .proto files' digests only. Here they are generated again by the generator's pinned
# versions (proto/gen/Cargo.lock) and must come out the same: a generator or prost
# update that changes the code is caught before it ships.
phase "envd's messages generated again"
node scripts/gen-envd-proto.mjs
git diff --exit-code --stat -- src/daemon/envd/generated/ || { echo "release-check: src/daemon/envd/generated/ is not what proto/gen/ makes: commit the regenerated files" >&2; exit 1; }

# --- Fuzzing, bounded -----------------------------------------------------------------
# All four targets, under libFuzzer with AddressSanitizer: the network face's request
# decoding (fuzz/fuzz_targets/envd_request.rs: Connect envelopes, protobuf and JSON of
# every envd request), the file API's upload parsing (envd_files: multipart and streamed
# bodies), the output pipeline (output_pipeline: decoding, redraws, the screen window,
# bounds, chunking) and the command policy (check_command). Each run first replays the
# committed corpus (fuzz/corpus/), so every input that once found a bug is tried again
# even in the short form; a crash fails and leaves its input in fuzz/artifacts/. The
# output and policy targets used to be run only by hand: when the output pipeline gained
# its screen window, the output target's check went stale and nothing ran it to say so
# (6 committed inputs failed it). Stable Rust with RUSTC_BOOTSTRAP=1 for
# cargo-fuzz's nightly flags (docs/policy.md). The request target gets the full time,
# each other target half of it.
half=$((fuzz_seconds / 2))
phase "fuzz: envd_request ${fuzz_seconds} s; envd_files, output_pipeline, check_command ${half} s each"
command -v cargo-fuzz >/dev/null 2>&1 || cargo install --quiet --locked cargo-fuzz
for target in envd_request envd_files output_pipeline check_command; do
  seconds=$half
  [ "$target" = envd_request ] && seconds=$fuzz_seconds
  # New inputs go to a scratch corpus per target; the committed seeds stay as they are.
  mkdir -p "fuzz/target/corpus-ci-$target"
  RUSTC_BOOTSTRAP=1 cargo fuzz run "$target" "fuzz/target/corpus-ci-$target" "fuzz/corpus/$target" \
    -- -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 2>&1 | tail -n 15
done

if [ "$short" = 1 ]; then
  echo "release-check --short: the cross builds, the extension archives, the macOS lint and the Windows suite are left to the release (scripts/release-check.sh) and ci.yml"
  phase "done (short)"
  exit 0
fi

# --- The sandbox on a kernel with Landlock ABI 9 or later -------------------------------
# Most machines, this one and CI's included, are below ABI 9, where the service's seccomp
# supervisor judges pathname unix sockets; from ABI 9 Landlock does. So that path runs in
# a virtual machine booting Debian unstable's kernel (scripts/test-kernel-vm.sh: about 4
# minutes a file, as root and as uid 65534, emulated on a quiet machine; skipped, saying
# why, where qemu cannot run).
phase "sandbox on a newer kernel (virtual machine)"
for tool in qemu-system-x86_64 busybox; do
  command -v "$tool" >/dev/null 2>&1 || apt_install --no-install-recommends qemu-system-x86 busybox-static || true
done
bash scripts/test-kernel-vm.sh __test__/sandbox-unix.test.ts __test__/sandbox-secrets.test.ts

# MinGW (the Windows cross build) comes from apt-get.
if ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
  apt_install --no-install-recommends gcc-mingw-w64-x86-64 || {
    echo "release-check: the cross builds need MinGW-w64 (gcc-mingw-w64-x86-64)" >&2
    exit 1
  }
fi

# --- Every platform's package ------------------------------------------------------------
# The five prebuilt packages cross-built on this machine (zig for macOS and Linux, MinGW for
# Windows), each binary checked for its format, CPU, Node-API entry and the oldest system
# it loads on (docs/platforms.md). Installs what it lacks (Rust targets, zig into .venv/).
phase "cross builds"
npm run build:all

# --- The Gemini CLI extension archives ---------------------------------------------------
# One per platform, from the five addons just built (--all: a missing one fails), as the
# release workflow attaches them to a GitHub release (docs/releasing.md).
phase "extension archives"
npm run build:extension -- --all

# --- macOS: lint ------------------------------------------------------------------------
# Nothing here runs a Mach-O, so the macOS backend is built (above) and linted for both
# CPUs; its plain-POSIX parts (the fork launcher, the argument parser) run in the Linux
# tests. cargo-zigbuild (installed by build:all, in .venv/bin) gives clippy a C compiler
# for the target.
phase "macOS lint"
for target in aarch64-apple-darwin x86_64-apple-darwin; do
  cargo-zigbuild clippy --quiet --target "$target" --package native-shell-service-node -- -D warnings
  cargo-zigbuild clippy --quiet --target "$target" --all-targets -- -D warnings
done

# --- Windows ---------------------------------------------------------------------------
# The Windows build (MinGW) tested under Wine with Windows node.exe: the backend's unit
# tests, clippy for the Windows target, and the Node suite __test__/windows (see
# docs/windows.md). The script installs what it lacks (Wine: as root) and uses a
# throw-away Wine prefix.
phase "the Windows suite under Wine"
bash scripts/test-windows.sh
phase "done"
