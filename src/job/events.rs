//! Output notifications: a listener is told that a job has new output, and once that it
//! exited, without polling.
//!
//! A notification carries no output, only "look again": the listener reads what it
//! wants (`read_output`, a view, the screen) when it runs. So notifications coalesce:
//! while one is queued and not yet delivered, more output queues nothing, and a flood
//! of any size makes at most one queued call per subscription. The delivery clears the
//! queued flag *before* it reads the job's state, so output that arrives while it runs
//! queues the next call and nothing is missed.
//!
//! A job keeps its subscriptions as `crate::job::notify::Subscribers`, which knows nothing
//! of jobs. How a notification reaches its listener is the caller's business (the Node binding
//! queues a call on the JS thread); this module only decides when to notify and what
//! the delivery reports.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::base::sync::lock;
use crate::job::notify::Listener;
use crate::job::{Job, JobStatus};

/// Queues one delivery of the subscription (which then calls [`Subscription::take_event`]).
/// Called on the reader's thread: it must return at once.
pub type Notify = Box<dyn Fn() + Send + Sync>;

/// What a delivery reports: the job's output position as of the delivery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputEvent {
    pub handle: u32,
    /// Bytes the process has written so far, all streams.
    pub total_bytes: u64,
    /// Bytes of committed text so far: `read_output(since)` reads up to here.
    pub text_length: u64,
    /// The job has ended; this is the last event of the subscription.
    pub exited: bool,
    pub status: JobStatus,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
}

static NEXT_SUBSCRIPTION: AtomicU64 = AtomicU64::new(1);

/// One listener of one job.
pub struct Subscription {
    id: u64,
    /// Held until the exit is reported or the subscription cancelled, so a job removed
    /// between its exit and the delivery still reports the exit (the caller may remove
    /// it as soon as a wait tells it of the exit, before the delivery runs).
    job: Mutex<Option<Arc<Job>>>,
    /// A delivery is queued and has not yet started.
    queued: AtomicBool,
    /// The exit has been reported (or the subscription cancelled): nothing more is.
    done: AtomicBool,
    /// Dropped at the end, so whatever the caller holds for delivery is let go.
    notify: Mutex<Option<Notify>>,
}

impl Subscription {
    /// Subscribes to `job`'s output; a job that has already ended gets its exit event
    /// queued at once.
    pub fn attach(job: &Arc<Job>, notify: Notify) -> Arc<Self> {
        let subscription = Arc::new(Self {
            id: NEXT_SUBSCRIPTION.fetch_add(1, Ordering::Relaxed),
            job: Mutex::new(Some(job.clone())),
            queued: AtomicBool::new(false),
            done: AtomicBool::new(false),
            notify: Mutex::new(Some(notify)),
        });
        job.subscribers().add(subscription.id, subscription.clone());
        // Added before this check, so an exit published meanwhile is not lost: either
        // its notification finds the subscription, or this check finds the exit.
        if !job.is_running() {
            subscription.wake();
        }
        subscription
    }

    /// Queues a delivery unless one is queued already.
    fn wake(&self) {
        if self.done.load(Ordering::Acquire) || self.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(notify) = lock(&self.notify).as_ref() {
            notify();
        }
    }

    /// The delivery: what to tell the listener now, or `None` when there is nothing
    /// (the subscription ended, or the job is gone).
    pub fn take_event(&self) -> Option<OutputEvent> {
        // Cleared first: output arriving from here on queues another delivery.
        self.queued.store(false, Ordering::Release);
        if self.done.load(Ordering::Acquire) {
            return None;
        }
        let job = lock(&self.job).clone()?;
        let event = {
            let state = job.state();
            OutputEvent {
                handle: job.meta.handle,
                total_bytes: state.output.total_bytes(),
                text_length: state.output.committed_len(),
                exited: state.status != JobStatus::Running,
                status: state.status,
                exit_code: state.exit_code,
                signal: state.signal,
            }
        };
        if event.exited {
            // Exactly one exit event, however many deliveries race to it.
            if self.done.swap(true, Ordering::AcqRel) {
                return None;
            }
            self.detach(&job);
        }
        Some(event)
    }

    /// Ends the subscription: no more deliveries are queued, and one already queued
    /// reports nothing. Idempotent.
    pub fn cancel(&self) {
        self.done.store(true, Ordering::Release);
        let job = lock(&self.job).clone();
        match job {
            Some(job) => self.detach(&job),
            None => {
                lock(&self.notify).take();
            }
        }
    }

    fn detach(&self, job: &Job) {
        job.subscribers().remove(self.id);
        lock(&self.notify).take();
        lock(&self.job).take();
    }
}

impl Listener for Subscription {
    fn wake(&self) {
        Subscription::wake(self);
    }
}
