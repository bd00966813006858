//! Stopping a job's reader at a point where nothing read is held (a restart in place,
//! src/daemon/upgrade/): every byte read so far is in the job, the process's exit is
//! not taken, and what the kernel holds stays in the terminal or the pipes for the
//! next image, which inherits them. Until `thaw`, no thread touches the job's output.
//!
//! The writer stands still too (src/job/writer.rs), between two writes with every
//! byte it wrote counted: it leaves here what it has not written yet (`Unwritten`),
//! which the hand-over carries for the next image's writer to write first.
//!
//! Also the job's descriptors as numbers, for the hand-over: each slot is emptied
//! under the same lock before its descriptor is closed, so a number taken from here
//! (`dup_all`) is never one reused for something else since.

use std::future::Future;
#[cfg(unix)]
use std::os::fd::{BorrowedFd, OwnedFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use tokio::sync::{watch, Notify};

use crate::base::sync::lock;
use crate::platform::Exit;

#[derive(Debug)]
pub struct Freeze {
    wanted: watch::Sender<bool>,
    /// The reader stands still (`hold`).
    held: AtomicBool,
    /// The reader returned: the job's output is done.
    ended: AtomicBool,
    changed: Notify,
    fds: Mutex<Fds>,
    /// The writer task runs (set before it is spawned, cleared when it returns).
    writer_live: AtomicBool,
    /// What the writer standing still has not written; `None` while it writes on.
    unwritten: Mutex<Option<Unwritten>>,
    /// The process's exit, taken while the reader stood still (`hold_or_exit`).
    exit: Mutex<Option<Exit>>,
}

/// The input a writer standing still has not written, in order: the rest of the one
/// it was writing (from where its write stood) and every one queued behind it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unwritten {
    pub bytes: Vec<u8>,
    /// A close of stdin follows the bytes (what is queued after it is never written).
    pub close: bool,
    /// How many queued inputs that is: checked against the queue's count, so an input
    /// counted in and not yet handed to the writer is seen (src/job/carry.rs).
    pub items: usize,
}

/// A descriptor's number (Windows has handles, and no restart in place).
pub type RawFd = i32;

/// A job's descriptors: the terminal (PTY mode) or its three pipes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fds {
    pub pty: Option<RawFd>,
    pub stdin: Option<RawFd>,
    pub stdout: Option<RawFd>,
    pub stderr: Option<RawFd>,
}

/// Copies of a frozen job's descriptors (close-on-exec, until the exec clears it).
#[cfg(unix)]
#[derive(Debug, Default)]
pub struct DupFds {
    pub pty: Option<OwnedFd>,
    pub stdin: Option<OwnedFd>,
    pub stdout: Option<OwnedFd>,
    pub stderr: Option<OwnedFd>,
}

impl Default for Freeze {
    fn default() -> Self {
        Self {
            wanted: watch::channel(false).0,
            held: AtomicBool::new(false),
            ended: AtomicBool::new(false),
            changed: Notify::new(),
            fds: Mutex::new(Fds::default()),
            writer_live: AtomicBool::new(false),
            unwritten: Mutex::new(None),
            exit: Mutex::new(None),
        }
    }
}

impl Freeze {
    pub fn set_fds(&self, fds: Fds) {
        *lock(&self.fds) = fds;
    }

    /// Runs `close` (which drops the writer's end of stdin) with the slot emptied
    /// first, under the lock.
    pub fn closing_stdin<T>(&self, close: impl FnOnce() -> T) -> T {
        let mut fds = lock(&self.fds);
        fds.stdin = None;
        close()
    }

    /// The reader is done: its descriptors are let go (by `close`) under the lock.
    pub fn reader_ended<T>(&self, close: impl FnOnce() -> T) -> T {
        let out = {
            let mut fds = lock(&self.fds);
            fds.pty = None;
            fds.stdout = None;
            fds.stderr = None;
            close()
        };
        self.ended.store(true, Ordering::SeqCst);
        self.changed.notify_waiters();
        out
    }

    /// Asks the reader to stand still at its next step.
    pub fn request(&self) {
        self.wanted.send_replace(true);
    }

    /// Lets the reader go on (a restart that did not happen).
    pub fn thaw(&self) {
        self.wanted.send_replace(false);
    }

    /// Resolves once a freeze is asked for (the reader's select branch).
    pub async fn requested(&self) {
        let mut rx = self.wanted.subscribe();
        let _ = rx.wait_for(|wanted| *wanted).await;
    }

    /// Called by the reader once nothing it read is held: stands still until thawed.
    pub async fn hold(&self) {
        let mut rx = self.wanted.subscribe();
        self.held.store(true, Ordering::SeqCst);
        self.changed.notify_waiters();
        let _ = rx.wait_for(|wanted| !*wanted).await;
        self.held.store(false, Ordering::SeqCst);
    }

