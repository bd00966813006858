//! Ending a job and everything it started: asked to end (SIGTERM to the group and to
//! every process the platform finds), a grace period, then ended for good (SIGKILL, or
//! the Job Object terminated on Windows) for whatever is left.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::job::{Job, JobStatus};
use crate::platform::{end_processes, is_alive, job_processes, Ending, ProcInfo, Snapshot};

/// How long to wait for the job to be reaped after SIGKILL before reporting anyway.
const REAP_TIMEOUT: Duration = Duration::from_secs(5);
/// Liveness is re-checked at this interval during the grace period only; it is the
/// one bounded poll in the crate (the kernel has no "group emptied" event).
const GRACE_CHECK: Duration = Duration::from_millis(5);
/// How long the processes sent SIGKILL get to be gone before those left are reported
/// as survivors (the signal is delivered asynchronously; the same poll as the grace).
const DEATH_TIMEOUT: Duration = Duration::from_secs(1);

#[derive(Clone, Debug)]
pub struct KillReport {
    pub status: JobStatus,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// SIGKILL was needed.
    pub escalated: bool,
    /// The pids of the job's processes still alive after the kill (found by the last
    /// search, sent SIGKILL, and still there [`DEATH_TIMEOUT`] later); empty when
    /// everything ended.
    pub survivors: Vec<u32>,
}

async fn scan(job: &Arc<Job>) -> Vec<ProcInfo> {
    let job = job.clone();
    tokio::task::spawn_blocking(move || job_processes(&job.meta.identity()))
        .await
        .unwrap_or_default()
}

pub async fn kill_job(job: &Arc<Job>, grace: Duration, reason: JobStatus) -> KillReport {
    end_job(job, grace, reason, None, Ending::Politely).await
}

/// `kill_job` for a caller that says what the kill is for (`note`, kept as the job's
/// `kill_note` when this kill is the one that ends it).
pub async fn kill_job_noted(job: &Arc<Job>, grace: Duration, note: Option<String>) -> KillReport {
    end_job(job, grace, JobStatus::Killed, note, Ending::Politely).await
}

/// `kill_job` with SIGKILL from the start, no SIGTERM first: for a caller that asked
/// for SIGKILL itself (envd's `SendSignal`), whose processes must die of it.
pub async fn kill_job_now(job: &Arc<Job>) -> KillReport {
    end_job(job, Duration::ZERO, JobStatus::Killed, None, Ending::Now).await
}

async fn end_job(
    job: &Arc<Job>,
    grace: Duration,
    reason: JobStatus,
    note: Option<String>,
    first: Ending,
) -> KillReport {
    let was_running = {
        let mut state = job.state();
        let running = state.status == JobStatus::Running;
        // Only the kill that ends a running job names why: a later one (of a job already
        // ended, or being ended) must not rewrite the cause of an end it did not make.
        if running && state.kill_reason.is_none() {
            state.kill_reason = Some(reason);
            state.kill_note = note;
        }
        running
    };
    // SIGKILL at once to the group, before the input is dropped: dropping it ends the
    // writer and closes a pipes job's stdin, and a program reading it (`while read`) would
    // otherwise end on its own ("exit status 0") in the time the process scan takes.
    if was_running && matches!(first, Ending::Now) {
        end_processes(&job.meta.identity(), &[], Ending::Now);
    }
    // Input still queued would only keep the writer feeding a dying terminal.
    job.drop_input();
    let procs = scan(job).await;
    let mut escalated = false;
    let mut survivors = Vec::new();
    if was_running || !procs.is_empty() {
        end_processes(&job.meta.identity(), &procs, first);
        let deadline = Instant::now() + grace;
        let all_gone = || !job.is_running() && procs.iter().all(|p| !is_alive(p.pid));
        while !all_gone() && Instant::now() < deadline {
            tokio::time::sleep(GRACE_CHECK.min(deadline.saturating_duration_since(Instant::now()))).await;
        }
        // Look again: a dying process may have started others.
        let left = scan(job).await;
        if !left.is_empty() || job.is_running() {
            escalated = true;
            end_processes(&job.meta.identity(), &left, Ending::Now);
        }
        let _ = tokio::time::timeout(REAP_TIMEOUT, job.wait_finished()).await;
        survivors = still_alive(&left).await;
    }
    job.close();
    let state = job.state();
    KillReport {
        status: state.status,
        exit_code: state.exit_code,
        signal: state.signal,
        escalated,
        survivors,
    }
}

/// Of the processes sent SIGKILL, the pids of those still alive once they have had
/// [`DEATH_TIMEOUT`] to go.
async fn still_alive(killed: &[ProcInfo]) -> Vec<u32> {
    let deadline = Instant::now() + DEATH_TIMEOUT;
    loop {
        let alive: Vec<u32> = killed
            .iter()
            .filter(|p| is_alive(p.pid))
            .filter_map(|p| u32::try_from(p.pid).ok())
            .collect();
        if alive.is_empty() || Instant::now() >= deadline {
            return alive;
        }
        tokio::time::sleep(GRACE_CHECK).await;
    }
}

/// Synchronous last-resort kill for process exit: SIGKILL to the group and to every
/// process found, with no grace and no waiting.
pub fn kill_now(job: &Arc<Job>) {
    kill_all_now(std::slice::from_ref(job));
}

/// The same for many jobs at once (the exit hook, a dropped service), sharing one read
/// of the process table, so exiting with a thousand finished jobs costs no more than with none.
pub fn kill_all_now(jobs: &[Arc<Job>]) {
    let Some(snapshot) = snapshot_for(jobs) else { return };
    for job in jobs {
        let identity = job.meta.identity();
        end_processes(&identity, &snapshot.members(&identity), Ending::Now);
    }
}

/// Of these jobs, the ones with something left to kill: still running, or with live
/// processes (background ones, daemons that left the group) after their exit.
pub fn jobs_with_processes(jobs: Vec<Arc<Job>>) -> Vec<Arc<Job>> {
    let Some(snapshot) = snapshot_for(&jobs) else {
        return jobs;
    };
    jobs.into_iter()
        .filter(|job| job.is_running() || !snapshot.members(&job.meta.identity()).is_empty())
        .collect()
}

/// One read of the process table covering every process these jobs can have started.
fn snapshot_for(jobs: &[Arc<Job>]) -> Option<Snapshot> {
    jobs.iter().map(|job| job.meta.start_ticks).min().map(Snapshot::take)
}
