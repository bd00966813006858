//! A job's listeners, kept apart from the job's state lock, so notifying never waits on
//! a reader that holds it. A listener is only told "there is news" (new output, or the
//! exit); what it then reads is `crate::job::events`'s business, so this module knows
//! nothing of jobs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::base::sync::lock;

/// Something to tell that a job has news. Called on the reader's thread, under the
/// list's lock: it must return at once (queue, never run, the delivery).
pub trait Listener: Send + Sync {
    fn wake(&self);
}

#[derive(Default)]
pub struct Subscribers {
    list: Mutex<Vec<(u64, Arc<dyn Listener>)>>,
    /// Mirrors `!list.is_empty()`: the reader checks it per chunk without locking.
    any: AtomicBool,
}

impl Subscribers {
    pub fn add(&self, id: u64, listener: Arc<dyn Listener>) {
        let mut list = lock(&self.list);
        list.push((id, listener));
        self.any.store(true, Ordering::Release);
    }

    pub fn remove(&self, id: u64) {
        let mut list = lock(&self.list);
        list.retain(|(listener_id, _)| *listener_id != id);
        self.any.store(!list.is_empty(), Ordering::Release);
    }

    /// Tells every listener there is news.
    pub fn wake_all(&self) {
        if !self.any.load(Ordering::Acquire) {
            return;
        }
        for (_, listener) in lock(&self.list).iter() {
            listener.wake();
        }
    }
}
