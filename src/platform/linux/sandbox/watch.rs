//! How the service learns that no process of a sandboxed job is left anywhere when no
//! cgroup holds the job: the job's seccomp filter is installed with a listener
//! (`SECCOMP_FILTER_FLAG_NEW_LISTENER`), and the kernel reports a hang-up on it once
//! the filter has no user left (Linux 5.8 and later).
//!
//! Every process the job starts carries the filter, whatever it does: `setsid`, a
//! double fork, a cleared environment, closed descriptors, a filter of its own stacked
//! on ours (which counts as a user of ours). A filter cannot be dropped, and the job's
//! Landlock domain is entered in the same spawn child just before it, so the two are
//! carried by the same processes. The hang-up therefore means that no process in the
//! job's Landlock domain exists, and none can appear again (only a member could fork
//! one). That is what lets a finished job's TMPDIR go to a later job without a cgroup
//! (src/sandbox/tmpdir.rs): handed over earlier, a process the job left behind would
//! reach the later job's files through its own rule on that directory.
//!
//! Below Landlock ABI 9 the same listener also carries the job's calls to unix sockets
//! to the service (`super::supervise`): a supervised job's filter always gets one, in a
//! cgroup or not, and its TMPDIR gets a duplicate where no cgroup holds the job. Where
//! the filter never answers `SECCOMP_RET_USER_NOTIF` (ABI 9 and later), the listener
//! only reports the hang-up, and is asked for only where no cgroup holds the job
//! (`super::Prepared::new`). The cost for the job: the kernel allows one listener per
//! chain of filters, so a job cannot add a listener of its own (`EBUSY`). Where the
//! host already runs under a filter with a listener, an unsupervised job's filter is
//! installed without one (the same confinement; its TMPDIR is then not reused), and a
//! supervised job cannot be confined at all: the sandbox is refused
//! (`super::probe`), and the launch fails if it happens anyway.
//!
//! **How the listener reaches the service.** A filter is installed by the thread it
//! confines, so the listener is made in the spawn child. That child is created sharing
//! the service's descriptor table (`CLONE_FILES`, `crate::platform::unix::launch`): the
//! listener lands in the service's own table, where the child leaves its number. The
//! child then takes a private copy of the table (`close_range` with
//! `CLOSE_RANGE_UNSHARE`) before it touches any descriptor (its stdio, the clean-up of
//! inherited ones), and the listener, close-on-exec, is gone from the job at its exec.
//! Measured against sending it over a socket pair made per spawn, this saves about
//! 40 µs of a sandboxed spawn (the pair, `sendmsg`, `recvmsg`, two closes:
//! docs/sandbox.md, "What it costs"); the copy of the table costs what a clone without
//! `CLONE_FILES` would have paid for it.

use std::ffi::c_int;
use std::os::fd::OwnedFd;
use std::sync::OnceLock;

use rustix::event::{poll, PollFd, PollFlags, Timespec};

/// `CLOSE_RANGE_UNSHARE` (linux/close_range.h, Linux 5.9).
const CLOSE_RANGE_UNSHARE: u32 = 1 << 1;

/// Whether a job's filter can report its end here: `close_range` exists (Linux 5.9,
/// after the 5.8 of the hang-up) and no filter of the host refuses it. Asked once, by
/// a call that closes nothing.
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        // SAFETY: the range holds no descriptor (the highest number there is): nothing
        // is closed, the table is not unshared.
        unsafe { libc::syscall(libc::SYS_close_range, u32::MAX, u32::MAX, 0u32) == 0 }
    })
}

/// No process that carries the filter `listener` was made for is left (the kernel
/// reports a hang-up), and none can come back.
pub fn nothing_left(listener: &OwnedFd) -> bool {
    let mut fds = [PollFd::new(listener, PollFlags::IN)];
    // Asked, not waited for.
    let now = Timespec { tv_sec: 0, tv_nsec: 0 };
    poll(&mut fds, Some(&now)).is_ok() && fds[0].revents().contains(PollFlags::HUP)
}

/// In the spawn child, while it shares the service's descriptor table: installs
/// `filter` with a listener and returns the listener's number (in that table), or -1
/// if none could be had (the host's own filter has one: `EBUSY`), having installed
/// it without one. Returns `None` (errno set) if the filter could not be installed at
/// all, or without a listener when `supervised` (its calls to sockets need one:
/// `super::supervise`). A supervised job's threads wait for an answer ignoring all but
/// fatal signals (`SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`, Linux 5.19; before, the
/// listener is made without it: a call interrupted after the supervisor made it is
/// then made again when the job's libc restarts it).
///
/// # Safety
/// Async-signal-safe and allocation-free: system calls on the caller's data only.
pub unsafe fn install_reporting(filter: *const libc::sock_fprog, supervised: bool) -> Option<c_int> {
    let install =
        |flags: libc::c_ulong| libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, flags as u32, filter);
    let mut listener = -1;
    if supervised {
        listener = install(libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV);
    }
    if listener < 0 {
        listener = install(libc::SECCOMP_FILTER_FLAG_NEW_LISTENER);
    }
    if listener >= 0 {
        return Some(listener as c_int);
    }
    if supervised {
        return None;
    }
    (install(0) >= 0).then_some(-1)
}

/// In the spawn child: gives it a descriptor table of its own, a copy of the one it
/// shared. False (errno set) if it could not: the child must then touch no
/// descriptor and exit.
///
/// # Safety
/// Async-signal-safe, one system call.
pub unsafe fn unshare_descriptors() -> bool {
    libc::syscall(libc::SYS_close_range, u32::MAX, u32::MAX, CLOSE_RANGE_UNSHARE) == 0
}
