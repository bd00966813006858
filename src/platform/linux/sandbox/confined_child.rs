//! For tests: what a process confined by a Landlock ruleset can do, as the kernel answers
//! it. A forked child takes `NO_NEW_PRIVS`, enters the ruleset (as the spawn child
//! does), runs the probe and leaves with its answer as exit status.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// The probe's answer (0 to 254) from a child confined by `ruleset`. The probe runs in
/// a forked child of a threaded process: it may only make system calls on memory
/// prepared before the fork (no allocation, no locks).
pub(super) fn answer(ruleset: &OwnedFd, probe: impl FnOnce() -> i32) -> i32 {
    // SAFETY: the child makes system calls on memory prepared before the fork and
    // leaves with `_exit`; the parent only waits for it.
    unsafe {
        let pid = libc::fork();
        assert!(pid >= 0, "fork: {}", io::Error::last_os_error());
        if pid == 0 {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) != 0
                || libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32) != 0
            {
                libc::_exit(255);
            }
            libc::_exit(probe());
        }
        let mut status = 0;
        assert_eq!(libc::waitpid(pid, &mut status, 0), pid);
        assert!(libc::WIFEXITED(status), "the child did not exit: {status}");
        let code = libc::WEXITSTATUS(status);
        assert_ne!(code, 255, "the child could not confine itself");
        code
    }
}
