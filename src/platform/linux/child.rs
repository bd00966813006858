//! A started job process and its exit, as an event.
//!
//! The exit is watched through a pidfd registered with the tokio reactor: no thread
//! parked in `wait()` per job, and no SIGCHLD handler to fight libuv over. Kernels
//! without `pidfd_open` (before 5.3) get a blocking `waitpid` on tokio's blocking
//! pool instead. Only this pid is ever waited for, so Node's own children are left
//! alone.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::ExitStatus;

use tokio::io::unix::AsyncFd;

use crate::platform::unix::reap::{exit_of, reap_dropped, reap_or_remember, try_reap, wait_blocking};
use crate::platform::Exit;

/// For `unix::launch`, which reaps a child whose launch failed.
pub use crate::platform::unix::reap::reap_blocking;

pub struct ChildProcess {
    pid: i32,
    /// None where the kernel has no pidfds.
    pidfd: Option<AsyncFd<OwnedFd>>,
    status: Option<ExitStatus>,
}

impl ChildProcess {
    /// Takes charge of a child this process started. Must run inside a tokio runtime.
    pub fn adopt(pid: i32) -> Self {
        reap_dropped();
        // SAFETY: the pidfd moves into the AsyncFd and stays open, unchanged, for its
        // whole life.
        let pidfd = open_pidfd(pid).and_then(|fd| unsafe { AsyncFd::register(fd) }.ok());
        Self {
            pid,
            pidfd,
            status: None,
        }
    }

    /// Resolves when the process has exited (it is reaped then). Cancel-safe.
    pub async fn wait(&mut self) -> io::Result<Exit> {
        Ok(exit_of(self.wait_status().await?))
    }

    async fn wait_status(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let status = match &self.pidfd {
            Some(pidfd) => loop {
                let mut ready = pidfd.readable().await?;
                match try_reap(self.pid)? {
                    Some(status) => break status,
                    None => ready.clear_ready(),
                }
            },
            None => {
                let pid = self.pid;
                tokio::task::spawn_blocking(move || wait_blocking(pid))
                    .await
                    .map_err(io::Error::other)??
            }
        };
        self.status = Some(status);
        Ok(status)
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        if self.status.is_none() {
            reap_or_remember(self.pid);
        }
    }
}

fn open_pidfd(pid: i32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags; a descriptor it returns is ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: a fresh descriptor owned by nobody else. pidfds are close-on-exec.
    Some(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}
