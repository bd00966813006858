//! Two of the child's steps between its birth and its exec (`launch::run_steps` calls
//! them in order): the caught signals reset, stdio moved onto 0, 1 and 2. The rules
//! of `launch.rs` hold here: system calls on prepared data only, no allocation, no
//! locks.

use std::ffi::c_int;
use std::os::fd::RawFd;

/// Highest signal number + 1 on Linux.
#[cfg(target_os = "linux")]
const NSIG: c_int = 65;
/// Highest signal number + 1 on macOS (its `NSIG`: signals 1 to 31).
#[cfg(target_os = "macos")]
const NSIG: c_int = 32;

/// Caught signals go back to default before anything can be delivered (their handlers
/// live in the host); SIGPIPE, which Node ignores, goes back to default as every
/// program expects; SIGHUP is ignored if asked. `handlers_cleared`: the kernel did the
/// first at the clone (`CLONE_CLEAR_SIGHAND`, which leaves ignored signals ignored, as
/// the loop below does), so only SIGPIPE and SIGHUP are left: 1 or 2 calls where the
/// loop makes about 70 under Node.
pub(super) unsafe fn reset_signals(ignore_hangup: bool, handlers_cleared: bool) {
    let mut default: libc::sigaction = std::mem::zeroed();
    default.sa_sigaction = libc::SIG_DFL;
    let mut ignore: libc::sigaction = std::mem::zeroed();
    ignore.sa_sigaction = libc::SIG_IGN;
    if handlers_cleared {
        // SIGPIPE is at default or ignored now: default either way.
        libc::sigaction(libc::SIGPIPE, &default, std::ptr::null_mut());
        if ignore_hangup {
            libc::sigaction(libc::SIGHUP, &ignore, std::ptr::null_mut());
        }
        return;
    }
    for sig in 1..NSIG {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        let mut current: libc::sigaction = std::mem::zeroed();
        // Numbers reserved by libc are refused; they are not ours to change.
        if libc::sigaction(sig, std::ptr::null(), &mut current) < 0 {
            continue;
        }
        let wanted = if sig == libc::SIGHUP && ignore_hangup {
            &ignore
        } else if current.sa_sigaction == libc::SIG_DFL
            || (current.sa_sigaction == libc::SIG_IGN && sig != libc::SIGPIPE)
        {
            continue;
        } else {
            &default
        };
        libc::sigaction(sig, wanted, std::ptr::null_mut());
    }
}

/// Moves the three descriptors onto 0, 1 and 2 (without close-on-exec).
pub(super) unsafe fn install_stdio(stdio: &[RawFd; 3]) -> bool {
    // A source that is itself 0, 1 or 2 could be overwritten by an earlier dup2;
    // lift such sources above 2 first (the copies close at exec).
    let mut sources = *stdio;
    for fd in sources.iter_mut() {
        if *fd <= 2 {
            let lifted = libc::fcntl(*fd, libc::F_DUPFD_CLOEXEC, 3);
            if lifted < 0 {
                return false;
            }
            *fd = lifted;
        }
    }
    for (target, &source) in sources.iter().enumerate() {
        if libc::dup2(source, target as c_int) < 0 {
            return false;
        }
    }
    true
}
