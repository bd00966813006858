//! A service's own job folders: the lease that proves the service lives (so no other
//! service's pruning touches its session, `output::retention`), start-up pruning of
//! the sessions no live service holds, and the removal of its oldest finished folders
//! as its jobs finish, so a long session keeps at most `keep` of them.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use tokio::runtime::Handle;

use crate::base::sync::lock;
use crate::job::Job;
use crate::output::retention::{prune_dead_sessions, SessionLease};

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
        })
    }

    /// The lease's descriptor, while one is held (a restart in place carries it).
    #[cfg(target_os = "linux")]
    pub(super) fn lease_fd(&self) -> Option<std::os::fd::RawFd> {
        lock(&self.lease).as_ref().map(SessionLease::raw_fd)
    }

    /// Takes the lease of this process's previous image (inherited, still locked).
    #[cfg(target_os = "linux")]
    pub(super) fn adopt_lease(&self, file: std::fs::File) -> std::io::Result<()> {
        let lease = SessionLease::adopt(file, &self.session_dir, &self.token)?;
        *lock(&self.lease) = Some(lease);
        Ok(())
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
        lock(&self.lease).take();
    }

    /// The job's reader is done (its files are closed): its folder joins the finished
    /// ones, and the oldest beyond `keep` are removed, on the removal thread
    /// (`folder_removal.rs`).
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
            super::folder_removal::remove_later(dir, &self.runtime);
        }
    }
}
