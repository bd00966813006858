# Run by the guest (scripts/kernel-vm/init) as root; scripts/test-kernel-vm.sh puts the
# checkout's path, PATH and `files` before this.
status=0
abi=$(python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))')
echo "Landlock ABI $abi"
if [ "${abi:-0}" -lt 9 ]; then
  echo "the guest kernel's Landlock ABI is below 9: this run would not test what it is for"
  exit 1
fi
# The suites' own probe of it (__test__/capabilities.ts) gives up after 30 s, which an
# emulated machine under load can take: it is told instead.
export NSS_TEST_LANDLOCK_ABI=$abi
# Emulated, everything is slower: the timeouts are stretched, what is checked is not.
vitest=(node node_modules/vitest/vitest.mjs run --testTimeout=900000 --hookTimeout=900000)

echo "== as root: ${files[*]}"
"${vitest[@]}" "${files[@]}" || status=1

# As uid 65534 in a cgroup delegated to it, in this checkout as it is: the root the guest
# sees is an overlay, where scripts/test-unprivileged.sh's copy (hard links of
# node_modules) would copy every file up. What it writes is opened to it instead (a
# directory's mode changes copy up the directory alone): the checkout's top (vite's
# bundled config), vite's cache, and a home of its own outside /tmp.
echo "== as uid 65534, delegated cgroup: ${files[*]}"
chmod 777 . && mkdir -p node_modules/.vite node_modules/.vite-temp && chmod -R 777 node_modules/.vite node_modules/.vite-temp
home=/var/tmp/nss-vm-home && mkdir -p "$home" && chown 65534:65534 "$home"
cg=/sys/fs/cgroup/nss-vm-65534 && mkdir -p "$cg" && chown -R 65534:65534 "$cg"
sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" \
  setpriv --reuid=65534 --regid=65534 --clear-groups \
  env -i "PATH=$PATH" "HOME=$home" "TMPDIR=/tmp" LANG=C.UTF-8 CI=1 "NSS_TEST_LANDLOCK_ABI=$abi" \
  "${vitest[@]}" "${files[@]}" || status=1
left=$(cat "$cg/cgroup.procs")
[ -z "$left" ] || { echo "left running in the run's cgroup: $left"; status=1; }
exit $status
