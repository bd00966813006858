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
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
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

    /// A look at the exit that can be taken while `wait` runs, where the exit ring
    /// watches the process (elsewhere None: `wait` alone tells).
    pub fn exit_peek(&self) -> Option<ExitPeek> {
        matches!(self.watch, Watch::Ring(_)).then_some(ExitPeek { pid: self.pid })
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

/// A look at the exit of a process the exit ring watches, for its reader once the
/// terminal has hung up, without reaping it (the ring still does).
///
/// A process that exits closes its descriptors (the terminal hangs up) a little before
/// it becomes a zombie. Through the ring its exit reaches the reader after two more
/// hand-overs: the ring's thread woken by the kernel, then a runtime worker by that
/// thread. So the reader looks first (`exited`): by the time it has woken to the
/// hang-up the process has often exited. If not, it waits on a pidfd opened then
/// (`exited_soon`): the reader's own worker is woken by the exit itself. The pidfd is
/// held only from the hang-up to the exit (a job idle with its terminal open holds
/// none), and whichever comes first, it or the ring's message, gives the exit.
///
/// `exited` asks by pid (`waitid(P_PID, WNOWAIT)`) and may run while the ring reaps:
/// if the ring has reaped it first, the pid is free and the answer is "no such child"
/// (the exit then comes from the ring). A wrong answer would need the pid to be given
/// to another child of this process that has already exited, between the ring's
/// reaping and this call: the kernel hands pids out in turn through the whole pid
/// space, so not before every other pid has been used. `exited_soon` asks through its
/// pidfd, which names this process and no other.
pub struct ExitPeek {
    pid: i32,
}

impl ExitPeek {
    /// The exit if the process is a zombie now; None while it runs (or once reaped).
    pub fn exited(&self) -> Option<Exit> {
        exited_by(libc::P_PID, self.pid as libc::id_t, self.pid)
    }

    /// Resolves with the exit once the process is a zombie; never, if the ring reaps it
    /// first or no pidfd can be had (the ring's message tells the exit then).
    pub async fn exited_soon(&self) -> Exit {
        if let Some(exit) = self.watch_pidfd().await {
            return exit;
        }
        std::future::pending().await
    }

    async fn watch_pidfd(&self) -> Option<Exit> {
        let pidfd = open_pidfd(self.pid)?;
        // SAFETY: the pidfd moves into the AsyncFd and stays open, unchanged, for its
        // whole life (it closes when this look is over).
        let pidfd = unsafe { AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE) }.ok()?;
        loop {
            let mut ready = pidfd.readable().await.ok()?;
            if let Some(exit) = exited_by(libc::P_PIDFD, pidfd.get_ref().as_raw_fd() as libc::id_t, self.pid) {
                return Some(exit);
            }
            // Readable and no zombie: reaped already (by the ring), or not yet exited.
            if !crate::platform::is_alive(self.pid) {
                return None;
            }
            ready.clear_ready();
        }
    }
}

/// `waitid(which, id, WEXITED | WNOHANG | WNOWAIT)`: the exit of `pid` if it is a
/// zombie now, left a zombie for its reaper.
fn exited_by(which: libc::idtype_t, id: libc::id_t, pid: i32) -> Option<Exit> {
    // SAFETY: all zeros is a valid siginfo_t; waitid fills it (or leaves si_pid 0).
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: a wait on our own child with a siginfo of ours; WNOWAIT leaves it a
        // zombie for the ring to reap.
        let r = unsafe { libc::waitid(which, id, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT) };
        if r == 0 {
            break;
        }
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return None;
        }
    }
    // SAFETY: filled by waitid for a CLD_* event when si_pid is set.
    if unsafe { info.si_pid() } != pid {
        return None;
    }
    Some(exit_of(exit_ring::status_of(&info)))
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
