//! Capabilities: a sandboxed job keeps none, and can gain none.
//!
//! `NO_NEW_PRIVS` stops a job from *gaining* privileges, but a job started by a
//! privileged process (an agent run as root, as in most containers) *keeps* every
//! capability it inherited, and each one is a way around Landlock's file rules or out
//! to the whole kernel: `CAP_SYS_ADMIN` (`bpf`, `fanotify` on `/`, `sethostname`),
//! `CAP_MKNOD` (a block device for the disk under `$HOME`, read and written past every
//! rule), `CAP_CHOWN`/`CAP_FOWNER`/`CAP_SETFCAP`/`CAP_LINUX_IMMUTABLE` (owners, modes,
//! file capabilities and `chattr +i` of files the job may not write), `CAP_SYS_BOOT`,
//! `CAP_SYS_TIME`, `CAP_SYSLOG`, `CAP_PERFMON`, `CAP_SYS_PTRACE`, `CAP_DAC_*` (files
//! whose modes refuse the owner, such as `/etc/shadow`), `CAP_SYS_RESOURCE`,
//! `CAP_NET_*`. So every one is dropped, in the spawn child before the Landlock and
//! seccomp steps (`super::apply`):
//! - the securebits `NOROOT` (an exec by uid 0 no longer grants the full set) and
//!   `NO_CAP_AMBIENT_RAISE`, each locked, so nothing inside can turn them back;
//! - the effective, permitted and inheritable sets (`capset` to nothing), which
//!   empties the ambient set too (it is kept within the other two).
//!
//! The bounding set is left as it is: emptying it took 41 `PR_CAPBSET_DROP` calls,
//! each a new set of credentials (60 µs of every root spawn, measured in a forked
//! child), and it hands nothing back that the steps above have not already closed.
//! The bounding set only limits what an exec may *add* to the permitted set, and with
//! the permitted set empty and `NO_NEW_PRIVS` set (`super::apply`, before the exec)
//! the kernel caps an exec's new permitted set at the old one, nothing, whatever a
//! set-user-ID-root bit or a file's capabilities say (and `NOROOT` already keeps uid 0
//! from being handed the bounding set at exec). The other ways to a capability are
//! closed as well: the inheritable set can only grow from the permitted one (`capset`
//! without `CAP_SETPCAP`), the ambient set only from both and not under the locked
//! `NO_CAP_AMBIENT_RAISE`, and a user namespace (whose creator is given a full set,
//! bounding set or not) cannot be made (`refusals.rs`). `__test__/sandbox-escapes.test.ts`
//! checks every set of a root job empty after exec'ing a set-user-ID-root program and a
//! program with file capabilities.
//!
//! The securebits need `CAP_SETPCAP`. Without it (an ordinary user, or a container that
//! took it away) they are left as they are, and that is still sound: `capset` to
//! nothing needs no privilege, and under `NO_NEW_PRIVS` an exec gains nothing. A job is
//! then an ordinary process of its user id: for uid 0 that still means owning root's
//! files (what Landlock's rules and the file modes then decide; docs/sandbox.md says
//! what stays open).
//!
//! Everything here runs in the vfork-style child (`crate::platform::unix::launch`):
//! system calls on the stack, nothing that allocates or locks.

use std::ffi::c_int;

/// `_LINUX_CAPABILITY_VERSION_3` (linux/capability.h): two 32-bit words per set.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;
/// `CAP_SETPCAP`: changing the securebits.
const CAP_SETPCAP: u32 = 8;

/// `struct __user_cap_header_struct`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: c_int,
}

/// `struct __user_cap_data_struct`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// The securebits a job gets, each with its lock (added to those already set): uid 0
/// gains nothing by exec, no ambient capability can be raised, and neither can be
/// unset. A bit whose lock is already set (by whoever started the service) is left as
/// it is: asking to change a locked bit fails, and the rest still holds.
const SECUREBITS: [(c_int, c_int); 2] = [
    (libc::SECBIT_NOROOT, libc::SECBIT_NOROOT_LOCKED),
    (
        libc::SECBIT_NO_CAP_AMBIENT_RAISE,
        libc::SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
    ),
];

/// In the spawn child: drops every capability (see the module). Returns false with
/// `errno` set if a step the process is entitled to make failed: the launch fails then.
/// The caller sets `NO_NEW_PRIVS` before the exec, which is what makes the untouched
/// bounding set harmless.
///
/// # Safety
/// Async-signal-safe and allocation-free: system calls on the stack only.
pub unsafe fn drop_all() -> bool {
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    if libc::syscall(libc::SYS_capget, &mut header as *mut CapHeader, data.as_mut_ptr()) < 0 {
        return false;
    }
    // Nothing to drop (an ordinary user's job): the sets are empty, and so is the
    // ambient set, which the kernel keeps within them. Each change below is a new set
    // of credentials for the child, a few microseconds of every spawn.
    if data
        .iter()
        .all(|word| word.effective == 0 && word.permitted == 0 && word.inheritable == 0)
    {
        return true;
    }
    if data[0].effective & (1 << CAP_SETPCAP) != 0 {
        let bits = libc::prctl(libc::PR_GET_SECUREBITS, 0, 0, 0, 0);
        if bits < 0 {
            return false;
        }
        let mut wanted = bits;
        for (bit, lock) in SECUREBITS {
            if bits & lock == 0 {
                wanted |= bit | lock;
            }
        }
        if wanted != bits && libc::prctl(libc::PR_SET_SECUREBITS, wanted as libc::c_ulong, 0, 0, 0) < 0 {
            return false;
        }
    }
    // Empty permitted and inheritable sets empty the ambient set as well: the kernel
    // keeps it within both at every `capset` (since ambient capabilities exist, 4.3),
    // so no `PR_CAP_AMBIENT_CLEAR_ALL` (one more set of credentials) is needed.
    let none = [CapData::default(); 2];
    libc::syscall(libc::SYS_capset, &mut header as *mut CapHeader, none.as_ptr()) >= 0
}
