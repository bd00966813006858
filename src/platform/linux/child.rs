//! A started job process and its exit, as an event.
//!
//! The exit is learnt, in order of preference, from:
//! - the job's reader, when the job's terminal hangs up (`exited_now`): a process closes
//!   its terminal as it exits, and a short job is then often a zombie already, reaped
//!   there with one `waitpid`, no other thread woken;
//! - the process's one io_uring (`super::exit_ring`, Linux 6.7+): no descriptor and no
//!   thread per job; the ring's thread tells the watcher, which reaps. A job's wait is
//!   asked of the ring only once it has run for `RING_AFTER` (or at its hang-up, if it
//!   is not a zombie yet): a job that ends before costs the ring nothing, not even the
//!   `NOP` that wakes its thread;
//! - a pidfd registered with the tokio reactor, where there is no such ring (its reason
//!   is in `crate::platform::exit_watch`): a descriptor per job, no thread;
//! - a blocking `waitpid` on tokio's blocking pool, where the kernel has no pidfds
//!   (before 5.3) or none can be had.
//!
//! No SIGCHLD handler fights libuv's, and only this pid is ever waited for, so Node's
//! own children are left alone. Nothing but this watcher (or the ring's thread once the
//! watcher is gone) reaps the pid, so its number names this child until it is reaped:
//! see `exit_ring::Slot`.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::exit_ring::{self, Slot};
use crate::platform::unix::reap::{exit_of, reap_dropped, reap_or_remember, try_reap, wait_blocking};
use crate::platform::Exit;

/// For `unix::launch`, which reaps a child whose launch failed.
pub use crate::platform::unix::reap::reap_blocking;

/// How long a job runs before its exit is asked of the ring. Before, its exit is seen
/// at its terminal's hang-up (or end of output). A job whose process exits while
/// something else still holds its output open is seen at most this late, and its
/// reader waits longer than this for that output anyway (`job::driver`'s drain).
pub const RING_AFTER: Duration = Duration::from_millis(10);

pub struct ChildProcess {
    pid: i32,
    watch: Watch,
    status: Option<ExitStatus>,
}

/// A timer kept with the watch, not made by each `wait`: the reader asks for the exit
/// anew at every turn of its loop (`job::driver`), and a timer made per call would be
/// put in and taken out of the runtime's wheel at every read.
type Deadline = Pin<Box<tokio::time::Sleep>>;

/// A `Deadline` `RING_AFTER` from now. Must run inside a tokio runtime.
fn ring_deadline() -> Deadline {
    Box::pin(tokio::time::sleep(RING_AFTER))
}

enum Watch {
    /// Not asked of the ring yet: when `at` fires, or at the hang-up (`arm_now`).
    Unarmed {
        slot: Arc<Slot>,
        at: Deadline,
    },
    /// Hung up, not a zombie yet: its pidfd in the reactor until `at`, then the ring.
    /// Held only between a hang-up and the exit (or `RING_AFTER`), so an idle job has
    /// no descriptor for its exit.
    Exiting {
        slot: Arc<Slot>,
        pidfd: AsyncFd<OwnedFd>,
        at: Deadline,
    },
    /// The ring tells of the exit here; the watcher reaps under `slot`.
    Ring {
        slot: Arc<Slot>,
        receiver: oneshot::Receiver<exit_ring::Sent>,
    },
    Pidfd(AsyncFd<OwnedFd>),
    /// Neither: a blocking `waitpid`, once started kept here (cancel-safe).
    Blocking(Option<JoinHandle<io::Result<ExitStatus>>>),
}

impl ChildProcess {
    /// Takes charge of a child this process started. Must run inside a tokio runtime.
    pub fn adopt(pid: i32) -> Self {
        reap_dropped();
        let watch = if exit_ring::available() {
            Watch::Unarmed {
                slot: Arc::new(Slot::default()),
                at: ring_deadline(),
            }
        } else {
            own_watch(pid)
        };
        Self {
            pid,
            watch,
            status: None,
        }
    }

    /// A child already reaped, its exit known (a restart in place carried it: the
    /// previous image's watcher reaped it during the freeze). `wait` answers it.
    pub fn exited(pid: i32, exit: Exit) -> Self {
        use std::os::unix::process::ExitStatusExt;
        // The wait status the kernel gave: a signal in the low bits, else the code.
        let raw = match (exit.signal, exit.code) {
            (Some(signal), _) => signal & 0x7f,
            (None, code) => (code.unwrap_or(0) & 0xff) << 8,
        };
        Self {
            pid,
            watch: Watch::Blocking(None),
            status: Some(ExitStatus::from_raw(raw)),
        }
    }

