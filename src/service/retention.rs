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

use super::spare_pool::{SparePool, MAX_SPARES};
use crate::base::sync::lock;
use crate::job::Job;
use crate::output::retention::{prune_dead_sessions, SessionLease};
use crate::output::spare_dir::{SpareDir, SPARE_PREFIX};

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
            spares: Arc::new(SparePool::default()),
        })
    }

    /// A spare folder for the next job's files, if one is ready (`JobFiles::create_reusing`).
    pub(super) fn take_spare(&self) -> Option<SpareDir> {
        self.spares.take()
    }

    /// Spares ready for the next jobs.
    pub(super) fn spares_ready(&self) -> usize {
        self.spares.ready()
    }

    /// A name for one more spare, if fewer than `MAX_SPARES` are kept or being made.
    fn next_spare_name(&self) -> Option<PathBuf> {
        let n = self.spares.reserve(MAX_SPARES)?;
        Some(self.session_dir.join(format!("{SPARE_PREFIX}{}-{n}", self.token)))
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
        let spares = self.spares.close();
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
