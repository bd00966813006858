//! The service: a registry of jobs behind small-integer handles, with limits,
//! history, persistence settings and shutdown.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, SystemTime};

use tokio::runtime::Handle;
use tokio::sync::mpsc;

use crate::driver;
use crate::error::{ErrorCode, Result, ServiceError};
use crate::events::{Notify, Subscription};
use crate::history::{preview, History, HistoryEntry, DEFAULT_HISTORY_LIMIT, OUTPUT_PREVIEW_BYTES};
use crate::job::{Input, Job, JobMeta, JobState, JobStatus, WaitTicket};
use crate::keys::{parse_key, Key};
use crate::kill::{jobs_with_processes, kill_all_now, kill_job, kill_now, KillReport};
use crate::output::cells::ScreenCells;
use crate::output::persist::{self, unix_millis, JobFiles, DEFAULT_DISK_CAP_BYTES, DEFAULT_KEEP_JOB_DIRS};
use crate::output::read::{OutputChunk, DEFAULT_READ_BYTES, MAX_READ_BYTES};
use crate::output::screen::ScreenSize;
use crate::output::{JobOutput, OutputLimits, View, Which};
use crate::platform::{self, watchdog, ProcessIo};
use crate::request::*;
use crate::results::{finished_interaction, history_entry, interaction, process_info, run_result};
use crate::spawn::{command, directory, env, Mode, SpawnSpec};
use crate::wait::{compile_pattern, WaitSpec, WaitStatus};

use crate::limits::MAX_SESSION_ID_LEN;
pub use crate::limits::{MAX_COMMAND_BYTES, MAX_GRACE, MAX_INPUT_BYTES, MAX_TERMINAL_SIZE};

pub struct Service {
    inner: Arc<Inner>,
}

struct Inner {
    root: PathBuf,
    io_dir: PathBuf,
    session_id: String,
    env: Vec<(String, String)>,
    max_jobs: usize,
    persist: bool,
    disk_cap: u64,
    /// `<process token>-<service number>`: tells this service's jobs from any other's.
    token: String,
    jobs: Mutex<BTreeMap<u32, Arc<Job>>>,
    next_handle: AtomicU32,
    history: Arc<Mutex<History>>,
    runtime: Handle,
}

/// `send_input` after its synchronous checks: awaits its turn on the job, writes,
/// then waits. When the job's turn is free at once (the usual case), the waiter is
/// registered and the input written during `prepare_input`, on the caller's thread:
/// the program sees its input without waiting for a runtime thread to wake.
pub struct PreparedInput {
    job: Arc<Job>,
    writes: Vec<Input>,
    spec: WaitSpec,
    /// The turn taken and the input written already; the wait's registered waiter.
    started: Option<(tokio::sync::OwnedMutexGuard<()>, WaitTicket)>,
}

impl PreparedInput {
    /// Takes the job's turn now if it is free, registers the wait and writes.
    fn start_now(&mut self) {
        let pty = self.job.meta.mode == Mode::Pty;
        if !pty || !self.job.is_running() {
            return;
        }
        let Ok(turn) = self.job.interaction.clone().try_lock_owned() else {
            return;
        };
        let ticket = self.job.register_waiter(self.spec.pattern.clone());
        for input in std::mem::take(&mut self.writes) {
            match input {
                Input::Data(data) => self.job.write_now(data),
                Input::Close => {
                    self.job.send_input(Input::Close);
                }
            }
        }
        self.started = Some((turn, ticket));
    }

    pub async fn finish(mut self) -> InteractionResult {
        if let Some((_turn, ticket)) = self.started.take() {
            let outcome = self.job.pending(ticket, std::mem::take(&mut self.spec)).outcome().await;
            return interaction(&self.job, outcome);
        }
        let job = self.job.clone();
        let _turn = job.interaction.lock().await;
        if !job.is_running() {
            return finished_interaction(&job, self.spec.max_output);
        }
        let pending = job.begin_wait(std::mem::take(&mut self.spec));
        for input in std::mem::take(&mut self.writes) {
            job.send_input(input);
        }
        let outcome = pending.outcome().await;
        interaction(&job, outcome)
    }
}

