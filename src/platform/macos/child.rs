//! A started job process and its exit, as an event.
//!
//! Each job's exit is watched by a kqueue of its own holding one filter: EVFILT_PROC
//! with NOTE_EXIT for the pid. That kqueue's descriptor is registered with the tokio
//! reactor (itself a kqueue on macOS: a kqueue is readable while it holds an event), so
//! no thread waits per job and no SIGCHLD handler competes with libuv's. Only this pid
//! is ever waited for, so Node's own children are left alone.
//!
//! The kernel's exit path first marks the process as exiting (from then on it can no
//! longer be watched), then posts NOTE_EXIT, and only after that makes it the zombie
//! that `waitpid` reports. Hence two moments where neither the event nor `waitpid`
//! answers, both handled as a process that is exiting:
//! - registration fails with ESRCH: the child exited (or is exiting) already;
//! - NOTE_EXIT came but `waitpid(WNOHANG)` does not see the zombie yet.
//!
//! An exiting process is past the point of no return, so it is reaped by retrying
//! `waitpid(WNOHANG)` every millisecond, which ends within microseconds.
//!
//! Where no kqueue can be had (descriptors exhausted), a blocking `waitpid` on tokio's
//! blocking pool waits instead, as on Linux without pidfds.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::ExitStatus;
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use crate::platform::unix::reap::{exit_of, reap_dropped, reap_or_remember, try_reap, wait_blocking};
use crate::platform::Exit;

/// For `unix::launch`, which reaps a child whose launch failed.
pub use crate::platform::unix::reap::reap_blocking;

/// How often an exiting process is looked at until it can be reaped.
const EXITING_RETRY: Duration = Duration::from_millis(1);

pub struct ChildProcess {
    pid: i32,
    /// The kqueue watching the pid, until it is reaped. None where it could not be made.
    watch: Option<AsyncFd<OwnedFd>>,
    /// NOTE_EXIT came, or the process could no longer be watched: only reaping is left.
    exiting: bool,
    status: Option<ExitStatus>,
}

impl ChildProcess {
    /// Takes charge of a child this process started. Must run inside a tokio runtime.
    pub fn adopt(pid: i32) -> Self {
        reap_dropped();
        let (watch, exiting) = match watch_exit(pid) {
            // Read interest only: the kernel refuses a write filter on a kqueue.
            // SAFETY: the kqueue moves into the AsyncFd and stays open, unchanged, for
            // its whole life.
            Ok(kqueue) => (
                unsafe { AsyncFd::register_with_interest(kqueue, Interest::READABLE) }.ok(),
                false,
            ),
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => (None, true),
            Err(_) => (None, false),
        };
        Self {
            pid,
            watch,
            exiting,
            status: None,
        }
    }

    /// The exit, if the process has exited now (it is reaped then); `None` while it
    /// runs. For the reader at the hang-up of the job's terminal or output.
    pub fn exited_now(&mut self) -> Option<io::Result<Exit>> {
        if let Some(status) = self.status {
            return Some(Ok(exit_of(status)));
        }
        match try_reap(self.pid) {
            Ok(Some(status)) => {
                self.status = Some(status);
                self.watch = None;
                Some(Ok(exit_of(status)))
            }
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// Linux's exit ring is asked at the hang-up; the kqueue here watches from the start.
    pub fn arm_now(&mut self) {}

    /// Resolves when the process has exited (it is reaped then). Cancel-safe.
    pub async fn wait(&mut self) -> io::Result<Exit> {
        Ok(exit_of(self.wait_status().await?))
    }

    async fn wait_status(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let status = loop {
            if self.exiting {
                match try_reap(self.pid)? {
                    Some(status) => break status,
                    None => {
                        tokio::time::sleep(EXITING_RETRY).await;
                        continue;
                    }
                }
            }
            match &self.watch {
                Some(kqueue) => {
                    let mut ready = kqueue.readable().await?;
                    if take_exit_event(kqueue.get_ref().as_raw_fd()) {
                        self.exiting = true;
                    }
                    match try_reap(self.pid)? {
                        Some(status) => break status,
                        None => ready.clear_ready(),
                    }
                }
                None => {
                    let pid = self.pid;
                    break tokio::task::spawn_blocking(move || wait_blocking(pid))
                        .await
                        .map_err(io::Error::other)??;
                }
            }
        };
        self.status = Some(status);
        // The kqueue's work is done; its descriptor closes now rather than with the job.
        self.watch = None;
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

/// A kqueue holding NOTE_EXIT for `pid`. ESRCH: the process is exiting or gone.
fn watch_exit(pid: i32) -> io::Result<OwnedFd> {
    // SAFETY: kqueue returns a fresh descriptor (never inherited by a forked child, so
    // it needs no close-on-exec), owned at once.
    let kqueue = unsafe {
        let fd = libc::kqueue();
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        OwnedFd::from_raw_fd(fd)
    };
    let change = libc::kevent {
        ident: pid as libc::uintptr_t,
        filter: libc::EVFILT_PROC,
        flags: libc::EV_ADD,
        fflags: libc::NOTE_EXIT,
        data: 0,
        udata: std::ptr::null_mut(),
    };
    // SAFETY: one change read from a local, no event list: a failed registration is
    // returned as -1 with its errno.
    let r = unsafe {
        libc::kevent(
            kqueue.as_raw_fd(),
            &change,
            1,
            std::ptr::null_mut(),
            0,
            std::ptr::null(),
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(kqueue)
}

/// Takes what the kqueue holds, without waiting; true if it said the process exited.
fn take_exit_event(kqueue: RawFd) -> bool {
    // SAFETY: kevent with no changes fills at most `events.len()` entries of a local
    // array; a zero timeout makes it return at once.
    unsafe {
        let mut events: [libc::kevent; 2] = std::mem::zeroed();
        let now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        let n = libc::kevent(
            kqueue,
            std::ptr::null(),
            0,
            events.as_mut_ptr(),
            events.len() as i32,
            &now,
        );
        let n = usize::try_from(n).unwrap_or(0).min(events.len());
        events[..n]
            .iter()
            .any(|e| e.filter == libc::EVFILT_PROC && e.fflags & libc::NOTE_EXIT != 0)
    }
}
