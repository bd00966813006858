# Run by the guest (scripts/kernel-vm/init) as root; scripts/test-kernel-vm.sh puts the
# checkout's path, PATH and `files` before this.
status=0
abi=$(python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))')
echo "Landlock ABI $abi"
# The suites' own probe of it (__test__/capabilities.ts) gives up after 30 s, which an
# emulated machine under load can take: it is told instead.
export NSS_TEST_LANDLOCK_ABI=$abi
if [ "${abi:-0}" -lt 9 ]; then
  echo "the guest kernel's Landlock ABI is below 9: this run would not test what it is for"
  exit 1
fi
echo "== as root: ${files[*]}"
# Emulated, everything is slower: the timeouts are stretched, what is checked is not.
export NSS_VITEST_ARGS='--testTimeout=900000 --hookTimeout=900000'
# shellcheck disable=SC2086 # two options
node node_modules/vitest/vitest.mjs run $NSS_VITEST_ARGS "${files[@]}" || status=1
echo "== as uid 65534"
bash scripts/test-unprivileged.sh "${files[@]}" || status=1
exit $status
