//! The service: a registry of jobs behind small-integer handles, with limits,
//! history, persistence settings and shutdown.
//!
//! By concern: `admission` checks settings and requests, `launch` starts a job (one
//! path for PTY and pipes), `interaction` writes input and waits, `registry` keeps
//! every live service for the exit hook, `run` starts a job and waits for its result.
//! The queries and the ending of jobs are here.

mod admission;
#[cfg(target_os = "linux")]
pub mod carry;
mod folder_removal;
pub mod history;
mod interaction;
mod launch;
pub mod options;
mod registry;
pub mod request;
pub mod results;
mod retention;
mod run;
mod sandbox;
mod spare_pool;

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tokio::runtime::Handle;

use crate::base::deadlines::DeadlineTimer;

use crate::base::error::{ErrorCode, Result, ServiceError};
use crate::base::sync::lock;
use crate::job::events::{Notify, Subscription};
use crate::job::kill::{jobs_with_processes, kill_job, kill_job_noted, KillReport};
use crate::job::spawn::env;
use crate::job::{Job, JobStatus};
use crate::output::cells::ScreenCells;
use crate::output::persist::DEFAULT_DISK_CAP_BYTES;
use crate::output::read::{OutputChunk, DEFAULT_READ_BYTES, MAX_READ_BYTES};
use crate::output::retention::DEFAULT_KEEP_JOB_DIRS;
use crate::output::View;
use crate::platform::{detached_roots, job_processes};
use crate::service::history::{History, HistoryEntry, DEFAULT_HISTORY_LIMIT};
use crate::service::request::*;
use crate::service::results::{process_info, run_result};

use admission::{default_io_dir, valid_session_id, validate_size};
pub use interaction::{OnInputDone, OnInteractionDone, PreparedInput, PreparedWait};
pub use registry::{
    kill_everything_now, next_service_number, process_token, random_hex, resume_process_token, resume_service_numbers,
    Owner,
};
pub use run::OnRunDone;

use crate::base::limits::MAX_SESSION_ID_LEN;
pub use crate::base::limits::{
    MAX_COMMAND_BYTES, MAX_GRACE, MAX_INPUT_BYTES, MAX_KILL_REASON_BYTES, MAX_TERMINAL_SIZE,
};

/// A job as [`Service::pids`] gives it.
#[derive(Clone, Copy, Debug)]
pub struct JobPid {
    pub handle: u32,
    pub pid: u32,
    pub running: bool,
    pub pty: bool,
}

/// A running job as [`Service::running`] gives it: what it was started as.
#[derive(Clone, Debug)]
pub struct RunningJob {
    pub handle: u32,
    pub pid: u32,
    pub command: String,
    /// Its working directory, absolute (the core reports it relative to the project
    /// root elsewhere: `ProcessInfo::directory`).
    pub directory: PathBuf,
}

pub struct Service {
    inner: Arc<Inner>,
}

