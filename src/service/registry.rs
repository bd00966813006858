//! Every live service of this process, for the synchronous kill at process exit; the
//! owners that end their own services' jobs (a Node environment: the main thread or a
//! worker); and the random tokens that tell this process's jobs (and each service's)
//! from others.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::SystemTime;

use super::Inner;
use crate::base::sync::lock;
use crate::job::kill::kill_all_now;
use crate::job::Job;

/// Every live service in this process, for the synchronous kill at process exit: the
/// process as the owner of them all.
static PROCESS: Owner = Owner {
    services: Mutex::new(Vec::new()),
};
static NEXT_SERVICE: AtomicU64 = AtomicU64::new(1);

/// A random token for this process (its jobs' owner marker).
pub fn process_token() -> &'static str {
    static_token().get_or_init(|| random_hex(8))
}

fn static_token() -> &'static OnceLock<String> {
    static TOKEN: OnceLock<String> = OnceLock::new();
    &TOKEN
}

/// Takes the token of this process's previous image (a restart in place,
/// src/daemon/upgrade/): its jobs carry it as their owner marker, and the watchdog
/// kills by it. `false` when a token was already in use (a job started first).
pub fn resume_process_token(token: &str) -> bool {
    static_token().set(token.to_string()).is_ok() || process_token() == token
}

/// Service numbers go on past those of a previous image's services (their tokens
/// are carried), so no two services share a token.
pub fn resume_service_numbers(next: u64) {
    NEXT_SERVICE.fetch_max(next, Ordering::Relaxed);
}

/// The next service number (for a restart's hand-over).
pub fn next_service_number() -> u64 {
    NEXT_SERVICE.load(Ordering::Relaxed)
}

pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    if getrandom::fill(&mut buf).is_err() {
        // The system's generator failed (it does not on any supported system): time
        // and pid still separate concurrent services.
        let seed = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
            ^ u128::from(std::process::id());
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (seed >> ((i % 16) * 8)) as u8;
        }
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// Adds a new service to the registry.
pub(super) fn register(inner: &Arc<Inner>) {
    PROCESS.adopt(inner);
}

/// `<process token>-<service number>`: tells one service's jobs from any other's.
pub(super) fn service_token() -> String {
    format!("{}-{}", process_token(), NEXT_SERVICE.fetch_add(1, Ordering::Relaxed))
}

/// Ends the service for good: no job starts after this (`Inner::ended`, set under the
/// jobs' lock that a starting job is inserted under), and every job it has is killed
/// now, synchronously.
pub(super) fn kill_all_jobs_now(inner: &Inner) {
    let jobs: Vec<Arc<Job>> = {
        let jobs = lock(&inner.jobs);
        if inner.ended.swap(true, Ordering::SeqCst) {
            // Ended before (its owner's end, then the process's): every job it will
            // ever have was killed then; no search of the process table again.
            return;
        }
        jobs.values().cloned().collect()
    };
    kill_all_now(&jobs);
    for job in jobs {
        job.close();
    }
    inner.spare_pty.clear();
}

/// The services made by one owner, ended together when it ends: one per Node
/// environment (the binding keeps it as the environment's instance data), so a worker
/// thread's end kills that worker's jobs and nobody else's. It holds its services
/// weakly: a service dropped earlier has already ended its jobs itself.
#[derive(Default)]
pub struct Owner {
    services: Mutex<Vec<Weak<Inner>>>,
}

impl Owner {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub(super) fn adopt(&self, inner: &Arc<Inner>) {
        let mut services = lock(&self.services);
        services.retain(|w| w.strong_count() > 0);
        services.push(Arc::downgrade(inner));
    }

    /// Ends every job of every service of this owner, synchronously, and refuses new
    /// jobs on them: for the owner's end, after which nothing may call back into it.
    pub fn end_all_now(&self) {
        let services: Vec<Arc<Inner>> = std::mem::take(&mut *lock(&self.services))
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        for inner in services {
            kill_all_jobs_now(&inner);
        }
    }
}

/// Synchronous SIGKILL of every job of every service in this process: for the
/// process-exit hook, where nothing asynchronous runs any more.
pub fn kill_everything_now() {
    PROCESS.end_all_now();
}
