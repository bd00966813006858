//! Waiting on a job: for a pattern in its output, its exit, a delay, a timeout or a
//! prompt (see `input`). A waiter is registered under the job's lock before anything
//! it waits for can happen, so nothing slips past it.
//!
//! A started wait owns its ending: whoever decides it — the reader on a match or the
//! exit, the service's timer (`crate::base::deadlines`) on a delay, a timeout or a look that
//! finds the job waiting for input — takes the waiter out of the job and calls its
//! `OnWaitDone`, off the job's lock, on its own thread. No task waits in between, so a
//! `sendInput` answered by the program costs no wake-up of another thread but the one
//! that brings the answer to the caller. `PendingWait::outcome` is the same wait as a
//! future.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;

use super::{Job, JobState, JobStatus};
use crate::job::spawn::Mode;
use crate::job::wait::{OnWaitDone, WaitOutcome, WaitSpec, WaitStatus, Waiter};

impl Job {
    /// Registers a waiter now; only output ingested after this call can satisfy it.
    /// Await [`PendingWait::outcome`] for the result.
    pub fn begin_wait(self: &Arc<Self>, spec: WaitSpec) -> PendingWait {
        let ticket = self.register_waiter(spec.pattern.clone());
        self.pending(ticket, spec)
    }

    /// Registers a waiter without waiting yet: `run` does this before the reader
    /// starts, so not even the first byte of output can slip past the pattern.
    pub fn register_waiter(&self, pattern: Option<crate::job::wait::Pattern>) -> WaitTicket {
        self.register_waiter_replaying(pattern, false)
    }

    /// Like `register_waiter`; with `replay`, the waiter first sees the text so far,
    /// under the same lock as the reader, so nothing is seen twice or missed.
    pub fn register_waiter_replaying(&self, pattern: Option<crate::job::wait::Pattern>, replay: bool) -> WaitTicket {
        let id = self.next_waiter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut state = self.state();
        let mut waiter = Waiter::new(id, pattern);
        if replay {
            waiter.feed(&state.output.text_since(0));
        }
        if state.status != JobStatus::Running {
            waiter.mark_exited();
        }
        state.waiters.push(waiter);
        WaitTicket { id }
    }

    /// Drops a registered waiter that will not be awaited.
    pub fn unregister(&self, ticket: WaitTicket) {
        remove_waiter(&mut self.state(), ticket.id);
    }

    /// The wait of a registered waiter, as a future.
    pub fn pending(self: &Arc<Self>, ticket: WaitTicket, spec: WaitSpec) -> PendingWait {
        PendingWait {
            job: self.clone(),
            ticket,
            spec,
        }
    }

    /// Starts a registered wait: it ends at the first of a match, the exit, the delay,
    /// the timeout or (with `detect_input`) the job waiting for input, and `done` is
    /// called once with the outcome (see the module doc).
    pub fn start_wait(self: &Arc<Self>, ticket: WaitTicket, spec: WaitSpec, done: OnWaitDone) {
        let id = ticket.id;
        let decided = {
            let mut state = self.state();
            let Some(index) = state.waiters.iter().position(|w| w.id == id) else {
                drop(state);
                done(ended_unseen());
                return;
            };
            state.waiters[index].on_done(spec.max_output, done);
            state.waiters[index]
                .is_done()
                .then(|| end_waiter(&mut state, index, None))
        };
        if let Some((done, outcome)) = decided {
            done(outcome);
            return;
        }
        let now = Instant::now();
        if let Some(delay) = spec.delay {
            self.deadlines
                .at(now + delay, self.expire_at(id, WaitStatus::DelayElapsed));
        }
        if let Some(timeout) = spec.timeout {
            self.deadlines
                .at(now + timeout, self.expire_at(id, WaitStatus::TimedOut));
        }
        if spec.detect_input && self.meta.mode == Mode::Pty {
            self.touch();
            self.look_for_input_at(now + super::INPUT_SETTLE, id, super::INPUT_SETTLE);
        }
    }

    /// An action for the timer: end wait `id` with `status` if it is still on.
    fn expire_at(self: &Arc<Self>, id: u64, status: WaitStatus) -> Box<dyn FnOnce() + Send> {
        let job = Arc::downgrade(self);
        Box::new(move || {
            if let Some(job) = job.upgrade() {
                job.end_wait(id, status);
            }
        })
    }