struct Inner {
    root: PathBuf,
    /// `root`'s device and inode when the service was made: a job in the root is
    /// checked by them (`directory::resolve`).
    root_id: Option<crate::job::spawn::directory::RootIdentity>,
    io_dir: PathBuf,
    session_id: String,
    env: Vec<(String, String)>,
    inherited_env: Option<Vec<(String, String)>>,
    max_jobs: usize,
    /// Finished jobs kept with their output in memory (the newest); older ones are
    /// forgotten as `removeProcess` forgets them.
    keep_finished: usize,
    /// `ServiceConfig::keep_streams`.
    keep_streams: bool,
    disk_cap: u64,
    /// Every job's sandbox unless a run says otherwise.
    sandbox: Option<Arc<crate::sandbox::Resolved>>,
    /// The default sandbox for runs that ask for one (`sandbox: true`) of a service
    /// without its own, resolved at the first such run.
    default_sandbox: Mutex<Option<Arc<crate::sandbox::Resolved>>>,
    /// The project root, held open from the service's making (a sandboxed service) or
    /// its first sandboxed run: every sandbox's rules are built from it
    /// (`crate::sandbox::Anchor`). A service that never sandboxes holds nothing.
    root_dir: std::sync::OnceLock<Arc<crate::sandbox::Anchor>>,
    /// The directories `io_dir` is reached through (`None`: no files kept): no
    /// sandbox may make them writable (`sandbox::Guarded`).
    /// Found at the first sandbox's making, when the service keeps files.
    io_reached: std::sync::OnceLock<std::result::Result<Vec<crate::sandbox::FileId>, String>>,
    /// The project's git hooks and configuration, put back after sandboxed jobs that
    /// may write the project (`platform::GitGuard`).
    git_guard: Arc<crate::platform::GitGuard>,
    /// `<process token>-<service number>`: tells this service's jobs from any other's.
    token: String,
    jobs: Mutex<BTreeMap<u32, Arc<Job>>>,
    /// Set (under `jobs`' lock) when the service has ended for good: its owner ended or
    /// it was dropped. A job that starts after that is killed at once (see `start_job`).
    ended: AtomicBool,
    /// Set (under `jobs`' lock) while a restart in place carries the jobs (carry.rs):
    /// a job that starts meanwhile is ended at once, as it would not be carried.
    frozen: AtomicBool,
    /// How many times `shutdown` has been called: a run that sees it change between its
    /// call and its job's start ends the job (see `run_owned`).
    shutdowns: AtomicU64,
    /// The next PTY job's terminal, opened while the last one's program started.
    spare_pty: crate::platform::SparePty,
    next_handle: AtomicU32,
    history: Arc<Mutex<History>>,
    /// The deadlines of every wait of this service's jobs.
    timer: DeadlineTimer,
    /// Its lease on its session's folder and its finished job folders (`persist` only).
    retention: Option<Arc<retention::Retention>>,
    runtime: Handle,
}

/// A service's sandboxes carried by a restart in place (carry.rs), built from their
/// inherited descriptors: its own and the default one of its `sandbox: true` runs.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct Sandboxes {
    own: Option<crate::sandbox::Resolved>,
    default: Option<crate::sandbox::Resolved>,
}

impl Service {
    pub fn new(config: ServiceConfig, runtime: Handle) -> Result<Self> {
        Self::made(config, runtime, None)
    }

