//! Reaping a job's process with `waitpid` (only that pid, so Node's own children are
//! left to libuv), shared by the Linux and macOS exit watchers.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::Mutex;

use crate::sync::lock;

/// Children whose watcher was dropped before they exited. Each new launch reaps those
/// that have exited since (`reap_dropped`), so none stays a zombie for long.
static UNREAPED: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// A watcher dropped before its process was reaped: reap it now if it has exited,
/// else remember it for a later launch.
pub fn reap_or_remember(pid: i32) {
    if !matches!(try_reap(pid), Ok(Some(_))) {
        lock(&UNREAPED).push(pid);
    }
}

/// Reaps the remembered children that have exited since.
pub fn reap_dropped() {
    lock(&UNREAPED).retain(|&pid| matches!(try_reap(pid), Ok(None)));
}

/// The exit status if the process has exited (and reaps it), None while it runs.
pub fn try_reap(pid: i32) -> io::Result<Option<ExitStatus>> {
    let mut status = 0;
    loop {
        // SAFETY: waitpid on our own child, writing into a local.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        match r {
            0 => return Ok(None),
            r if r == pid => return Ok(Some(ExitStatus::from_raw(status))),
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

/// Waits for the process to exit, blocking the thread, and reaps it.
pub fn wait_blocking(pid: i32) -> io::Result<ExitStatus> {
    let mut status = 0;
    loop {
        // SAFETY: waitpid on our own child, writing into a local.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(ExitStatus::from_raw(status));
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Reaps a child known to have exited already (a launch that failed before exec).
pub fn reap_blocking(pid: i32) {
    let _ = wait_blocking(pid);
}
