//! One timer per service for the deadlines of every wait: a delay, a timeout, the next
//! look at a quiet job for input (see `job/waiting.rs`).
//!
//! A wait starts on the caller's (the JS) thread. Giving each wait a runtime task of
//! its own meant waking a runtime thread on every `sendInput`, about 35 µs of the JS
//! thread's time on the Python round trip (BENCHMARKS.md, "Sixth session"). Here a
//! deadline is pushed onto a heap; the timer task is woken only when the new deadline
//! is earlier than the one it sleeps until, which a run of interactions with the same
//! timeout never is. A deadline whose wait ended before it is simply dropped when due:
//! until then it holds a few dozen bytes, so the heap holds about one entry per wait
//! started within the longest timeout in use, and none once they are all due.

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::runtime::Handle;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::base::sync::lock;

/// What to do when a deadline comes; it runs on the timer task, off every lock.
pub type Action = Box<dyn FnOnce() + Send>;

struct Entry {
    at: Instant,
    seq: u64,
    action: Action,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so the max-heap yields the earliest deadline first.
    fn cmp(&self, other: &Self) -> CmpOrdering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

#[derive(Default)]
struct Heap {
    entries: BinaryHeap<Entry>,
    /// When the timer task will look next (`None`: only when woken).
    sleeps_until: Option<Instant>,
    seq: u64,
}

struct Shared {
    heap: Mutex<Heap>,
    wake: Notify,
    closed: AtomicBool,
}

/// Where a service's jobs register deadlines (cheap to clone).
#[derive(Clone)]
pub struct Deadlines(Arc<Shared>);

/// The service's ownership of the timer task: dropping it ends the task.
pub struct DeadlineTimer(Deadlines);

impl DeadlineTimer {
    pub fn start(runtime: &Handle) -> Self {
        let shared = Arc::new(Shared {
            heap: Mutex::new(Heap::default()),
            wake: Notify::new(),
            closed: AtomicBool::new(false),
        });
        runtime.spawn(run(shared.clone()));
        Self(Deadlines(shared))
    }

    pub fn deadlines(&self) -> Deadlines {
        self.0.clone()
    }
}

impl Drop for DeadlineTimer {
    fn drop(&mut self) {
        self.0 .0.closed.store(true, Ordering::Release);
        self.0 .0.wake.notify_one();
    }
}

impl Deadlines {
    /// Runs `action` on the timer task at `at` (or soon after).
    pub fn at(&self, at: Instant, action: Action) {
        let earlier = {
            let mut heap = lock(&self.0.heap);
            heap.seq += 1;
            let seq = heap.seq;
            heap.entries.push(Entry { at, seq, action });
            let earlier = heap.sleeps_until.is_none_or(|t| at < t);
            if earlier {
                heap.sleeps_until = Some(at);
            }
            earlier
        };
        if earlier {
            self.0.wake.notify_one();
        }
    }
}

async fn run(shared: Arc<Shared>) {
    while !shared.closed.load(Ordering::Acquire) {
        let now = Instant::now();
        let (due, next) = {
            let mut heap = lock(&shared.heap);
            let mut due = Vec::new();
            while heap.entries.peek().is_some_and(|e| e.at <= now) {
                if let Some(entry) = heap.entries.pop() {
                    due.push(entry.action);
                }
            }
            heap.sleeps_until = heap.entries.peek().map(|e| e.at);
            (due, heap.sleeps_until)
        };
        for action in due {
            action();
        }
        // A deadline registered meanwhile either is later than `next` or left a permit
        // in `wake` (`notify_one` keeps one for a task not yet waiting).
        match next {
            Some(at) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(at) => {}
                    _ = shared.wake.notified() => {}
                }
            }
            None => shared.wake.notified().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn runs_actions_in_deadline_order_even_when_registered_out_of_order() {
        let timer = DeadlineTimer::start(&Handle::current());
        let deadlines = timer.deadlines();
        let (tx, rx) = mpsc::channel();
        let now = Instant::now();
        for (label, ms) in [("late", 120u64), ("early", 20), ("middle", 60)] {
            let tx = tx.clone();
            deadlines.at(
                now + Duration::from_millis(ms),
                Box::new(move || {
                    let _ = tx.send(label);
                }),
            );
        }
        tokio::time::sleep(Duration::from_millis(400)).await;
        let order: Vec<_> = rx.try_iter().collect();
        assert_eq!(order, ["early", "middle", "late"]);
    }

    #[tokio::test]
    async fn an_earlier_deadline_wakes_a_timer_sleeping_until_a_later_one() {
        let timer = DeadlineTimer::start(&Handle::current());
        let deadlines = timer.deadlines();
        let (tx, rx) = mpsc::channel();
        let far = tx.clone();
        deadlines.at(
            Instant::now() + Duration::from_secs(3600),
            Box::new(move || {
                let _ = far.send("far");
            }),
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
        let started = Instant::now();
        deadlines.at(
            started + Duration::from_millis(10),
            Box::new(move || {
                let _ = tx.send("near");
            }),
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(rx.try_iter().collect::<Vec<_>>(), ["near"]);
    }

    #[tokio::test]
    async fn dropping_the_timer_ends_its_task_and_runs_nothing_more() {
        let timer = DeadlineTimer::start(&Handle::current());
        let deadlines = timer.deadlines();
        let (tx, rx) = mpsc::channel::<()>();
        deadlines.at(
            Instant::now() + Duration::from_millis(50),
            Box::new(move || {
                let _ = tx.send(());
            }),
        );
        drop(timer);
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(rx.try_recv().is_err());
    }
}