    /// `new`, with the token of a service carried by a restart in place (carry.rs):
    /// its jobs carry that token in their marker.
    fn made(config: ServiceConfig, runtime: Handle, carried: Option<(String, Sandboxes)>) -> Result<Self> {
        let (token, carried_sandboxes) = match carried {
            Some((token, sandboxes)) => (Some(token), Some(sandboxes)),
            None => (None, None),
        };
        let root = match config.project_root {
            Some(root) => root,
            None => std::env::current_dir()
                .map_err(|e| ServiceError::new(ErrorCode::InvalidDirectory, format!("no current directory: {e}")))?,
        };
        let root = root.canonicalize().map_err(|e| {
            ServiceError::new(
                ErrorCode::InvalidDirectory,
                format!("project root {} cannot be used: {e}", root.display()),
            )
        })?;
        if !root.is_dir() {
            return Err(ServiceError::new(
                ErrorCode::InvalidDirectory,
                format!("project root {} is not a directory", root.display()),
            ));
        }
        let session_id = config.session_id.unwrap_or_else(|| random_hex(8));
        if !valid_session_id(&session_id) {
            return Err(ServiceError::invalid(format!(
                "sessionId {session_id:?} must be 1 to {MAX_SESSION_ID_LEN} characters of A-Z, a-z, 0-9, _ and -"
            )));
        }
        env::validate_pairs(&config.env)?;
        if let Some(inherited) = &config.inherited_env {
            env::validate_pairs(inherited)?;
        }
        let max_jobs = config.max_jobs.unwrap_or(DEFAULT_MAX_JOBS);
        if max_jobs == 0 {
            return Err(ServiceError::invalid("maxJobs must be at least 1"));
        }
        let io_dir = config.io_dir.unwrap_or_else(default_io_dir);
        if io_dir.as_os_str().is_empty() || io_dir.to_string_lossy().contains('\0') {
            return Err(ServiceError::invalid(
                "ioDir must be a non-empty path without NUL bytes",
            ));
        }
        let persist = config.persist_output.unwrap_or(true);
        let root_dir = std::sync::OnceLock::new();
        let io_reached = std::sync::OnceLock::new();
        let (carried_own, carried_default) = match carried_sandboxes {
            Some(sandboxes) => (sandboxes.own, sandboxes.default),
            None => (None, None),
        };
        if let Some(own) = &carried_own {
            // The project root its rules were built from, as carried.
            let _ = root_dir.set(own.root.clone());
        } else if let Some(default) = &carried_default {
            let _ = root_dir.set(default.root.clone());
        }
        let sandbox = match (&config.sandbox, carried_own) {
            // Carried by a restart in place: built from the descriptors the previous
            // image held, not from the spec's names (src/sandbox/resolved_carry.rs).
            (Some(_), Some(own)) => {
                sandbox::supported()?;
                Some(Arc::new(own))
            }
            (Some(spec), None) => {
                // Refused at once on a platform without one, not at the first job.
                sandbox::supported()?;
                let guarded = sandbox::Guarded {
                    root: &root,
                    root_dir: &root_dir,
                    io_dir: &io_dir,
                    keeps_files: persist,
                    io_reached: &io_reached,
                    service: None,
                };
                Some(Arc::new(guarded.resolve(spec)?))
            }
            (None, _) => None,
        };
        let token = token.unwrap_or_else(registry::service_token);
        let keep = config.keep_job_dirs.unwrap_or(DEFAULT_KEEP_JOB_DIRS);
        let retention =
            persist.then(|| retention::Retention::start(&io_dir, &session_id, &token, keep, runtime.clone()));
        let inner = Arc::new(Inner {
            git_guard: crate::platform::GitGuard::new(&root),
            root_id: crate::job::spawn::directory::RootIdentity::of(&root),
            root,
            io_dir,
            session_id,
            env: config.env,
            inherited_env: config.inherited_env,
            max_jobs,
            keep_finished: config.keep_finished_jobs.unwrap_or(DEFAULT_KEEP_FINISHED_JOBS),
            keep_streams: config.keep_streams,
            disk_cap: config.disk_cap_bytes.unwrap_or(DEFAULT_DISK_CAP_BYTES),
            sandbox,
            default_sandbox: Mutex::new(carried_default.map(Arc::new)),
            root_dir,
            io_reached,
            token,
            jobs: Mutex::new(BTreeMap::new()),
            ended: AtomicBool::new(false),
            frozen: AtomicBool::new(false),
            shutdowns: AtomicU64::new(0),
            spare_pty: Default::default(),
            next_handle: AtomicU32::new(1),
            history: Arc::new(Mutex::new(History::new(
                config.history_limit.unwrap_or(DEFAULT_HISTORY_LIMIT),
            ))),
            timer: DeadlineTimer::start(&runtime),
            retention,
            runtime,
        });
        registry::register(&inner);
        Ok(Self { inner })
    }

    /// Puts the service in `owner`'s care: it ends with the owner's other services.
    pub fn join(&self, owner: &Owner) {
        owner.adopt(&self.inner);
    }

    /// Runs `work` on the service's runtime: for callers (the binding) whose futures
    /// must own what they use rather than borrow a caller's object.
    pub fn spawn(&self, work: impl std::future::Future<Output = ()> + Send + 'static) {
        self.inner.runtime.spawn(work);
    }

    /// Ends a prepared `send_input` by calling `done` with its result (see
    /// `PreparedInput::finish_with`).
    pub fn finish_input(&self, prepared: PreparedInput, done: OnInputDone) {
        prepared.finish_with(&self.inner.runtime, done);
    }

    pub fn session_id(&self) -> &str {
        &self.inner.session_id
    }

    pub fn project_root(&self) -> &Path {
        &self.inner.root
    }

    /// What will hold the next job's processes together (found once per process).
    pub fn containment(&self) -> crate::platform::ContainmentMode {
        crate::platform::containment_mode()
    }

