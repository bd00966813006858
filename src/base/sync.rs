//! One way to take a lock: a panic while a lock was held (none is expected) must not
//! turn every later call into a panic too, so poisoning is ignored. Every lock of the
//! service's shared state is short and leaves its data consistent between statements.

use std::sync::{Mutex, MutexGuard};

pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