    /// Whether a freeze is asked for now.
    pub fn wanted(&self) -> bool {
        *self.wanted.borrow()
    }

    /// Resolves once no freeze is asked for (a restart that did not happen).
    pub async fn thawed(&self) {
        let mut rx = self.wanted.subscribe();
        let _ = rx.wait_for(|wanted| !*wanted).await;
    }

    /// A writer task is about to be spawned: until it stands still or returns, the job
    /// is not settled.
    pub fn writer_started(&self) {
        self.writer_live.store(true, Ordering::SeqCst);
    }

    /// The writer returned (its queue dropped, stdin closed or the terminal gone).
    pub fn writer_ended(&self) {
        self.writer_live.store(false, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// The writer stands still with `unwritten` not written (or took more input while
    /// it does: it says so again).
    pub fn writer_holds(&self, unwritten: Unwritten) {
        *lock(&self.unwritten) = Some(unwritten);
        self.changed.notify_waiters();
    }

    /// The writer writes on (thawed).
    pub fn writer_goes_on(&self) {
        *lock(&self.unwritten) = None;
    }

    /// What the writer standing still has not written; `None` while it writes on, or
    /// when there is no writer.
    pub fn unwritten(&self) -> Option<Unwritten> {
        lock(&self.unwritten).clone()
    }

    /// `hold`, for a reader whose process still runs: its exit, if it comes meanwhile,
    /// is taken and kept for the hand-over (`exit_while_held`), then the reader holds
    /// on. Why: a process the exit ring (src/platform/linux/exit_ring.rs) tells of is
    /// reaped by its watcher, or by the ring's thread once the watcher is gone; its
    /// status, left in a reader that never reads it again, would be lost with this
    /// image, and the next one would find no such process. `Some`: the exit, for the
    /// reader to publish once thawed (a restart that did not happen).
    pub async fn hold_or_exit<T>(
        &self,
        mut wait: Pin<&mut impl Future<Output = std::io::Result<T>>>,
        exit_of: impl Fn(&T) -> Exit,
    ) -> Option<std::io::Result<T>> {
        tokio::select! {
            biased;
            _ = self.hold() => None,
            status = wait.as_mut() => {
                if let Ok(status) = &status {
                    *lock(&self.exit) = Some(exit_of(status));
                }
                self.hold().await;
                Some(status)
            }
        }
    }

    /// The exit `hold_or_exit` took, if one came while the reader stood still.
    pub fn exit_while_held(&self) -> Option<Exit> {
        *lock(&self.exit)
    }

    /// Whether the reader stands still (or is gone) and so does the writer (or it is
    /// gone): nothing changes the output or writes input now.
    pub fn settled(&self) -> bool {
        let reader = self.held.load(Ordering::SeqCst) || self.ended.load(Ordering::SeqCst);
        let writer = !self.writer_live.load(Ordering::SeqCst) || lock(&self.unwritten).is_some();
        reader && writer
    }

    pub fn reader_gone(&self) -> bool {
        self.ended.load(Ordering::SeqCst)
    }

    /// Resolves once `settled` (or at once if it is).
    pub async fn until_settled(&self) {
        loop {
            let changed = self.changed.notified();
            if self.settled() {
                return;
            }
            changed.await;
        }
    }

    /// Copies of the descriptors still open. `Err` when one cannot be copied.
    #[cfg(unix)]
    pub fn dup_all(&self) -> std::io::Result<DupFds> {
        let fds = lock(&self.fds);
        let dup = |fd: Option<RawFd>| -> std::io::Result<Option<OwnedFd>> {
            fd.map(|fd| {
                // SAFETY: the slot holds a descriptor the job keeps open while the slot
                // is set (emptied under this lock before it is closed).
                let borrowed: BorrowedFd<'_> = unsafe { BorrowedFd::borrow_raw(fd) };
                borrowed.try_clone_to_owned()
            })
            .transpose()
        };
        Ok(DupFds {
            pty: dup(fds.pty)?,
            stdin: dup(fds.stdin)?,
            stdout: dup(fds.stdout)?,
            stderr: dup(fds.stderr)?,
        })
    }
}

/// A descriptor the previous image left open for this one, by number: checked to be
/// open, borrowed only (nothing is taken before every record is checked). 0-2 are never
/// one (the new image's own standard streams).
#[cfg(target_os = "linux")]
pub fn inherited_fd(fd: std::os::fd::RawFd) -> Result<BorrowedFd<'static>, String> {
    if fd <= 2 {
        return Err(format!("descriptor {fd} cannot be one"));
    }
    // SAFETY: a number only, used while this image has taken nothing; fcntl says
    // whether it is open.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    rustix::io::fcntl_getfd(borrowed).map_err(|e| format!("descriptor {fd} is not open: {e}"))?;
    Ok(borrowed)
}