    pub fn session_dir(&self) -> PathBuf {
        self.inner.io_dir.join(&self.inner.session_id)
    }

    fn job(&self, handle: u32) -> Result<Arc<Job>> {
        lock(&self.inner.jobs)
            .get(&handle)
            .cloned()
            .ok_or_else(|| ServiceError::not_found(handle))
    }

    /// Starts a job and returns at once with its handle and pid; nothing is awaited.
    /// Callers that need the handle before any waiting (to cancel, to report a pid)
    /// start, then `wait_for(.., from_start: true)`. A program that cannot be started
    /// is `SPAWN_FAILED` here (and a `failed` entry in the history); [`Self::launch`]
    /// answers it with the `failed` result instead.
    pub fn start(&self, req: RunRequest) -> Result<(u32, u32)> {
        match self.launch(req)? {
            Launched::Running { handle, pid } => Ok((handle, pid)),
            Launched::Failed(failed) => Err(ServiceError::new(
                ErrorCode::SpawnFailed,
                failed.error.unwrap_or_default(),
            )),
        }
    }

    /// `start`, with a program that cannot be started answered as `run` answers it:
    /// the `failed` result (its handle is the one its history entry has). With
    /// `req.timeout`, a job still running that long after its start is killed as
    /// `run` kills it (status `timed_out`), whether or not anyone waits on it.
    pub fn launch(&self, req: RunRequest) -> Result<Launched> {
        let (_, workdir) = self.admit(&req)?;
        let sandbox = self.job_sandbox(&req)?;
        let handle = self.inner.next_handle.fetch_add(1, Ordering::Relaxed);
        let started_at = SystemTime::now();
        match self.start_job(handle, &req, &workdir, None, sandbox) {
            Ok((job, ticket)) => {
                job.unregister(ticket);
                if let Some(timeout) = req.timeout {
                    self.inner.runtime.spawn(kill_at_deadline(job.clone(), timeout));
                }
                Ok(Launched::Running {
                    handle,
                    pid: job.meta.pid,
                })
            }
            Err(error) => Ok(Launched::Failed(Box::new(self.failed_result(
                handle,
                &req,
                &workdir.display,
                started_at,
                error,
            )))),
        }
    }

    /// The job's `RunResult` as of now (what `run` would have returned at this
    /// moment): for callers that `start` a job and wait with `wait_for`.
    pub fn result(&self, handle: u32, max_output: usize) -> Result<RunResult> {
        if max_output == 0 {
            return Err(ServiceError::invalid("maxOutputSize must be at least 1"));
        }
        Ok(run_result(&self.job(handle)?, max_output, None))
    }

    pub fn is_active(&self, handle: u32) -> bool {
        self.job(handle).map(|j| j.is_running()).unwrap_or(false)
    }

    pub fn list(&self) -> Vec<ProcessInfo> {
        let jobs: Vec<Arc<Job>> = lock(&self.inner.jobs).values().cloned().collect();
        // Found only now, when asked: an idle job is never looked at on a timer.
        jobs.iter().map(|job| process_info(job, detached_pids(job))).collect()
    }

    /// Every job's handle and whether it runs, cheaply (no process table read): for a
    /// front-end that hosts many services (the daemon's idle check).
    pub fn handles(&self) -> Vec<(u32, bool)> {
        lock(&self.inner.jobs)
            .iter()
            .map(|(&h, job)| (h, job.is_running()))
            .collect()
    }

    /// Every job's handle, process id, whether it runs and whether it has a terminal,
    /// cheaply (no process table read): for a front-end that names jobs by pid (the
    /// daemon's envd face).
    pub fn pids(&self) -> Vec<JobPid> {
        lock(&self.inner.jobs)
            .iter()
            .map(|(&handle, job)| JobPid {
                handle,
                pid: job.meta.pid,
                running: job.is_running(),
                pty: job.meta.mode == crate::job::spawn::Mode::Pty,
            })
            .collect()
    }

