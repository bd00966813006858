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
//! seccomp steps (`super::apply`): the effective, permitted and inheritable sets, by
//! `capset` to nothing, which empties the ambient set too (the kernel keeps it within
//! the other two). A job whose sets are empty already (an ordinary user's) makes no
//! call: each `capset` is a new set of credentials for the child.
//!
//! Nothing can give one back, and that rests on one fact: `NO_NEW_PRIVS`, which
//! `super::apply` sets before the exec and nothing can unset, caps the permitted set an
//! exec computes at the one the process had, nothing, whatever a set-user-ID-root bit or
//! a file's capabilities say, and even for uid 0, whom the kernel would otherwise hand
//! the bounding set at every exec (`cap_bprm_creds_from_file` in the kernel). So:
//! - the bounding set is left as it is: emptying it took 41 `PR_CAPBSET_DROP` calls,
//!   each a new set of credentials (60 µs of every root spawn, measured in a forked
//!   child), to limit what an exec may add, which is already nothing;
//! - the securebits are left as they are: `NOROOT` would stop that hand-over to uid 0,
//!   which `NO_NEW_PRIVS` already cuts to nothing, and `NO_CAP_AMBIENT_RAISE` would stop
//!   raising an ambient capability, which needs it in both the permitted and the
//!   inheritable set, and both stay empty (the inheritable set can only grow from the
//!   permitted one, or with `CAP_SETPCAP`, which is gone). Setting and locking them was
//!   two more calls and one more set of credentials on every root spawn;
//! - a user namespace (whose creator is given a full set) cannot be made (`refusals.rs`).
//!
//! `__test__/sandbox-escapes.test.ts` checks every set of a root job empty after
//! exec'ing a set-user-ID-root program and a program with file capabilities. A job is
//! then an ordinary process of its user id: for uid 0 that still means owning root's
//! files (what Landlock's rules and the file modes then decide; docs/sandbox.md says
//! what stays open).
//!
//! Everything here runs in the vfork-style child (`crate::platform::unix::launch`):
//! system calls on the stack, nothing that allocates or locks.

use std::ffi::c_int;

/// `_LINUX_CAPABILITY_VERSION_3` (linux/capability.h): two 32-bit words per set.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

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

/// In the spawn child: drops every capability (see the module). Returns false with
/// `errno` set if a step the process is entitled to make failed: the launch fails then.
/// The caller sets `NO_NEW_PRIVS` before the exec, which is what makes the untouched
/// bounding set and securebits harmless.
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
    // Nothing to drop (an ordinary user's job), and so nothing ambient either (below):
    // no `capset`, which would make a new set of credentials for the child.
    if data
        .iter()
        .all(|word| word.effective == 0 && word.permitted == 0 && word.inheritable == 0)
    {
        return true;
    }
    // Empty permitted and inheritable sets empty the ambient set as well: the kernel
    // keeps it within both at every `capset` (since ambient capabilities exist, 4.3),
    // so no `PR_CAP_AMBIENT_CLEAR_ALL` (one more set of credentials) is needed.
    let none = [CapData::default(); 2];
    libc::syscall(libc::SYS_capset, &mut header as *mut CapHeader, none.as_ptr()) >= 0
}
