//! A started job process and its exit, as an event.
//!
//! The exit is learnt, in order of preference, from:
//! - the process's one io_uring (`super::exit_ring`, Linux 6.7+): no descriptor and no
//!   thread per job; the ring's thread reaps the process and sends its status;
//! - a pidfd registered with the tokio reactor, where there is no such ring (its reason
//!   is in `crate::platform::exit_watch`): a descriptor per job, no thread;
//! - a blocking `waitpid` on tokio's blocking pool, where the kernel has no pidfds
//!   (before 5.3) or none can be had.
//!
//! No SIGCHLD handler fights libuv's, and only this pid is ever waited for, so Node's
//! own children are left alone.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::ExitStatus;

use tokio::io::unix::AsyncFd;
use tokio::sync::oneshot;

use super::exit_ring;
use crate::platform::unix::reap::{exit_of, reap_dropped, reap_or_remember, try_reap, wait_blocking};
use crate::platform::Exit;

/// For `unix::launch`, which reaps a child whose launch failed.
pub use crate::platform::unix::reap::reap_blocking;

pub struct ChildProcess {
    pid: i32,
    watch: Watch,
    status: Option<ExitStatus>,
}

enum Watch {
    /// The ring reaps the process and sends its status here.
    Ring(oneshot::Receiver<exit_ring::Sent>),
    Pidfd(AsyncFd<OwnedFd>),
    /// Neither: a blocking `waitpid`.
    Blocking,
}

impl ChildProcess {
    /// Takes charge of a child this process started. Must run inside a tokio runtime.
    pub fn adopt(pid: i32) -> Self {
        reap_dropped();
        let watch = match exit_ring::watch(pid) {
            Ok(receiver) => Watch::Ring(receiver),
            Err(()) => own_watch(pid),
        };
        Self {
            pid,
            watch,
            status: None,
        }
    }

    /// A child already reaped, its exit known (a restart in place carried it: the
    /// previous image's exit ring reaped it during the freeze). `wait` answers it.
    pub fn exited(pid: i32, exit: Exit) -> Self {
        use std::os::unix::process::ExitStatusExt;
        // The wait status the kernel gave: a signal in the low bits, else the code.
        let raw = match (exit.signal, exit.code) {
            (Some(signal), _) => signal & 0x7f,
            (None, code) => (code.unwrap_or(0) & 0xff) << 8,
        };
        Self {
            pid,
            watch: Watch::Blocking,
            status: Some(ExitStatus::from_raw(raw)),
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
        if let Watch::Ring(receiver) = &mut self.watch {
            match receiver.await {
                Ok(Ok(status)) => return self.done(status),
                // The ring could not watch it (it failed, or its thread is gone): the
                // process is watched here instead, as where there is no ring.
                Ok(Err(_)) | Err(_) => self.watch = own_watch(self.pid),
            }
        }
        let status = match &self.watch {
            Watch::Pidfd(pidfd) => loop {
                let mut ready = pidfd.readable().await?;
                match try_reap(self.pid)? {
                    Some(status) => break status,
                    None => ready.clear_ready(),
                }
            },
            Watch::Ring(_) | Watch::Blocking => {
                let pid = self.pid;
                tokio::task::spawn_blocking(move || wait_blocking(pid))
                    .await
                    .map_err(io::Error::other)??
            }
        };
        self.done(status)
    }

    fn done(&mut self, status: ExitStatus) -> io::Result<ExitStatus> {
        self.status = Some(status);
        Ok(status)
    }
}

/// A watch of this process's own: its pidfd in the reactor, else a blocking wait.
fn own_watch(pid: i32) -> Watch {
    // SAFETY: the pidfd moves into the AsyncFd and stays open, unchanged, for its
    // whole life.
    match open_pidfd(pid).and_then(|fd| unsafe { AsyncFd::register(fd) }.ok()) {
        Some(pidfd) => Watch::Pidfd(pidfd),
        None => Watch::Blocking,
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        // The ring reaps a process it watches whether or not anyone still listens.
        if self.status.is_none() && !matches!(self.watch, Watch::Ring(_)) {
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