    /// Every running job's handle, process id, command and directory, cheaply (no
    /// process table read, no output looked at, unlike `list`): for a front-end that
    /// lists many running jobs often (the daemon's envd face).
    pub fn running(&self) -> Vec<RunningJob> {
        lock(&self.inner.jobs)
            .iter()
            .filter(|(_, job)| job.is_running())
            .map(|(&handle, job)| RunningJob {
                handle,
                pid: job.meta.pid,
                command: job.meta.command.clone(),
                // "." is the root itself; anything else is below it, or absolute.
                directory: match job.meta.directory.as_str() {
                    "." => self.inner.root.clone(),
                    relative => self.inner.root.join(relative),
                },
            })
            .collect()
    }

    pub fn output(&self, handle: u32, view: View, tail_bytes: Option<usize>) -> Result<String> {
        Ok(self.job(handle)?.view(view, tail_bytes))
    }

    /// Committed text from byte `since` (see `output::read`); `max_bytes` defaults to
    /// [`DEFAULT_READ_BYTES`] and is clamped to [`MAX_READ_BYTES`].
    pub fn read_output(&self, handle: u32, since: u64, max_bytes: Option<usize>) -> Result<OutputChunk> {
        let max = max_bytes.unwrap_or(DEFAULT_READ_BYTES);
        if max == 0 {
            return Err(ServiceError::invalid("maxBytes must be at least 1"));
        }
        let job = self.job(handle)?;
        job.read_output(since, max.min(MAX_READ_BYTES))
    }

    /// Up to `max` bytes as written, with their streams, from offset `since` (all
    /// streams counted): for front-ends that stream a job's output on (the daemon's
    /// envd face). Bytes no longer kept are skipped and counted (`RawRead::omitted`).
    pub fn read_raw(&self, handle: u32, since: u64, max: usize) -> Result<crate::output::raw_stream::RawRead> {
        Ok(self.job(handle)?.read_raw(since, max))
    }

    /// The offset `read_raw` reaches now (every byte the job wrote, all streams): where
    /// a reader that wants only what comes next starts.
    pub fn raw_total(&self, handle: u32) -> Result<u64> {
        Ok(self.job(handle)?.raw_total())
    }

    /// The emulated terminal as cells, with up to `scrollback` lines above the screen
    /// (as many as the job keeps: `RunRequest::scrollback`). Pipes jobs have no screen.
    pub fn screen(&self, handle: u32, scrollback: usize) -> Result<ScreenCells> {
        let job = self.job(handle)?;
        // Read outside the job's lock: emulating what is queued and walking the cells
        // takes milliseconds that would hold every other caller of the job.
        let screen = job.state().output.screen();
        let screen = screen
            .ok_or_else(|| ServiceError::invalid(format!("job {handle} runs in pipes mode: it has no screen")))?;
        Ok(screen.cells(scrollback))
    }

    /// Calls `notify` (coalesced) when the job has new output and once at its exit;
    /// the listener then takes the event from the returned subscription.
    pub fn subscribe(&self, handle: u32, notify: Notify) -> Result<Arc<Subscription>> {
        Ok(Subscription::attach(&self.job(handle)?, notify))
    }

    pub fn resize(&self, handle: u32, cols: u16, rows: u16) -> Result<()> {
        let job = self.job(handle)?;
        validate_size(cols, rows, job.state().output.scrollback())?;
        if !job.is_running() {
            return Ok(());
        }
        job.resize(cols, rows)
            .map_err(|e| ServiceError::invalid(format!("resize failed: {e}")))
    }

    pub async fn kill(&self, handle: u32, grace: Duration) -> Result<KillReport> {
        self.kill_noted(handle, grace, None).await
    }

    /// `kill`, saying what it is for: `reason` is kept with the job (its `kill_reason`)
    /// when this kill is the one that ends it, for whoever asks about the job later.
    pub async fn kill_noted(&self, handle: u32, grace: Duration, reason: Option<String>) -> Result<KillReport> {
        if grace > MAX_GRACE {
            return Err(ServiceError::invalid(format!(
                "graceMs may be at most {}",
                MAX_GRACE.as_millis()
            )));
        }
        if reason.as_ref().is_some_and(|r| r.len() > MAX_KILL_REASON_BYTES) {
            return Err(ServiceError::invalid(format!(
                "reason may be at most {MAX_KILL_REASON_BYTES} bytes"
            )));
        }
        let job = self.job(handle)?;
        Ok(kill_job_noted(&job, grace, reason).await)
    }

