//! A service's spare job folders (`output::spare_dir`), ready to be its next jobs'
//! folders: taken by a job's reader, offered by the removal thread
//! (`folder_removal.rs`), closed by `shutdown`.

use std::sync::Mutex;

use crate::base::sync::lock;
use crate::output::spare_dir::SpareDir;

/// Spares a service keeps at most. One is used and one made per job past `keep`; a few
/// more let a burst of jobs find one while the removal thread, at the lowest priority,
/// catches up.
pub(super) const MAX_SPARES: usize = 8;

/// A service's spare folders, ready to be a job's (`Retention::take_spare`).
#[derive(Default)]
pub(super) struct SparePool {
    state: Mutex<SpareState>,
}

#[derive(Default)]
struct SpareState {
    ready: Vec<SpareDir>,
    /// Spares being made on the removal thread (counted against `MAX_SPARES`).
    making: usize,
    /// Names given so far: each spare's is `.spare-<token>-<n>`.
    named: u64,
    /// The service has ended (`Retention::release`): no spare is kept any more.
    closed: bool,
}

impl SparePool {
    /// A spare for the next job's folder, if one is ready.
    pub(super) fn take(&self) -> Option<SpareDir> {
        lock(&self.state).ready.pop()
    }

    pub(super) fn ready(&self) -> usize {
        lock(&self.state).ready.len()
    }

    /// Counts one more spare as being made, and gives its number for its name, unless
    /// `max` are kept or being made already, or the service has ended.
    pub(super) fn reserve(&self, max: usize) -> Option<u64> {
        let mut state = lock(&self.state);
        if state.closed || state.ready.len() + state.making >= max {
            return None;
        }
        state.making += 1;
        state.named += 1;
        Some(state.named)
    }

    /// The service has ended: no spare is kept from now on; those ready are given back
    /// to be removed.
    pub(super) fn close(&self) -> Vec<SpareDir> {
        let mut state = lock(&self.state);
        state.closed = true;
        std::mem::take(&mut state.ready)
    }

    /// Keeps `spare` for a later job, or gives it back if the service has ended.
    pub(super) fn offer(&self, spare: SpareDir) -> Option<SpareDir> {
        let mut state = lock(&self.state);
        state.making = state.making.saturating_sub(1);
        if state.closed {
            return Some(spare);
        }
        state.ready.push(spare);
        None
    }

    /// A spare that could not be made: its place is free again.
    pub(super) fn not_made(&self) {
        let mut state = lock(&self.state);
        state.making = state.making.saturating_sub(1);
    }
}

impl Drop for SparePool {
    /// A service dropped without `shutdown` leaves no spare behind either (the pool
    /// goes with the last of the service and the removal thread's work for it).
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        for spare in state.ready.drain(..) {
            let _ = std::fs::remove_dir_all(spare.path());
        }
    }
}
