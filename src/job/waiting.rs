//! Waiting on a job: for a pattern in its output, its exit, a delay, a timeout or a
//! prompt (see `input`). A waiter is registered under the job's lock before anything
//! it waits for can happen, so nothing slips past it.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use super::{Job, JobState, JobStatus};
use crate::wait::{WaitOutcome, WaitSpec, WaitStatus, Waiter};

impl Job {
    /// Registers a waiter now; only output ingested after this call can satisfy it.
    /// Await [`PendingWait::outcome`] for the result.
    pub fn begin_wait(self: &Arc<Self>, spec: WaitSpec) -> PendingWait<'_> {
        let ticket = self.register_waiter(spec.pattern.clone());
        self.pending(ticket, spec)
    }

    /// Registers a waiter without waiting yet: `run` does this before the reader
    /// starts, so not even the first byte of output can slip past the pattern.
    pub fn register_waiter(&self, pattern: Option<regex::Regex>) -> WaitTicket {
        self.register_waiter_replaying(pattern, false)
    }

    /// Like `register_waiter`; with `replay`, the waiter first sees the text so far,
    /// under the same lock as the reader, so nothing is seen twice or missed.
    pub fn register_waiter_replaying(&self, pattern: Option<regex::Regex>, replay: bool) -> WaitTicket {
        let id = self.next_waiter.fetch_add(1, Ordering::Relaxed);
        let mut state = self.state();
        let mut waiter = Waiter::new(id, pattern);
        if replay {
            waiter.feed(&state.output.text_since(0));
        }
        if state.status != JobStatus::Running {
            waiter.mark_exited();
        }
        let notify = waiter.notify.clone();
        state.waiters.push(waiter);
        WaitTicket { id, notify }
    }

    /// Drops a registered waiter that will not be awaited.
    pub fn unregister(&self, ticket: WaitTicket) {
        remove_waiter(&mut self.state(), ticket.id);
    }

    /// The wait of a registered waiter.
    pub fn pending(self: &Arc<Self>, ticket: WaitTicket, spec: WaitSpec) -> PendingWait<'_> {
        PendingWait {
            guard: WaiterGuard {
                job: self,
                id: ticket.id,
            },
            notify: ticket.notify,
            spec,
        }
    }
}

async fn sleep_or_never(d: Option<Duration>) {
    match d {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}

/// A registered waiter, not yet awaited.
pub struct WaitTicket {
    id: u64,
    notify: Arc<Notify>,
}

/// A registered wait; dropping it unregisters the waiter.
pub struct PendingWait<'a> {
    guard: WaiterGuard<'a>,
    notify: Arc<Notify>,
    spec: WaitSpec,
}

impl PendingWait<'_> {
    /// Resolves at the first of: pattern matched, exit, delay, timeout.
    pub async fn outcome(self) -> WaitOutcome {
        let Self { guard, notify, spec } = self;
        let job = guard.job;
        let input = async {
            if spec.detect_input {
                job.input_awaited().await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        let fired = tokio::select! {
            _ = notify.notified() => None,
            _ = sleep_or_never(spec.delay) => Some(WaitStatus::DelayElapsed),
            _ = sleep_or_never(spec.timeout) => Some(WaitStatus::TimedOut),
            _ = input => Some(WaitStatus::AwaitingInput),
        };
        let waiter = guard.take();
        let status = match (&waiter, fired) {
            (Some(w), _) if w.matched.is_some() => WaitStatus::Matched,
            (Some(w), _) if w.exited => WaitStatus::Exited,
            (_, Some(fired)) => fired,
            _ => WaitStatus::Exited,
        };
        let (output, truncated) = waiter.as_ref().map(|w| w.output(spec.max_output)).unwrap_or_default();
        WaitOutcome {
            status,
            output,
            matched: waiter.and_then(|w| w.matched),
            truncated,
        }
    }
}

/// Removes the waiter if the wait is abandoned (its future dropped) or finished.
struct WaiterGuard<'a> {
    job: &'a Arc<Job>,
    id: u64,
}

impl WaiterGuard<'_> {
    /// Ends the wait: the waiter leaves the job, and what it saw counts as delivered.
    fn take(self) -> Option<Waiter> {
        let mut state = self.job.state();
        let waiter = remove_waiter(&mut state, self.id);
        state.delivered = state.output.text_len();
        drop(state);
        std::mem::forget(self);
        waiter
    }
}

impl Drop for WaiterGuard<'_> {
    fn drop(&mut self) {
        let mut state = self.job.state();
        remove_waiter(&mut state, self.id);
    }
}

fn remove_waiter(state: &mut JobState, id: u64) -> Option<Waiter> {
    let index = state.waiters.iter().position(|w| w.id == id)?;
    Some(state.waiters.swap_remove(index))
}