    /// Ends the job's processes with SIGKILL at once (no SIGTERM first): the whole tree,
    /// as `kill`.
    pub async fn kill_now(&self, handle: u32) -> Result<KillReport> {
        let job = self.job(handle)?;
        Ok(crate::job::kill::kill_job_now(&job).await)
    }

    /// Forgets a job; a running one, or one whose background processes live on, is
    /// killed first (in the background). A job that ended and left nothing running
    /// (its output closed at the exit, its process group empty) is not searched for
    /// again: that search reads all of /proc. `kill` on such a job still searches.
    pub fn remove(&self, handle: u32) -> Result<()> {
        let job = lock(&self.inner.jobs)
            .remove(&handle)
            .ok_or_else(|| ServiceError::not_found(handle))?;
        if job.left_nothing_running() {
            job.close();
            return Ok(());
        }
        self.inner.runtime.spawn(async move {
            kill_job(&job, DEFAULT_KILL_GRACE, JobStatus::Killed).await;
        });
        Ok(())
    }

    /// Spare job folders ready to be the next jobs' (`output::spare_dir`): for tests and
    /// diagnostics.
    pub fn spare_job_dirs(&self) -> usize {
        self.inner.retention.as_ref().map_or(0, |r| r.spares_ready())
    }

    pub fn history(&self, limit: Option<usize>) -> Vec<HistoryEntry> {
        lock(&self.inner.history).list(limit)
    }

    pub fn clear_history(&self) -> usize {
        lock(&self.inner.history).clear()
    }

    /// Kills every job (and what it started) and waits for them, as work that owns its
    /// service; the runs called before it are ended even if their jobs start after this
    /// call (see `run_owned`).
    pub fn shutdown_owned(self: Arc<Self>) -> impl Future<Output = ()> + Send + 'static {
        self.inner.shutdowns.fetch_add(1, Ordering::SeqCst);
        async move { self.shutdown_jobs().await }
    }

    async fn shutdown_jobs(&self) {
        let jobs: Vec<Arc<Job>> = lock(&self.inner.jobs).values().cloned().collect();
        // One search of /proc tells which jobs have anything left to kill; each of
        // those is then killed with its grace period (finished jobs stay as they are).
        let all = jobs.clone();
        let to_kill = tokio::task::spawn_blocking(move || jobs_with_processes(all))
            .await
            .unwrap_or(jobs);
        let mut set = tokio::task::JoinSet::new();
        for job in to_kill {
            set.spawn_on(
                async move { kill_job(&job, DEFAULT_KILL_GRACE, JobStatus::Killed).await },
                &self.inner.runtime,
            );
        }
        while set.join_next().await.is_some() {}
        if let Some(retention) = &self.inner.retention {
            retention.release();
        }
        // A service shut down holds no terminal (the next PTY job opens one again).
        self.inner.spare_pty.clear();
    }
}

/// The roots of what a running job started that detached from it; empty for an ended
/// job (its `background_pids` say what it left). Reads the job's cgroup where it has
/// one (tens of µs), else searches the process table (milliseconds).
fn detached_pids(job: &Arc<Job>) -> Option<Vec<u32>> {
    if !job.is_running() {
        return None;
    }
    let procs = job_processes(&job.meta.identity());
    Some(detached_roots(&procs, job.meta.pid as i32))
}

/// Kills the job as `run`'s timeout does (status `timed_out`) unless it ends first.
async fn kill_at_deadline(job: Arc<Job>, timeout: Duration) {
    if tokio::time::timeout(timeout, job.wait_finished()).await.is_err() {
        kill_job(&job, DEFAULT_KILL_GRACE, JobStatus::TimedOut).await;
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        // A service dropped without shutdown still leaves no process behind.
        registry::kill_all_jobs_now(&self.inner);
    }
}
