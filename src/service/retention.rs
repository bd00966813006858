//! A service's own job folders: the lease that proves the service lives (so no other
//! service's pruning touches its session, `output::retention`), start-up pruning of
//! the sessions no live service holds, and the removal of its oldest finished folders
//! as its jobs finish, so a long session keeps at most `keep` of them. A few of those
//! are emptied and kept as spares instead (`output::spare_dir`): the next jobs' folders
//! are then renamed spares, not new ones.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use tokio::runtime::Handle;

use crate::base::sync::lock;
use crate::job::Job;
use crate::output::retention::{prune_dead_sessions, SessionLease};
use crate::output::spare_dir::{SpareDir, SPARE_PREFIX};

/// Spares a service keeps at most. One is used and one made per job past `keep`; a few
/// more let a burst of jobs find one while the removal thread, at the lowest priority,
/// catches up.
const MAX_SPARES: usize = 8;

pub(super) struct Retention {
    /// Taken before the service's first job folder is made, not at construction: a
    /// service that runs nothing leaves nothing on disk. `None` until then, after
    /// `shutdown`, or when the session's folder cannot be made (then its jobs have no
    /// folders either; each job start tries again).
    lease: Mutex<Option<SessionLease>>,
    session_dir: PathBuf,
    token: String,
    /// This service's finished job folders, oldest first, with their jobs (to tell a
    /// job still kept in memory that its folder is gone).
    finished: Mutex<VecDeque<(PathBuf, Weak<Job>)>>,
    keep: usize,
    runtime: Handle,
    spares: Arc<SparePool>,
}

/// A service's spare folders, ready to be a job's (`Retention::take_spare`).
pub(super) struct SparePool {
    state: Mutex<SpareState>,
}

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

impl Retention {
    /// Prunes the dead sessions under `io_dir` off the caller's thread (housekeeping:
    /// its failure is harmless). A job folder this service makes meanwhile is safe from
    /// that pass as from any other process's: its lease is made first (see
    /// `prune_dead_sessions`).
    pub(super) fn start(io_dir: &Path, session_id: &str, token: &str, keep: usize, runtime: Handle) -> Arc<Self> {
        let session_dir = io_dir.join(session_id);
        let dir = io_dir.to_path_buf();
        runtime.spawn_blocking(move || prune_dead_sessions(&dir, keep));
        Arc::new(Self {
            lease: Mutex::new(None),
            session_dir,
            token: token.to_string(),
            finished: Mutex::new(VecDeque::new()),
            keep,
            runtime,
            spares: Arc::new(SparePool {
                state: Mutex::new(SpareState {
                    ready: Vec::new(),
                    making: 0,
                    named: 0,
                    closed: false,
                }),
            }),
        })
    }

    /// A spare folder for the next job's files, if one is ready (`JobFiles::create_reusing`).
    pub(super) fn take_spare(&self) -> Option<SpareDir> {
        lock(&self.spares.state).ready.pop()
    }

    /// Spares ready for the next jobs.
    pub(super) fn spares_ready(&self) -> usize {
        lock(&self.spares.state).ready.len()
    }

    /// A name for one more spare, if fewer than `MAX_SPARES` are kept or being made.
    fn next_spare_name(&self) -> Option<PathBuf> {
        let mut state = lock(&self.spares.state);
        if state.closed || state.ready.len() + state.making >= MAX_SPARES {
            return None;
        }
        state.making += 1;
        state.named += 1;
        Some(
            self.session_dir
                .join(format!("{SPARE_PREFIX}{}-{}", self.token, state.named)),
        )
    }

    /// Called before a job's folder is made (on the runtime): the lease is taken, or
    /// made again if its file is gone (the ioDir removed), so no job folder is ever
    /// without one.
    pub(super) fn before_job_dir(&self) {
        let mut lease = lock(&self.lease);
        match lease.as_mut() {
            Some(held) => {
                if held.renew().is_err() {
                    *lease = None;
                }
            }
            None => *lease = SessionLease::acquire(&self.session_dir, &self.token).ok(),
        }
    }

    /// The service has ended its jobs (`shutdown`): its lease goes (the file, and the
    /// session's folder if empty), so its folders are like any dead session's. A job
    /// started after this takes it again (`before_job_dir`).
    pub(super) fn release(&self) {
        let spares = {
            let mut state = lock(&self.spares.state);
            state.closed = true;
            std::mem::take(&mut state.ready)
        };
        // Removed now, before the lease goes: a few empty folders.
        for spare in spares {
            let _ = std::fs::remove_dir_all(spare.path());
        }
        lock(&self.lease).take();
    }

    /// The job's reader is done (its files are closed): its folder joins the finished
    /// ones, and the oldest beyond `keep` are made spares or removed, on the removal
    /// thread (`folder_removal.rs`).
    pub(super) fn job_done(&self, job: &Arc<Job>) {
        let Some(dir) = job.output_dir() else { return };
        let evicted: Vec<(PathBuf, Weak<Job>)> = {
            let mut finished = lock(&self.finished);
            finished.push_back((dir, Arc::downgrade(job)));
            let excess = finished.len().saturating_sub(self.keep);
            finished.drain(..excess).collect()
        };
        for (dir, job) in evicted {
            // Told first: no answer names the folder nor reads from it from now on.
            if let Some(job) = job.upgrade() {
                job.files_pruned();
            }
            match self.next_spare_name() {
                Some(spare) => super::folder_removal::recycle_later(dir, spare, self.spares.clone(), &self.runtime),
                None => super::folder_removal::remove_later(dir, &self.runtime),
            }
        }
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