    /// The exit, if the process has exited now (it is reaped then); `None` while it
    /// runs. For the reader at the hang-up of the job's terminal or output.
    pub fn exited_now(&mut self) -> Option<io::Result<Exit>> {
        if let Some(status) = self.status {
            return Some(Ok(exit_of(status)));
        }
        let reaped = match &self.watch {
            Watch::Unarmed { slot, .. } | Watch::Exiting { slot, .. } | Watch::Ring { slot, .. } => {
                slot.reap_if_exited(self.pid)
            }
            Watch::Pidfd(_) => try_reap(self.pid),
            // A blocking wait is under way: it reaps.
            Watch::Blocking(_) => return None,
        };
        match reaped {
            Ok(Some(status)) => Some(self.done(status).map(exit_of)),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// The job hung up before its process became a zombie: it is most likely exiting
    /// (a process closes its terminal in its exit, a little before it is a zombie), so
    /// its exit is waited for through a pidfd in the reactor, which wakes the reader
    /// itself, for up to `RING_AFTER`; then (or with no pidfd) the ring is asked.
    pub fn arm_now(&mut self) {
        if let Watch::Unarmed { slot, .. } = &self.watch {
            let slot = slot.clone();
            // Opened by number while nothing has reaped the child: nothing but this
            // watcher may before the ring is asked (see `exit_ring::Slot`).
            // SAFETY: the pidfd moves into the AsyncFd and stays open, unchanged, for its
            // whole life.
            self.watch = match open_pidfd(self.pid).and_then(|fd| unsafe { AsyncFd::register(fd) }.ok()) {
                Some(pidfd) => Watch::Exiting {
                    slot,
                    pidfd,
                    at: ring_deadline(),
                },
                None => ring_watch(self.pid, slot),
            };
        }
    }

    /// Resolves when the process has exited (it is reaped then). Cancel-safe.
    pub async fn wait(&mut self) -> io::Result<Exit> {
        Ok(exit_of(self.wait_status().await?))
    }

    async fn wait_status(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.status {
                return Ok(status);
            }
            match &mut self.watch {
                Watch::Unarmed { slot, at } => {
                    at.as_mut().await;
                    let slot = slot.clone();
                    self.watch = ring_watch(self.pid, slot);
                }
                Watch::Exiting { slot, pidfd, at } => {
                    tokio::select! {
                        ready = pidfd.readable() => {
                            let mut ready = ready?;
                            if let Some(status) = slot.reap_if_exited(self.pid)? {
                                return self.done(status);
                            }
                            ready.clear_ready();
                        }
                        _ = at.as_mut() => {
                            // Still running with its terminal closed: the pidfd goes.
                            let slot = slot.clone();
                            self.watch = ring_watch(self.pid, slot);
                        }
                    }
                }
                Watch::Ring { slot, receiver } => match receiver.await {
                    Ok(Ok(_)) => {
                        let slot = slot.clone();
                        match slot.reap_if_exited(self.pid) {
                            Ok(Some(status)) => return self.done(status),
                            // Reaped already (not by this watcher: nothing else may)
                            // or not ours: the ring's answer is all there is.
                            Ok(None) | Err(_) => {
                                self.watch = Watch::Blocking(None);
                                return Err(io::Error::from_raw_os_error(libc::ECHILD));
                            }
                        }
                    }
                    // The ring could not watch it (it failed, or its thread is gone): the
                    // process is watched here instead, as where there is no ring.
                    Ok(Err(_)) | Err(_) => self.watch = own_watch(self.pid),
                },
                Watch::Pidfd(pidfd) => {
                    let mut ready = pidfd.readable().await?;
                    match try_reap(self.pid)? {
                        Some(status) => return self.done(status),
                        None => ready.clear_ready(),
                    }
                }
                Watch::Blocking(waiting) => {
                    let pid = self.pid;
                    let handle = waiting.get_or_insert_with(|| tokio::task::spawn_blocking(move || wait_blocking(pid)));
                    let status = handle.await.map_err(io::Error::other);
                    *waiting = None;
                    return self.done(status??);
                }
            }
        }
    }

    fn done(&mut self, status: ExitStatus) -> io::Result<ExitStatus> {
        self.status = Some(status);
        Ok(status)
    }
}

/// The ring's watch of `pid`, else this process's own.
fn ring_watch(pid: i32, slot: Arc<Slot>) -> Watch {
    match exit_ring::watch(pid, slot.clone()) {
        Ok(receiver) => Watch::Ring { slot, receiver },
        Err(()) => own_watch(pid),
    }
}

/// A watch of this process's own: its pidfd in the reactor, else a blocking wait.
fn own_watch(pid: i32) -> Watch {
    // SAFETY: the pidfd moves into the AsyncFd and stays open, unchanged, for its
    // whole life.
    match open_pidfd(pid).and_then(|fd| unsafe { AsyncFd::register(fd) }.ok()) {
        Some(pidfd) => Watch::Pidfd(pidfd),
        None => Watch::Blocking(None),
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        if self.status.is_some() {
            return;
        }
        match &self.watch {
            // The ring's thread reaps it at its exit (or this thread now, if the ring
            // has told of it already).
            Watch::Ring { slot, .. } => slot.watcher_leaves(self.pid),
            Watch::Unarmed { slot, .. } | Watch::Exiting { slot, .. } => {
                slot.watcher_leaves(self.pid);
                if exit_ring::watch(self.pid, slot.clone()).is_err() {
                    reap_or_remember(self.pid);
                }
            }
            // A blocking wait under way reaps it; else a later launch does.
            Watch::Blocking(Some(_)) => {}
            Watch::Pidfd(_) | Watch::Blocking(None) => reap_or_remember(self.pid),
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
