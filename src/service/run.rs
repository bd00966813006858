//! `run`: a job started and waited for until its exit, its pattern, its delay or its
//! timeout (the job is then killed), in the forms the front-ends call it — a future on
//! the runtime (`run`, `run_owned`), or started on the caller's thread with the result
//! given to a callback by whichever thread ends the wait (`run_then`).

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::SystemTime;

use super::request::{RunRequest, RunResult, DEFAULT_KILL_GRACE};
use super::results::run_result;
use super::Service;
use crate::base::error::Result;
use crate::job::kill::kill_job;
use crate::job::wait::{WaitOutcome, WaitSpec, WaitStatus};
use crate::job::{Job, JobStatus, WaitTicket};

/// Called with `run`'s result (`Service::run_then`).
pub type OnRunDone = Box<dyn FnOnce(Result<RunResult>) + Send>;

/// `run`'s result once its wait has ended (and its job's folder is made).
fn result_after_wait(job: &Arc<Job>, max_output: usize, outcome: WaitOutcome) -> RunResult {
    // Told it runs, the caller may look in its directory.
    job.write_running_info();
    let mut result = run_result(job, max_output, outcome.matched);
    result.awaiting_input = outcome.status == WaitStatus::AwaitingInput && result.status == JobStatus::Running;
    result
}

/// What `run` waits for: its request's pattern, delay, timeout and input detection.
fn wait_spec(req: &RunRequest, pattern: Option<crate::job::wait::Pattern>) -> WaitSpec {
    WaitSpec {
        pattern,
        delay: req.callback_delay,
        timeout: req.timeout,
        max_output: req.max_output_size,
        detect_input: req.detect_input,
    }
}

/// What `run` has done before its wait (`Service::begin_run`).
enum BegunRun {
    /// The program could not start: the `failed` result.
    Failed(Box<RunResult>),
    Started {
        job: Arc<Job>,
        ticket: WaitTicket,
        pattern: Option<crate::job::wait::Pattern>,
    },
}

impl Service {
    /// Runs a command; resolves at exit, pattern, delay or timeout (the job is killed).
    pub async fn run(&self, req: RunRequest) -> Result<RunResult> {
        self.run_called_at(req, self.inner.shutdowns.load(Ordering::SeqCst))
            .await
    }

    /// `run` as work that owns its service, ordered with `shutdown` by the caller's
    /// calls: a `shutdown` called after this (before the job has even started, on the
    /// runtime) ends this job too.
    pub fn run_owned(self: Arc<Self>, req: RunRequest) -> impl Future<Output = Result<RunResult>> + Send + 'static {
        let called_at = self.inner.shutdowns.load(Ordering::SeqCst);
        async move { self.run_called_at(req, called_at).await }
    }

    async fn run_called_at(&self, req: RunRequest, shutdowns_before: u64) -> Result<RunResult> {
        let begun = self.begin_run(&req, None)?;
        self.finish_run(&req, begun, shutdowns_before).await
    }

    /// `run` with the job started now, on the caller's thread (the binding's JS
    /// thread, as `start` does), its result given to `done` by whichever thread ends
    /// the wait (the job's reader, at the exit or a match), with no task in between,
    /// as `sendInput`'s (`job/waiting.rs`). Two thread hand-overs fewer than a `run`
    /// made on the runtime: none before the program starts, none between the reader
    /// and the caller. A wait that timed out (its job is killed first), or that ended
    /// before the reader made the job's folder, finishes on a task.
    pub fn run_then(self: Arc<Self>, req: RunRequest, done: OnRunDone) {
        self.run_then_reporting(req, None, done);
    }

    /// `run_then`, telling `started` the job's handle as soon as it runs (before the
    /// wait): the daemon's `run`, which must find the job before `run` answers (it ends
    /// a client's `keep: false` runs when the client goes).
    pub fn run_then_reporting(
        self: Arc<Self>,
        req: RunRequest,
        started: Option<Box<dyn FnOnce(u32) + Send>>,
        done: OnRunDone,
    ) {
        let begun = match self.begin_run(&req, started) {
            Ok(begun) => begun,
            Err(e) => return done(Err(e)),
        };
        let (job, ticket, pattern) = match begun {
            BegunRun::Failed(failed) => return done(Ok(*failed)),
            BegunRun::Started { job, ticket, pattern } => (job, ticket, pattern),
        };
        let spec = wait_spec(&req, pattern);
        let max_output = req.max_output_size;
        let runtime = self.inner.runtime.clone();
        let waited = job.clone();
        waited.start_wait(
            ticket,
            spec,
            Box::new(move |outcome| {
                if outcome.status != WaitStatus::TimedOut && job.files_are_ready() {
                    return done(Ok(result_after_wait(&job, max_output, outcome)));
                }
                runtime.spawn(async move {
                    if outcome.status == WaitStatus::TimedOut {
                        kill_job(&job, DEFAULT_KILL_GRACE, JobStatus::TimedOut).await;
                    }
                    job.files_ready().await;
                    done(Ok(result_after_wait(&job, max_output, outcome)));
                });
            }),
        );
    }

    /// `run`'s first half: the checks and the start, telling `started` the handle.
    fn begin_run(&self, req: &RunRequest, started: Option<Box<dyn FnOnce(u32) + Send>>) -> Result<BegunRun> {
        let (pattern, workdir) = self.admit(req)?;
        let sandbox = self.job_sandbox(req)?;
        let handle = self.inner.next_handle.fetch_add(1, Ordering::Relaxed);
        let started_at = SystemTime::now();
        let (job, ticket) = match self.start_job(handle, req, &workdir, pattern.clone(), sandbox) {
            Ok(started) => started,
            Err(error) => {
                return Ok(BegunRun::Failed(Box::new(self.failed_result(
                    handle,
                    req,
                    &workdir.display,
                    started_at,
                    error,
                ))))
            }
        };
        if let Some(started) = started {
            started(handle);
        }
        // The child has entered the directory; its descriptor is not needed while we
        // wait (`workdir` drops here).
        Ok(BegunRun::Started { job, ticket, pattern })
    }

    /// `run`'s second half: the wait, and the result.
    async fn finish_run(&self, req: &RunRequest, begun: BegunRun, shutdowns_before: u64) -> Result<RunResult> {
        let (job, ticket, pattern) = match begun {
            BegunRun::Failed(failed) => return Ok(*failed),
            BegunRun::Started { job, ticket, pattern } => (job, ticket, pattern),
        };
        if self.inner.shutdowns.load(Ordering::SeqCst) != shutdowns_before {
            // A shutdown was called after this run: it may have listed the jobs before
            // this one was added. Ended as that shutdown would have ended it.
            kill_job(&job, DEFAULT_KILL_GRACE, JobStatus::Killed).await;
        }
        let spec = wait_spec(req, pattern);
        let outcome = job.pending(ticket, spec).outcome().await;
        if outcome.status == WaitStatus::TimedOut {
            kill_job(&job, DEFAULT_KILL_GRACE, JobStatus::TimedOut).await;
        }
        // A result names its output directory; a callback can fire before the reader
        // has made it (a zero delay).
        job.files_ready().await;
        Ok(result_after_wait(&job, req.max_output_size, outcome))
    }
}
