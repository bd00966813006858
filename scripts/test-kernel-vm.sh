#!/usr/bin/env bash
# The sandbox's suites on a newer kernel than the machine's, in a virtual machine: Landlock
# ABI 9 and later judge pathname unix sockets themselves (`unixSockets: 'landlock'`), where
# older kernels need the service's seccomp supervisor, and most machines that run this
# (and CI's) are below it. So the ABI 9 path would otherwise never run.
#
# The kernel is Debian unstable's newest `linux-binary-*-amd64` with its modules, from the
# Debian archive (the only kernel source this project's CI may reach), cached in
# $KERNEL_VM_CACHE. The guest boots it with a busybox initramfs, mounts this machine's root
# read-only over 9p under a tmpfs overlay (so the guest sees this checkout, its build,
# Node and every tool, and what the tests write is thrown away), and runs as root:
#   - the Landlock ABI the guest kernel has (it must be 9 or later, else the run fails);
#   - vitest on the files given (default below), as root, then as uid 65534 in a cgroup
#     delegated to it (scripts/kernel-vm/guest.sh).
# The guest's output is printed; the script exits with the guest's status.
#
# The machine's KVM is used where it boots the kernel (KERNEL_VM_ACCEL=kvm); the default is
# qemu's emulation (tcg), which any machine runs (slow: one vitest file takes minutes).
# Needs root (the 9p export of / with passthrough), qemu-system-x86_64, busybox (static),
# xz and curl; without them it says so and exits 0. Run after `npm run build`.
#   bash scripts/test-kernel-vm.sh [test files...]
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
START=$SECONDS
CACHE=${KERNEL_VM_CACHE:-/var/cache/nss-kernel-vm}
ACCEL=${KERNEL_VM_ACCEL:-tcg}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(__test__/sandbox-unix.test.ts)

say() { printf 'test-kernel-vm: %s\n' "$*"; }
skip() { say "skipped: $*"; exit 0; }
[ "$(uname -s)/$(uname -m)" = Linux/x86_64 ] || skip "it boots an x86-64 Linux guest, and this is $(uname -s)/$(uname -m)"
[ "$(id -u)" = 0 ] || skip "it needs root (to export / read-only to the guest over 9p)"
for tool in qemu-system-x86_64 busybox xz curl; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (Debian: qemu-system-x86, busybox-static, xz-utils, curl)"
done
grep -qx cpio <(busybox --list) || skip "this busybox has no cpio"
ls ./*.node >/dev/null 2>&1 && [ -d dist ] || { say "build first (npm run build)" >&2; exit 1; }

# --- The kernel: the newest generic amd64 build in unstable -------------------------------
mkdir -p "$CACHE"
index="$CACHE/Packages"
if [ ! -s "$index" ] || [ -n "$(find "$index" -mmin +1440)" ]; then
  curl -fsS -m 300 "$MIRROR/dists/sid/main/binary-amd64/Packages.xz" | xz -dc > "$index.new" && mv "$index.new" "$index" \
    || { say "cannot read the Debian archive's index ($MIRROR)"; exit 1; }
fi
# A package's file name in the index, by its exact name.
pool_file() { awk -v P="Package: $1" '$0 == P { on = 1 } on && /^Filename: / { print $2; exit } /^$/ { on = 0 }' "$index"; }
release=$(sed -n 's/^Package: linux-binary-\([0-9][0-9.]*+deb[0-9]*-amd64\)$/\1/p' "$index" | sort -V | tail -1)
[ -n "$release" ] || { say "no linux-binary-*-amd64 package in unstable's index"; exit 1; }
kdir="$CACHE/$release"
if [ ! -f "$kdir/ok" ]; then
  rm -rf "$kdir" && mkdir -p "$kdir/debs"
  for package in "linux-binary-$release" "linux-modules-$release"; do
    file=$(pool_file "$package")
    [ -n "$file" ] || { say "$package is not in the index"; exit 1; }
    curl -fsS -m 900 -o "$kdir/debs/${file##*/}" "$MIRROR/$file" || { say "cannot download $file"; exit 1; }
    dpkg-deb -x "$kdir/debs/${file##*/}" "$kdir/tree" || exit 1
  done
  rm -rf "$kdir/debs"
  touch "$kdir/ok"
fi
modules="$kdir/tree/usr/lib/modules/$release"
[ -f "$modules/vmlinuz" ] || { say "no kernel image in $modules"; exit 1; }
say "guest kernel $release (cached in $CACHE)"

# --- The initramfs: busybox, the modules for 9p and overlayfs, and /init -----------------
work=$(mktemp -d /tmp/nss-kernel-vm.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/initrd/bin" "$work/initrd/mods" "$work/out"
cp "$(command -v busybox)" "$work/initrd/bin/busybox"
for module in fs/netfs/netfs net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p fs/overlayfs/overlay; do
  src="$modules/kernel/$module.ko"
  if [ -f "$src.xz" ]; then xz -dc "$src.xz" > "$work/initrd/mods/${module##*/}.ko"
  elif [ -f "$src" ]; then cp "$src" "$work/initrd/mods/"
  fi # else built into the kernel
done
cp scripts/kernel-vm/init "$work/initrd/init"
chmod 755 "$work/initrd/init"
(cd "$work/initrd" && find . | busybox cpio -o -H newc 2>/dev/null) | gzip -1 > "$work/initrd.gz"

# --- What the guest runs (as root, in this checkout seen through the overlay) ------------
{
  printf 'cd %q\n' "$ROOT"
  printf 'export PATH=%q CI=1\n' "$PATH"
  printf 'files=(%s)\n' "$(printf '%q ' "${files[@]}")"
  cat scripts/kernel-vm/guest.sh
} > "$work/out/guest.sh"

accel=(-accel tcg -cpu max)
[ "$ACCEL" = kvm ] && accel=(-accel kvm -cpu host)
say "booting ($ACCEL); the guest's output follows"
timeout "${KERNEL_VM_TIMEOUT:-3600}" qemu-system-x86_64 "${accel[@]}" -m "${KERNEL_VM_MEMORY:-4G}" -smp 2 \
  -nographic -no-reboot -kernel "$modules/vmlinuz" -initrd "$work/initrd.gz" \
  -append "console=ttyS0 quiet panic=-1 lsm=landlock,lockdown,yama" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=passthrough,readonly=on,multidevs=remap \
  -virtfs "local,path=$work/out,mount_tag=out,security_model=passthrough" > "$work/console" 2>&1
cat "$work/out/log" 2>/dev/null || { say "the guest left no log; its console:"; cat "$work/console"; }
status=$(cat "$work/out/rc" 2>/dev/null || echo 1)
say "guest status $status, $((SECONDS - START)) s"
exit "$status"