    /// Ends wait `id` with `status` unless it has ended already.
    pub(super) fn end_wait(&self, id: u64, status: WaitStatus) {
        let decided = {
            let mut state = self.state();
            let Some(index) = state.waiters.iter().position(|w| w.id == id) else {
                return;
            };
            end_waiter(&mut state, index, Some(status))
        };
        let (done, outcome) = decided;
        done(outcome);
    }

    /// Whether wait `id` is still on.
    pub(super) fn waiting(&self, id: u64) -> bool {
        self.state().waiters.iter().any(|w| w.id == id)
    }

    /// Schedules a look at the job for wait `id` (see `Job::look_for_input`).
    pub(super) fn look_for_input_at(self: &Arc<Self>, at: Instant, id: u64, pause: Duration) {
        let job: Weak<Job> = Arc::downgrade(self);
        self.deadlines.at(
            at,
            Box::new(move || {
                if let Some(job) = job.upgrade() {
                    job.look_for_input(id, pause);
                }
            }),
        );
    }

    /// Ends every started wait the last change decided (a match, the exit). Called
    /// by the reader with the lock held; the returned endings run after it is dropped.
    pub(super) fn decided_waits(state: &mut JobState) -> Vec<(OnWaitDone, WaitOutcome)> {
        let mut ended = Vec::new();
        let mut index = 0;
        while index < state.waiters.len() {
            let waiter = &state.waiters[index];
            if waiter.is_done() && waiter.started() {
                ended.push(end_waiter(state, index, None));
            } else {
                index += 1;
            }
        }
        ended
    }
}

/// Takes a started waiter out of the job with its outcome; what it saw counts as
/// delivered. `fired`: the deadline that ended it, if one did.
fn end_waiter(state: &mut JobState, index: usize, fired: Option<WaitStatus>) -> (OnWaitDone, WaitOutcome) {
    let mut waiter = state.waiters.swap_remove(index);
    state.delivered = state.output.text_len();
    let status = if waiter.matched.is_some() {
        WaitStatus::Matched
    } else if waiter.exited {
        WaitStatus::Exited
    } else {
        fired.unwrap_or(WaitStatus::Exited)
    };
    let (max_output, done) = waiter.take_done().unwrap_or_else(|| (0, Box::new(|_| {})));
    let (output, truncated) = waiter.output(max_output);
    let outcome = WaitOutcome {
        status,
        output,
        matched: waiter.matched.take(),
        truncated,
    };
    (done, outcome)
}

/// The outcome of a wait whose waiter is gone (its job ended and was dropped).
fn ended_unseen() -> WaitOutcome {
    WaitOutcome {
        status: WaitStatus::Exited,
        output: String::new(),
        matched: None,
        truncated: false,
    }
}

/// A registered waiter, not yet started.
pub struct WaitTicket {
    id: u64,
}

/// A registered wait, as a future; dropping the future unregisters the waiter.
pub struct PendingWait {
    job: Arc<Job>,
    ticket: WaitTicket,
    spec: WaitSpec,
}

impl PendingWait {
    /// Resolves at the first of: pattern matched, exit, delay, timeout, input awaited.
    pub async fn outcome(self) -> WaitOutcome {
        let Self { job, ticket, spec } = self;
        let id = ticket.id;
        let (tx, rx) = oneshot::channel();
        job.start_wait(
            ticket,
            spec,
            Box::new(move |outcome| {
                let _ = tx.send(outcome);
            }),
        );
        let _unregister = Unregister { job: &job, id };
        rx.await.unwrap_or_else(|_| ended_unseen())
    }
}

/// Removes the waiter if its future is dropped before the wait ended.
struct Unregister<'a> {
    job: &'a Arc<Job>,
    id: u64,
}

impl Drop for Unregister<'_> {
    fn drop(&mut self) {
        remove_waiter(&mut self.job.state(), self.id);
    }
}

fn remove_waiter(state: &mut JobState, id: u64) -> Option<Waiter> {
    let index = state.waiters.iter().position(|w| w.id == id)?;
    Some(state.waiters.swap_remove(index))
}