impl Drop for PreparedInput {
    fn drop(&mut self) {
        // Started but never awaited: the waiter must not stay registered.
        if let Some((_turn, ticket)) = self.started.take() {
            self.job.unregister(ticket);
        }
    }
}

/// `wait_for` with its waiter registered; dropping it unregisters the waiter.
pub struct PreparedWait {
    job: Arc<Job>,
    ticket: Option<WaitTicket>,
    spec: WaitSpec,
    /// The answer, known already (the job had finished).
    early: Option<InteractionResult>,
}

impl PreparedWait {
    pub async fn finish(mut self) -> InteractionResult {
        if let Some(early) = self.early.take() {
            return early;
        }
        let Some(ticket) = self.ticket.take() else {
            return finished_interaction(&self.job, self.spec.max_output);
        };
        let outcome = self.job.pending(ticket, std::mem::take(&mut self.spec)).outcome().await;
        interaction(&self.job, outcome)
    }
}

impl Drop for PreparedWait {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            self.job.unregister(ticket);
        }
    }
}

/// Every live service in this process, for the synchronous kill at process exit.
static SERVICES: Mutex<Vec<Weak<Inner>>> = Mutex::new(Vec::new());
static NEXT_SERVICE: AtomicU64 = AtomicU64::new(1);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A random token for this process (its jobs' owner marker).
pub fn process_token() -> &'static str {
    static TOKEN: OnceLock<String> = OnceLock::new();
    TOKEN.get_or_init(|| random_hex(8))
}

pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    let filled = std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut buf));
    if filled.is_err() {
        // No /dev/urandom (a chroot?): time and pid still separate concurrent services.
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

fn valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_SESSION_ID_LEN
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn default_io_dir() -> PathBuf {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    home.join(".gemini").join("io")
}

fn owner_entry() -> String {
    format!("{}={}", env::OWNER_MARKER, process_token())
}

impl Service {
    /// Creates a service whose jobs run on `runtime`.
    pub fn new(config: ServiceConfig, runtime: Handle) -> Result<Self> {
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
        if persist {
            let dir = io_dir.clone();
            // Retention is housekeeping: off the caller's thread, and its failure is harmless.
            runtime.spawn_blocking(move || persist::prune_job_dirs(&dir, DEFAULT_KEEP_JOB_DIRS));
        }
        let token = format!("{}-{}", process_token(), NEXT_SERVICE.fetch_add(1, Ordering::Relaxed));
        let inner = Arc::new(Inner {
            root,
            io_dir,
            session_id,
            env: config.env,
            max_jobs,
            persist,
            disk_cap: config.disk_cap_bytes.unwrap_or(DEFAULT_DISK_CAP_BYTES),
            token,
            jobs: Mutex::new(BTreeMap::new()),
            next_handle: AtomicU32::new(1),
            history: Arc::new(Mutex::new(History::new(
                config.history_limit.unwrap_or(DEFAULT_HISTORY_LIMIT),
            ))),
            runtime,
        });
        let mut services = lock(&SERVICES);
        services.retain(|w| w.strong_count() > 0);
        services.push(Arc::downgrade(&inner));
        Ok(Self { inner })
    }

    pub fn session_id(&self) -> &str {
        &self.inner.session_id
    }

    pub fn project_root(&self) -> &Path {
        &self.inner.root
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

    /// Runs a command; resolves at exit, pattern, delay or timeout (the job is killed).
    pub async fn run(&self, req: RunRequest) -> Result<RunResult> {
        let (pattern, workdir) = self.admit(&req)?;
        let handle = self.inner.next_handle.fetch_add(1, Ordering::Relaxed);
        let started_at = SystemTime::now();
        let (job, ticket) = match self.start_job(handle, &req, &workdir, pattern.clone()) {
            Ok(started) => started,
            Err(error) => return Ok(self.failed_result(handle, &req, &workdir.display, started_at, error)),
        };
        // The child has entered the directory; its descriptor is not needed while we wait.
        drop(workdir);
        let spec = WaitSpec {
            pattern,
            delay: req.callback_delay,
            timeout: req.timeout,
            max_output: req.max_output_size,
            detect_input: req.detect_input,
        };
        let outcome = job.pending(ticket, spec).outcome().await;
        if outcome.status == WaitStatus::TimedOut {
            kill_job(&job, DEFAULT_KILL_GRACE, JobStatus::TimedOut).await;
        }
        // A result names its output directory; a callback can fire before the reader
        // has made it (a zero delay).
        job.files_ready().await;
        // Told it runs, the caller may look in its directory.
        job.write_running_info();
        let mut result = run_result(&job, req.max_output_size, outcome.matched);
        result.awaiting_input = outcome.status == WaitStatus::AwaitingInput && result.status == JobStatus::Running;
        Ok(result)
    }

    /// Starts a job and returns at once with its handle and pid; nothing is awaited.
    /// Callers that need the handle before any waiting (to cancel, to report a pid)
    /// start, then `wait_for(.., from_start: true)`. A program that cannot be started
    /// is `SPAWN_FAILED` here (and a `failed` entry in the history).
    pub fn start(&self, req: RunRequest) -> Result<(u32, u32)> {
        let (_, workdir) = self.admit(&req)?;
        let handle = self.inner.next_handle.fetch_add(1, Ordering::Relaxed);
        let started_at = SystemTime::now();
        match self.start_job(handle, &req, &workdir, None) {
            Ok((job, ticket)) => {
                job.unregister(ticket);
                Ok((handle, job.meta.pid))
            }
            Err(error) => {
                let failed = self.failed_result(handle, &req, &workdir.display, started_at, error);
                Err(ServiceError::new(
                    ErrorCode::SpawnFailed,
                    failed.error.unwrap_or_default(),
                ))
            }
        }
    }

    /// Checks a request and the job limit; returns the compiled pattern and directory.
    fn admit(&self, req: &RunRequest) -> Result<(Option<regex::Regex>, directory::WorkingDir)> {
        validate_run(req)?;
        let pattern = req.callback_pattern.as_deref().map(compile_pattern).transpose()?;
        let workdir = directory::resolve(&self.inner.root, req.directory.as_deref())?;
        let running = lock(&self.inner.jobs).values().filter(|j| j.is_running()).count();
        if running >= self.inner.max_jobs {
            return Err(ServiceError::new(
                ErrorCode::LimitReached,
                format!(
                    "{running} jobs are running, the limit is {}; kill or wait for one first",
                    self.inner.max_jobs
                ),
            ));
        }
        Ok((pattern, workdir))
    }

    /// Spawns the job and registers `run`'s waiter before its reader starts.
    fn start_job(
        &self,
        handle: u32,
        req: &RunRequest,
        workdir: &directory::WorkingDir,
        pattern: Option<regex::Regex>,
    ) -> std::io::Result<(Arc<Job>, WaitTicket)> {
        let inner = &self.inner;
        let owner = owner_entry();
        watchdog::ensure_started(&owner);
        let job_marker = format!("{}.{}", inner.token, handle);
        let env = env::build(&env::EnvLayers {
            service: &inner.env,
            call: &req.env,
            term: (req.mode == Mode::Pty).then_some("xterm-256color"),
            job_marker: &job_marker,
            owner_marker: process_token(),
            clear: req.clear_env,
        });
        let (program, args) = command::program_and_args(&req.command, req.args.as_deref());
        let started_at = SystemTime::now();
        let started = std::time::Instant::now();
        let _guard = inner.runtime.enter();
        let spawned = platform::spawn(&SpawnSpec {
            program,
            args,
            env,
            cwd: workdir,
            mode: req.mode,
            cols: req.cols,
            rows: req.rows,
        })?;
        // The output files are made by the reader task before its first read, while
        // the program starts, not on the spawn path.
        let session_dir = inner.io_dir.join(&inner.session_id);
        let separate_stderr = req.mode == Mode::Pipes;
        let (persist, disk_cap) = (inner.persist, inner.disk_cap);
        let make_files = move || {
            // Without a writable ioDir the job still runs; its output stays in memory.
            persist
                .then(|| JobFiles::create(&session_dir, handle, separate_stderr, disk_cap).ok())
                .flatten()
        };
        let screen = (req.mode == Mode::Pty).then_some(ScreenSize {
            cols: req.cols,
            rows: req.rows,
            scrollback: req.scrollback,
        });
        let output = JobOutput::new(OutputLimits::default(), req.mode == Mode::Pipes, screen);
        let meta = JobMeta {
            handle,
            pid: spawned.pid,
            command: req.command.clone(),
            args: req.args.clone(),
            description: req.description.clone(),
            directory: workdir.display.clone(),
            mode: req.mode,
            started_at,
            started,
            marker_entry: format!("{}={}", env::JOB_MARKER, job_marker),
            start_ticks: platform::start_ticks(spawned.pid as i32),
            containment: spawned.containment,
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let on_exit = self.history_recorder();
        let (job, ticket) = match spawned.io {
            ProcessIo::Pty(terminal) => {
                let fd = Arc::new(terminal);
                let job = Arc::new(Job::new(meta, output, tx, Some(fd.clone())));
                let ticket = job.register_waiter(pattern);
                inner
                    .runtime
                    .spawn(driver::write_pty(fd.clone(), rx, job.queued_input()));
                let (reader_job, child) = (job.clone(), spawned.child);
                let reader = inner.runtime.spawn(async move {
                    reader_job.attach_files(make_files());
                    driver::drive_pty(reader_job, child, fd, on_exit).await;
                });
                supervise(&inner.runtime, &job, reader);
                (job, ticket)
            }
            ProcessIo::Pipes { stdin, stdout, stderr } => {
                let job = Arc::new(Job::new(meta, output, tx, None));
                let ticket = job.register_waiter(pattern);
                inner.runtime.spawn(driver::write_pipe(stdin, rx, job.queued_input()));
                let (reader_job, child) = (job.clone(), spawned.child);
                let reader = inner.runtime.spawn(async move {
                    reader_job.attach_files(make_files());
                    driver::drive_pipes(reader_job, child, stdout, stderr, on_exit).await;
                });
                supervise(&inner.runtime, &job, reader);
                (job, ticket)
            }
        };
        lock(&inner.jobs).insert(handle, job.clone());
        Ok((job, ticket))
    }

    fn history_recorder(&self) -> driver::OnExit {
        let history = Arc::downgrade(&self.inner.history);
        Box::new(move |meta: &JobMeta, state: &JobState| {
            let Some(history) = history.upgrade() else { return };
            let output = state.output.excerpt(Which::Combined, OUTPUT_PREVIEW_BYTES * 2).text;
            let entry = history_entry(meta, state, preview(&output, OUTPUT_PREVIEW_BYTES));
            lock(&history).record(entry);
        })
    }

    fn failed_result(
        &self,
        handle: u32,
        req: &RunRequest,
        directory: &str,
        started_at: SystemTime,
        error: std::io::Error,
    ) -> RunResult {
        let program = req.args.as_ref().map_or("bash", |_| req.command.as_str());
        let message = format!("failed to start {program:?}: {error}");
        lock(&self.inner.history).record(HistoryEntry {
            handle,
            command: req.command.clone(),
            args: req.args.clone(),
            directory: directory.to_string(),
            status: JobStatus::Failed.as_str(),
            started_at: unix_millis(started_at),
            duration_ms: 0,
            exit_code: None,
            signal: None,
            error: Some(message.clone()),
            output: String::new(),
        });
        RunResult {
            handle,
            pid: None,
            command: req.command.clone(),
            directory: directory.to_string(),
            status: JobStatus::Failed,
            stdout: String::new(),
            stderr: String::new(),
            output: String::new(),
            exit_code: None,
            signal: None,
            error: Some(message),
            background_pids: Vec::new(),
            matched: None,
            truncated: false,
            total_bytes: 0,
            output_dir: None,
            started_at: unix_millis(started_at),
            duration_ms: 0,
            awaiting_input: false,
        }
    }

    /// Writes input (and keys) to a running job, then waits as `waitFor` does.
    pub async fn send_input(&self, handle: u32, req: InputRequest) -> Result<InteractionResult> {
        Ok(self.prepare_input(handle, req)?.finish().await)
    }

    /// The synchronous half of `send_input`: finds the job and checks the request now,
    /// on the caller's thread, so a `removeProcess` right after cannot make it vanish.
    pub fn prepare_input(&self, handle: u32, req: InputRequest) -> Result<PreparedInput> {
        let job = self.job(handle)?;
        let pattern = req.pattern.as_deref().map(compile_pattern).transpose()?;
        let pty = job.meta.mode == Mode::Pty;
        let mut writes: Vec<Input> = Vec::new();
        // The newline goes with text, or alone (an empty line is Enter); keys alone
        // (`C-c`) get none, so a key is never followed by a stray Enter.
        let newline = req.append_newline && (!req.input.is_empty() || req.keys.is_empty());
        let mut data = req.input.into_bytes();
        if newline {
            data.push(b'\n');
        }
        if data.len() > MAX_INPUT_BYTES {
            return Err(ServiceError::invalid(format!(
                "input is {} bytes; at most {MAX_INPUT_BYTES}",
                data.len()
            )));
        }
        if !data.is_empty() {
            writes.push(Input::Data(data));
        }
        for name in &req.keys {
            writes.push(match parse_key(name, pty)? {
                Key::Bytes(b) => Input::Data(b),
                Key::EndOfInput => Input::Close,
            });
        }
        // A pattern waits for the pattern; only without one does the delay apply.
        let delay = if pattern.is_some() { None } else { req.delay };
        let spec = WaitSpec {
            pattern,
            delay,
            timeout: req.timeout,
            max_output: req.max_output_size,
            detect_input: req.detect_input,
        };
        let mut prepared = PreparedInput {
            job,
            writes,
            spec,
            started: None,
        };
        prepared.start_now();
        Ok(prepared)
    }

    /// Waits for a pattern (or exit, or timeout) without writing anything; with
    /// `from_start`, output from the job's start counts too (as far as memory holds it).
    /// The cursor is taken now, on the caller's thread, so output that answers a write
    /// made right after this call is seen; await [`PreparedWait::finish`] for the result.
    pub fn prepare_wait(&self, handle: u32, wait: WaitRequest<'_>) -> Result<PreparedWait> {
        let job = self.job(handle)?;
        let pattern = wait.pattern.map(compile_pattern).transpose()?;
        if !job.is_running() && !wait.from_start {
            let early = finished_interaction(&job, wait.max_output);
            return Ok(PreparedWait {
                job,
                ticket: None,
                spec: WaitSpec::default(),
                early: Some(early),
            });
        }
        let ticket = job.register_waiter_replaying(pattern.clone(), wait.from_start);
        let spec = WaitSpec {
            pattern,
            delay: None,
            timeout: wait.timeout,
            max_output: wait.max_output,
            detect_input: wait.detect_input,
        };
        Ok(PreparedWait {
            job,
            ticket: Some(ticket),
            spec,
            early: None,
        })
    }

    /// Raw bytes to the job's terminal or stdin, with no waiting. A finished job
    /// ignores them.
    pub fn write_input(&self, handle: u32, data: Vec<u8>) -> Result<()> {
        let job = self.job(handle)?;
        if data.len() > MAX_INPUT_BYTES {
            return Err(ServiceError::invalid(format!(
                "input is {} bytes; at most {MAX_INPUT_BYTES}",
                data.len()
            )));
        }
        if job.is_running() && !data.is_empty() {
            job.send_input(Input::Data(data));
        }
        Ok(())
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
        jobs.iter().map(process_info).collect()
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

    /// The emulated terminal as cells, with up to `scrollback` lines above the screen
    /// (as many as the job keeps: `RunRequest::scrollback`). Pipes jobs have no screen.
    pub fn screen(&self, handle: u32, scrollback: usize) -> Result<ScreenCells> {
        let job = self.job(handle)?;
        let cells = job.state().output.screen_cells(scrollback);
        cells.ok_or_else(|| ServiceError::invalid(format!("job {handle} runs in pipes mode: it has no screen")))
    }

    /// Calls `notify` (coalesced) when the job has new output and once at its exit;
    /// the listener then takes the event from the returned subscription.
    pub fn subscribe(&self, handle: u32, notify: Notify) -> Result<Arc<Subscription>> {
        Ok(Subscription::attach(&self.job(handle)?, notify))
    }

    pub fn resize(&self, handle: u32, cols: u16, rows: u16) -> Result<()> {
        validate_size(cols, rows)?;
        let job = self.job(handle)?;
        if !job.is_running() {
            return Ok(());
        }
        job.resize(cols, rows)
            .map_err(|e| ServiceError::invalid(format!("resize failed: {e}")))
    }

    pub async fn kill(&self, handle: u32, grace: Duration) -> Result<KillReport> {
        if grace > MAX_GRACE {
            return Err(ServiceError::invalid(format!(
                "graceMs may be at most {}",
                MAX_GRACE.as_millis()
            )));
        }
        let job = self.job(handle)?;
        Ok(kill_job(&job, grace, JobStatus::Killed).await)
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

    pub fn history(&self, limit: Option<usize>) -> Vec<HistoryEntry> {
        lock(&self.inner.history).list(limit)
    }

    pub fn clear_history(&self) -> usize {
        lock(&self.inner.history).clear()
    }

    /// Kills every job (and what it started) and waits for them.
    pub async fn shutdown(&self) {
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
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        // A service dropped without shutdown still leaves no process behind.
        kill_all_jobs_now(&self.inner);
    }
}

/// Watches a job's reader. When it is done, the job's terminal and stdin are let go.
/// If it panicked (a bug), the job is failed and its processes killed, so no caller
/// waits forever and nothing is left running unseen.
fn supervise(runtime: &Handle, job: &Arc<Job>, reader: tokio::task::JoinHandle<()>) {
    let job = job.clone();
    runtime.spawn(async move {
        if let Err(e) = reader.await {
            if e.is_panic() {
                kill_now(&job);
                job.abandon(format!(
                    "internal error: the output reader of job {} stopped",
                    job.meta.handle
                ));
            }
        }
        job.release_io();
    });
}

fn kill_all_jobs_now(inner: &Inner) {
    let jobs: Vec<Arc<Job>> = lock(&inner.jobs).values().cloned().collect();
    kill_all_now(&jobs);
    for job in jobs {
        job.close();
    }
}

/// Synchronous SIGKILL of every job of every service in this process: for the
/// process-exit hook, where nothing asynchronous runs any more.
pub fn kill_everything_now() {
    let services: Vec<Arc<Inner>> = lock(&SERVICES).iter().filter_map(Weak::upgrade).collect();
    for inner in services {
        kill_all_jobs_now(&inner);
    }
}

fn validate_size(cols: u16, rows: u16) -> Result<()> {
    if cols == 0 || rows == 0 || cols > MAX_TERMINAL_SIZE || rows > MAX_TERMINAL_SIZE {
        return Err(ServiceError::invalid(format!(
            "terminal size {cols}x{rows} is out of range (1 to {MAX_TERMINAL_SIZE} each)"
        )));
    }
    Ok(())
}

fn validate_run(req: &RunRequest) -> Result<()> {
    if req.command.trim().is_empty() {
        return Err(ServiceError::invalid("command is empty"));
    }
    if req.command.len() > MAX_COMMAND_BYTES {
        return Err(ServiceError::invalid(format!(
            "command is {} bytes; at most {MAX_COMMAND_BYTES} are accepted",
            req.command.len()
        )));
    }
    if req.command.contains('\0') {
        return Err(ServiceError::invalid("command contains a NUL byte"));
    }
    if let Some(args) = &req.args {
        if args.iter().any(|a| a.contains('\0')) {
            return Err(ServiceError::invalid("an argument contains a NUL byte"));
        }
    }
    if req.max_output_size == 0 {
        return Err(ServiceError::invalid("maxOutputSize must be at least 1"));
    }
    validate_size(req.cols, req.rows)?;
    env::validate_pairs(&req.env)
}
