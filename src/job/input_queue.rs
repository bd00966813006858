//! The input handed to a job's writer task and not yet written: counted, bounded, and
//! dropped at once when the job is killed, removed or done with its I/O.
//!
//! A program that never reads its input (or a caller that writes faster than it reads)
//! would otherwise grow the queue without bound, and a killed job's writer would go on
//! feeding a dead terminal until the queue ran dry, holding the memory and the PTY.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::Notify;

use crate::base::limits::MAX_QUEUED_INPUT_BYTES;

#[derive(Default)]
pub struct InputQueue {
    /// Inputs queued and not yet written (while 0, `Job::write_now` writes directly).
    count: AtomicUsize,
    /// Their bytes, at most [`MAX_QUEUED_INPUT_BYTES`].
    bytes: AtomicUsize,
    dropped: AtomicBool,
    drop_notify: Notify,
    /// A restart in place is handing the queue over (src/job/carry.rs): nothing more
    /// is counted in, so nothing is queued after the hand-over was written.
    handing_over: AtomicBool,
}

/// Why input was not queued.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// Queuing it would pass [`MAX_QUEUED_INPUT_BYTES`]: `bytes` are waiting already.
    Full { bytes: usize },
    /// The job no longer takes input (killed, removed, or its I/O is done).
    Closed,
}

/// The bound: `len` more bytes on top of the `now` queued.
fn fits(now: usize, len: usize) -> Result<(), Refused> {
    if now + len > MAX_QUEUED_INPUT_BYTES {
        return Err(Refused::Full { bytes: now });
    }
    Ok(())
}

impl InputQueue {
    pub fn is_empty(&self) -> bool {
        self.count.load(Ordering::Acquire) == 0
    }

    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    /// Whether `len` more bytes fit now (nothing is counted in).
    pub fn room(&self, len: usize) -> Result<(), Refused> {
        fits(self.bytes(), len)
    }

    /// Counts `len` more bytes in, unless that passes the bound or the queue was dropped.
    pub fn reserve(&self, len: usize) -> Result<(), Refused> {
        // Handing over: refused like a closed queue (the caller's connection is being
        // closed by the restart, its call answered `DAEMON_LOST`).
        if self.dropped.load(Ordering::Acquire) || self.handing_over.load(Ordering::Acquire) {
            return Err(Refused::Closed);
        }
        let mut now = self.bytes.load(Ordering::Acquire);
        loop {
            fits(now, len)?;
            match self
                .bytes
                .compare_exchange_weak(now, now + len, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(seen) => now = seen,
            }
        }
        self.count.fetch_add(1, Ordering::SeqCst);
        // Looked at again after counting in: a hand-over that began meanwhile either
        // sees this count (and refuses, src/job/carry.rs) or is seen here (and this
        // input is refused), never neither.
        if self.handing_over.load(Ordering::SeqCst) {
            self.release(len);
            return Err(Refused::Closed);
        }
        Ok(())
    }

    /// What `reserve` counted in leaves the queue (written, or never sent).
    pub fn release(&self, len: usize) {
        self.bytes.fetch_sub(len, Ordering::AcqRel);
        self.count.fetch_sub(1, Ordering::AcqRel);
    }

    /// How many inputs are counted in (each a write or a close).
    pub fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// A restart in place hands the queue over: nothing more is counted in until
    /// `reopen` (the restart did not happen).
    pub fn hand_over(&self) {
        self.handing_over.store(true, Ordering::SeqCst);
    }

    pub fn reopen(&self) {
        self.handing_over.store(false, Ordering::Release);
    }

    /// Nothing more is written: the writer task stops at once and drops what it holds.
    pub fn drop_all(&self) {
        self.dropped.store(true, Ordering::Release);
        self.drop_notify.notify_waiters();
    }

    pub async fn dropped(&self) {
        let notified = self.drop_notify.notified();
        tokio::pin!(notified);
        // Registered before the flag is read, so a `drop_all` in between is not missed.
        notified.as_mut().enable();
        if self.dropped.load(Ordering::Acquire) {
            return;
        }
        notified.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_closed_after_drop() {
        let queue = InputQueue::default();
        assert!(queue.reserve(MAX_QUEUED_INPUT_BYTES).is_ok());
        assert_eq!(
            queue.reserve(1),
            Err(Refused::Full {
                bytes: MAX_QUEUED_INPUT_BYTES
            })
        );
        queue.release(MAX_QUEUED_INPUT_BYTES);
        assert!(queue.is_empty());
        assert!(queue.reserve(10).is_ok());
        queue.drop_all();
        assert_eq!(queue.reserve(1), Err(Refused::Closed));
    }
}
