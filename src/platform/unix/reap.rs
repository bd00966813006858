//! Reaping a job's process with `waitpid` (only that pid, so Node's own children are
//! left to libuv), shared by the Linux and macOS exit watchers.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::Mutex;

use rustix::io::Errno;
use rustix::process::{waitpid, Pid, WaitOptions};

use crate::base::sync::lock;
use crate::platform::Exit;

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
    wait_for(pid, WaitOptions::NOHANG)
}

/// Waits for the process to exit, blocking the thread, and reaps it.
pub fn wait_blocking(pid: i32) -> io::Result<ExitStatus> {
    wait_for(pid, WaitOptions::empty())?.ok_or_else(|| io::Error::other("waitpid returned no status"))
}

/// `waitpid` on our own child `pid`, retried when interrupted; `None`: still running
/// (only with `NOHANG`).
fn wait_for(pid: i32, options: WaitOptions) -> io::Result<Option<ExitStatus>> {
    let child = Pid::from_raw(pid).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    loop {
        match waitpid(Some(child), options) {
            Ok(done) => return Ok(done.map(|(_, status)| ExitStatus::from_raw(status.as_raw()))),
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// What the caller is told of an exit: the code, or the signal that ended it.
pub fn exit_of(status: ExitStatus) -> Exit {
    Exit {
        code: status.code(),
        signal: status.signal(),
    }
}

/// Reaps a child known to have exited already (a launch that failed before exec).
pub fn reap_blocking(pid: i32) {
    let _ = wait_blocking(pid);
}
