//! The threads that process floods (`crate::job::handoff`), at a lower scheduling weight.
//!
//! During a flood on 2 cores, the job, the reader, the processing of its output (text,
//! screen emulation, file) and the JS thread all want a core. The JS thread's gaps are
//! then mostly spent waiting for one, not working: a frame late, a keystroke late. So
//! the processing runs on threads of its own whose nice value is raised
//! (`crate::platform::lower_current_thread`): when the JS thread wakes, the scheduler
//! gives it the core first; when nothing else wants the cores, the processing runs at
//! full speed all the same. A flood is then bounded by the job and the reader, not by
//! the weight of these threads, unless the machine is busy with other work.
//!
//! Not tokio's blocking pool: its threads also run other work (process searches, child
//! waits, file removal), and a nice value cannot be taken back without privileges. These
//! threads run only `Job::ingest` (text, screen, file, notifying listeners through a
//! non-blocking queue) and NEVER start a process: a process started here would inherit
//! the raised nice value. Nothing that spawns (jobs start on the JS thread in the addon,
//! on tokio's threads in the daemon) may be moved onto them.

use std::collections::VecDeque;
use std::sync::{Condvar, LazyLock, Mutex};

/// Nice steps above the process's own value. 10 gives a thread ~1/10 of the weight of
/// one at the default (the kernel's weight table: 1024 against 110).
const NICE_STEPS: i32 = 10;

type Work = Box<dyn FnOnce() + Send>;

struct Pool {
    queue: Mutex<Pool_>,
    ready: Condvar,
}

#[derive(Default)]
struct Pool_ {
    work: VecDeque<Work>,
    /// Threads waiting for work (each takes the next piece when it wakes).
    idle: usize,
    /// Threads started so far: at most one per core (`crate::job::handoff` runs at most
    /// that many pieces at once).
    threads: usize,
}

static POOL: LazyLock<Pool> = LazyLock::new(|| Pool {
    queue: Mutex::new(Pool_::default()),
    ready: Condvar::new(),
});

/// Runs `work` on one of the lowered threads, starting one if none is idle. Returns
/// `false` (and drops `work`) only if no thread could be started.
pub fn run(work: Work) -> bool {
    let mut queue = lock();
    queue.work.push_back(work);
    if queue.idle >= queue.work.len() {
        POOL.ready.notify_one();
        return true;
    }
    // Every thread is busy or just finishing: one looks at the queue before it waits.
    if queue.threads >= cores() {
        return true;
    }
    let started = std::thread::Builder::new().name("nss-flood".into()).spawn(serve);
    match started {
        Ok(_) => {
            queue.threads += 1;
            true
        }
        Err(_) => {
            queue.work.pop_back();
            false
        }
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn lock() -> std::sync::MutexGuard<'static, Pool_> {
    // The queue holds plain data: a panic elsewhere leaves it consistent.
    POOL.queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A pool thread: lowered once, for life, then runs work as it comes.
fn serve() {
    crate::platform::lower_current_thread(NICE_STEPS);
    let mut queue = lock();
    loop {
        if let Some(work) = queue.work.pop_front() {
            drop(queue);
            // A panicking piece of work (a bug) must not take the thread's place away
            // silently: it is contained, and the thread serves on.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            queue = lock();
            continue;
        }
        queue.idle += 1;
        queue = POOL.ready.wait(queue).unwrap_or_else(|poisoned| poisoned.into_inner());
        queue.idle -= 1;
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::time::Duration;

    use super::*;

    fn own_nice() -> i32 {
        rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap_or(i32::MIN)
    }

    #[test]
    fn work_runs_lowered_and_the_caller_keeps_its_weight() {
        let before = own_nice();
        let (sent, received) = std::sync::mpsc::channel();
        assert!(run(Box::new(move || {
            let _ = sent.send(own_nice());
        })));
        let there = received.recv_timeout(Duration::from_secs(60)).expect("the work ran");
        assert_eq!(there, (before + NICE_STEPS).min(19));
        assert_eq!(own_nice(), before, "only the flood thread is lowered");
    }
}
