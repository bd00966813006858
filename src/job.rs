//! One job: a process behind a handle, its output, its waiters and its end.
//!
//! The reader task (`driver`) is the only writer of output; API calls read snapshots
//! under the same short lock. Exit is published only after every byte the process
//! wrote has been ingested, so a result never misses the tail of the output.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::{mpsc, watch, Notify};

use crate::notify::Subscribers;
use crate::output::persist::{unix_millis, JobFiles, JobInfo, Stream};
use crate::output::read::OutputChunk;
use crate::output::{JobOutput, View};
use crate::platform::{Containment, Exit, JobIdentity, Terminal};
use crate::spawn::Mode;
use crate::sync::lock;
use crate::wait::{WaitOutcome, WaitSpec, WaitStatus, Waiter};

/// How long a job runs before its first `info.json` is written; see
/// [`Job::write_running_info`].
pub const FIRST_INFO_DELAY: Duration = Duration::from_millis(20);

/// Quiet time before a job blocked reading its terminal counts as waiting for input:
/// the reader then has the prompt the program printed just before its read (that takes
/// well under a millisecond; the margin is for a loaded machine), and a program woken
/// by input a caller has just written is past its read.
pub const INPUT_SETTLE: Duration = Duration::from_millis(50);
/// Quiet time after which a PTY job's screen lines are committed as they stand (see
/// `JobOutput::commit_screen`). Programs that redraw several lines (progress bars) do
/// so many times a second; a pause longer than this ends the redraw.
pub const SCREEN_SETTLE: Duration = Duration::from_millis(500);
/// The longest pause between two looks at a quiet job during a wait.
const INPUT_RECHECK_MAX: Duration = Duration::from_millis(800);

/// Writes the job's first `info.json` after [`FIRST_INFO_DELAY`] if it still runs then.
async fn write_running_info_later(job: Weak<Job>) {
    tokio::time::sleep(FIRST_INFO_DELAY).await;
    if let Some(job) = job.upgrade() {
        job.write_running_info();
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobStatus {
    Running,
    Exited,
    Killed,
    TimedOut,
    Failed,
}

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Exited => "exited",
            Self::Killed => "killed",
            Self::TimedOut => "timed_out",
            Self::Failed => "failed",
        }
    }
}

/// What a job is, fixed at spawn.
#[derive(Clone, Debug)]
pub struct JobMeta {
    pub handle: u32,
    pub pid: u32,
    pub command: String,
    pub args: Option<Vec<String>>,
    pub description: Option<String>,
    pub directory: String,
    pub mode: Mode,
    pub started_at: SystemTime,
    pub started: Instant,
    /// The `NATIVE_SHELL_JOB=...` entry its processes carry.
    pub marker_entry: String,
    pub start_ticks: u64,
    /// What holds the job's processes together (a Job Object on Windows).
    pub containment: Containment,
}

/// Called with the final state as the exit is published, before any waiter wakes (the
/// service records history here, so a caller that saw the exit finds the entry).
pub type OnExit = Box<dyn FnOnce(&JobMeta, &JobState) + Send>;

impl JobMeta {
    /// What the platform finds the job's processes by.
    pub fn identity(&self) -> JobIdentity<'_> {
        JobIdentity {
            pid: self.pid as i32,
            start_ticks: self.start_ticks,
            marker: &self.marker_entry,
            containment: &self.containment,
        }
    }
}

/// Bytes for the process's stdin, in order.
pub enum Input {
    Data(Vec<u8>),
    /// Close stdin (pipes mode: the program reads EOF) and end the writer.
    Close,
}

pub struct JobState {
    pub status: JobStatus,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub error: Option<String>,
    pub ended_at: Option<SystemTime>,
    pub duration: Option<Duration>,
    pub output: JobOutput,
    pub background_pids: Vec<u32>,
    /// Set by `kill` before signalling, so the exit is reported as what caused it.
    pub kill_reason: Option<JobStatus>,
    /// Combined-text offset already handed to the caller ("output not yet returned").
    pub delivered: u64,
    /// The output reached EOF by the time the exit was published.
    pub output_closed_at_exit: bool,
    waiters: Vec<Waiter>,
}

pub struct Job {
    pub meta: JobMeta,
    state: Mutex<JobState>,
    finished: watch::Sender<bool>,
    /// Set once the output files are attached (or known not to exist).
    files_ready: watch::Sender<bool>,
    input: mpsc::UnboundedSender<Input>,
    /// The PTY master (shared with the reader and writer), kept for resizing until the
    /// job's output is closed.
    pty: Mutex<Option<Arc<Terminal>>>,
    /// Serialises `sendInput`/`waitFor` on one handle: two interactions never interleave.
    pub interaction: Arc<tokio::sync::Mutex<()>>,
    /// Inputs handed to the writer task and not yet written: while there are none, the
    /// caller may write to the terminal itself (see [`Job::write_now`]).
    queued_input: Arc<AtomicUsize>,
    closed: AtomicBool,
    close_notify: Notify,
    next_waiter: AtomicU64,
    /// Listeners told of new output and of the exit (`crate::notify`, `crate::events`).
    subscribers: Subscribers,
    /// When output last arrived (or a wait for input began), in ns since `meta.started`.
    last_activity: AtomicU64,
    /// Input was written and no output has come since. The kernel hands a PTY's input
    /// to the program's side on a worker thread of its own, later: until then the
    /// program still sleeps in its read as if nothing had been typed. The terminal's
    /// echo (or the program's answer) shows the input got there.
    unanswered_input: AtomicBool,
}

impl Job {
    pub fn new(
        meta: JobMeta,
        output: JobOutput,
        input: mpsc::UnboundedSender<Input>,
        pty: Option<Arc<Terminal>>,
    ) -> Self {
        let state = JobState {
            status: JobStatus::Running,
            exit_code: None,
            signal: None,
            error: None,
            ended_at: None,
            duration: None,
            output,
            background_pids: Vec::new(),
            kill_reason: None,
            delivered: 0,
            output_closed_at_exit: false,
            waiters: Vec::new(),
        };
        Self {
            meta,
            state: Mutex::new(state),
            finished: watch::channel(false).0,
            files_ready: watch::channel(false).0,
            input,
            pty: Mutex::new(pty),
            interaction: Arc::new(tokio::sync::Mutex::new(())),
            queued_input: Arc::new(AtomicUsize::new(0)),
            closed: AtomicBool::new(false),
            close_notify: Notify::new(),
            next_waiter: AtomicU64::new(1),
            subscribers: Subscribers::default(),
            last_activity: AtomicU64::new(0),
            unanswered_input: AtomicBool::new(false),
        }
    }

    /// The state lock (poison-tolerant: `crate::sync::lock`).
    pub fn state(&self) -> MutexGuard<'_, JobState> {
        lock(&self.state)
    }

    /// Marks now as the job's last activity (output, or the start of a wait for input).
    fn touch(&self) {
        let now = self.meta.started.elapsed().as_nanos() as u64;
        self.last_activity.store(now, Ordering::Relaxed);
    }

    /// Output arrived: the input written before it has reached the program.
    fn output_arrived(&self) {
        self.touch();
        self.unanswered_input.store(false, Ordering::Relaxed);
    }

    fn quiet_for(&self) -> Duration {
        let last = Duration::from_nanos(self.last_activity.load(Ordering::Relaxed));
        self.meta.started.elapsed().saturating_sub(last)
    }

    /// The job runs in a PTY whose foreground program is blocked reading it, no output
    /// came for [`INPUT_SETTLE`], and any input written has been answered (echoed).
    pub fn awaiting_input(&self) -> bool {
        self.look_at_input(false).0
    }

    /// Whether the job waits for input (see [`Job::awaiting_input`]) and the program its
    /// input reaches now: for a PTY job the leader of the terminal's foreground group,
    /// for a pipes job the job's own process (what it exec'd); `None` once it ended.
    /// One look at the terminal serves both (the listing asks for both per job).
    pub fn input_state(&self) -> (bool, Option<String>) {
        self.look_at_input(true)
    }

    /// `program`: also name the foreground program (waits only ask whether input is
    /// awaited, and look often).
    fn look_at_input(&self, program: bool) -> (bool, Option<String>) {
        let settled = self.quiet_for() >= INPUT_SETTLE && !self.unanswered_input.load(Ordering::Relaxed);
        if (!settled && !program) || !self.is_running() {
            return (false, None);
        }
        let terminal = {
            let pty = lock(&self.pty);
            let Some(terminal) = pty.as_ref() else {
                let name = program
                    .then(|| crate::platform::program_name(self.meta.pid as i32))
                    .flatten();
                return (false, name);
            };
            terminal.clone()
        };
        let state = terminal.input_state(self.meta.pid as i32, settled, program);
        (state.awaiting, state.program)
    }

    /// Resolves once the job waits for input (see [`Job::awaiting_input`]); never for a
    /// pipes job. Looks after each quiet [`INPUT_SETTLE`], then less often while the job
    /// stays quiet and busy; output puts it back to the settle time.
    async fn input_awaited(&self) {
        if self.meta.mode != Mode::Pty {
            return std::future::pending().await;
        }
        self.touch();
        let mut pause = INPUT_SETTLE;
        loop {
            let quiet = self.quiet_for();
            if quiet < INPUT_SETTLE {
                pause = INPUT_SETTLE;
                tokio::time::sleep(INPUT_SETTLE - quiet).await;
                continue;
            }
            if self.awaiting_input() {
                return;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(INPUT_RECHECK_MAX);
        }
    }

    pub fn subscribers(&self) -> &Subscribers {
        &self.subscribers
    }

    pub fn is_running(&self) -> bool {
        self.state().status == JobStatus::Running
    }

    /// Gives the job its output files (made by the reader before its first read, on
    /// the runtime). `info.json` comes later: see `write_running_info`.
    pub fn attach_files(self: &Arc<Self>, files: Option<JobFiles>) {
        if files.is_some() {
            tokio::spawn(write_running_info_later(Arc::downgrade(self)));
        }
        self.state().output.set_files(files);
        self.files_ready.send_replace(true);
    }

    /// Writes the first `info.json` of a job still running, once: [`FIRST_INFO_DELAY`]
    /// after the start, or as soon as a caller is told the job is running. A job that
    /// ends before that gets one `info.json`, written at its exit, instead of a file
    /// made and replaced at once: most commands are that short, and on ext4 without a
    /// journal every inode freed in the last minutes slows each later file creation.
    pub fn write_running_info(&self) {
        let mut state = self.state();
        let unwritten = state.output.files().is_some_and(|files| !files.info_written());
        if state.status != JobStatus::Running || !unwritten {
            return;
        }
        self.write_info(&mut state);
        if let Some(files) = state.output.files_mut() {
            files.prepare_info_rewrite();
        }
    }

    /// Resolves once `attach_files` has run.
    pub async fn files_ready(&self) {
        let mut rx = self.files_ready.subscribe();
        let _ = rx.wait_for(|ready| *ready).await;
    }

    /// The job ended, nothing kept its output open past the exit (so no background
    /// pids were found), and neither its process group nor its cgroup holds a process.
    pub fn left_nothing_running(&self) -> bool {
        let state = self.state();
        state.status != JobStatus::Running
            && state.background_pids.is_empty()
            && state.output_closed_at_exit
            && !crate::platform::anything_left(&self.meta.identity())
    }

    /// Called by the reader with each chunk.
    pub fn ingest(&self, stream: Stream, bytes: &[u8]) {
        let mut guard = self.state();
        let state = &mut *guard;
        self.output_arrived();
        let clean = state.output.ingest(stream, bytes);
        for waiter in state.waiters.iter_mut() {
            waiter.feed(clean);
        }
        drop(guard);
        self.subscribers.wake_all();
    }

    /// Called by the reader when the job's terminal output has been quiet for
    /// [`SCREEN_SETTLE`]: see `JobOutput::commit_screen`. Readers are told.
    pub fn commit_screen(&self) {
        let committed = self.state().output.commit_screen();
        if committed {
            self.subscribers.wake_all();
        }
    }

    /// Called by the reader once the process has exited and its output is drained.
    pub fn finish(&self, exit: std::io::Result<Exit>, background_pids: Vec<u32>, output_closed: bool, on_exit: OnExit) {
        let mut state = self.state();
        state.output_closed_at_exit = output_closed;
        state.output.finish();
        match exit {
            Ok(exit) => {
                state.exit_code = exit.code;
                state.signal = exit.signal;
            }
            Err(e) => state.error = Some(format!("waiting for the process failed: {e}")),
        }
        state.status = state.kill_reason.unwrap_or(JobStatus::Exited);
        state.background_pids = background_pids;
        self.publish_end(state, Some(on_exit));
    }

    /// The reader died without publishing an exit (a bug): the job is reported as
    /// failed, so no caller waits forever on it.
    pub fn abandon(&self, error: String) {
        let mut state = self.state();
        if state.status != JobStatus::Running {
            return;
        }
        state.status = JobStatus::Failed;
        state.error = Some(error);
        self.publish_end(state, None);
    }

    /// Records the end, wakes every waiter and then every `wait_finished`.
    fn publish_end(&self, mut state: MutexGuard<'_, JobState>, on_exit: Option<OnExit>) {
        state.ended_at = Some(SystemTime::now());
        state.duration = Some(self.meta.started.elapsed());
        if let Some(on_exit) = on_exit {
            on_exit(&self.meta, &state);
        }
        for waiter in state.waiters.iter_mut() {
            waiter.mark_exited();
        }
        self.write_info(&mut state);
        drop(state);
        self.finished.send_replace(true);
        // After the exit is published, so the delivery this queues reports it.
        self.subscribers.wake_all();
    }

    pub fn write_info(&self, state: &mut JobState) {
        if state.output.files().is_none() {
            return;
        }
        let info = self.info(state);
        if let Some(files) = state.output.files_mut() {
            // info.json is a convenience copy; a failed write must not fail the job.
            let _ = files.write_info(&info);
        }
    }

    pub fn info(&self, state: &JobState) -> JobInfo {
        JobInfo {
            handle: self.meta.handle,
            pid: Some(self.meta.pid),
            command: self.meta.command.clone(),
            args: self.meta.args.clone(),
            description: self.meta.description.clone(),
            directory: self.meta.directory.clone(),
            mode: self.meta.mode.as_str(),
            status: state.status.as_str(),
            start_time: unix_millis(self.meta.started_at),
            end_time: state.ended_at.map(unix_millis),
            exit_code: state.exit_code,
            signal: state.signal,
            error: state.error.clone(),
        }
    }

    /// Resolves once the exit has been published.
    pub async fn wait_finished(&self) {
        let mut rx = self.finished.subscribe();
        let _ = rx.wait_for(|done| *done).await;
    }

    pub fn send_input(&self, input: Input) -> bool {
        if matches!(input, Input::Data(_)) {
            self.unanswered_input.store(true, Ordering::Relaxed);
        }
        self.queued_input.fetch_add(1, Ordering::AcqRel);
        let sent = self.input.send(input).is_ok();
        if !sent {
            self.queued_input.fetch_sub(1, Ordering::AcqRel);
        }
        sent
    }

    /// The writer task's count of inputs it has yet to write (it decrements it).
    pub fn queued_input(&self) -> Arc<AtomicUsize> {
        self.queued_input.clone()
    }

    /// Writes `data` to the terminal now, on the caller's thread, when nothing is queued
    /// before it; whatever the terminal does not take at once (or all of it, when input
    /// is queued or this is not a PTY job) goes to the writer task, in order. Saves
    /// `sendInput` a hand-over to the writer task before the program can see its input.
    pub fn write_now(&self, data: Vec<u8>) {
        let mut written = 0;
        if self.queued_input.load(Ordering::Acquire) == 0 {
            let pty = lock(&self.pty);
            if let Some(terminal) = pty.as_ref() {
                self.unanswered_input.store(true, Ordering::Relaxed);
                written = terminal.write_some(&data);
            }
        }
        if written < data.len() {
            self.send_input(Input::Data(data[written..].to_vec()));
        }
    }

    pub fn resize(&self, cols: u16, rows: u16) -> std::io::Result<()> {
        if let Some(terminal) = lock(&self.pty).as_ref() {
            terminal.resize(cols, rows)?;
        }
        self.state().output.resize(cols, rows);
        Ok(())
    }

    /// Called once the reader is done (the process exited and its output is closed):
    /// the terminal, stdin and the output files are let go, so a finished job that is
    /// never removed holds no PTY (a machine has only a few thousand) and no descriptor.
    pub fn release_io(&self) {
        lock(&self.pty).take();
        self.state().output.close_files();
        // A reader that died before making the files must not leave `run` waiting.
        self.files_ready.send_replace(true);
        // The writer task ends on Close and drops its end of the terminal or stdin.
        let _ = self.input.send(Input::Close);
    }

    /// Stops reading output that background processes write after the exit.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.close_notify.notify_waiters();
    }

    pub async fn closed(&self) {
        let notified = self.close_notify.notified();
        if self.closed.load(Ordering::SeqCst) {
            return;
        }
        notified.await;
    }

    pub fn view(&self, view: View, tail_bytes: Option<usize>) -> String {
        self.state().output.view(view, tail_bytes)
    }

    /// Registers a waiter now; only output ingested after this call can satisfy it.
    /// Await [`PendingWait::outcome`] for the result.
    pub fn begin_wait(self: &Arc<Self>, spec: WaitSpec) -> PendingWait<'_> {
        let ticket = self.register_waiter(spec.pattern.clone());
        self.pending(ticket, spec)
    }

    /// Registers a waiter without waiting yet: `run` does this before the reader
    /// starts, so not even the first byte of output can slip past the pattern.
    pub fn register_waiter(&self, pattern: Option<regex::Regex>) -> WaitTicket {
        self.register_waiter_replaying(pattern, false)
    }

    /// Like `register_waiter`; with `replay`, the waiter first sees the text so far,
    /// under the same lock as the reader, so nothing is seen twice or missed.
    pub fn register_waiter_replaying(&self, pattern: Option<regex::Regex>, replay: bool) -> WaitTicket {
        let id = self.next_waiter.fetch_add(1, Ordering::Relaxed);
        let mut state = self.state();
        let mut waiter = Waiter::new(id, pattern);
        if replay {
            waiter.feed(&state.output.text_since(0));
        }
        if state.status != JobStatus::Running {
            waiter.mark_exited();
        }
        let notify = waiter.notify.clone();
        state.waiters.push(waiter);
        WaitTicket { id, notify }
    }

    /// Drops a registered waiter that will not be awaited.
    pub fn unregister(&self, ticket: WaitTicket) {
        remove_waiter(&mut self.state(), ticket.id);
    }

    /// The wait of a registered waiter.
    pub fn pending(self: &Arc<Self>, ticket: WaitTicket, spec: WaitSpec) -> PendingWait<'_> {
        PendingWait {
            guard: WaiterGuard {
                job: self,
                id: ticket.id,
            },
            notify: ticket.notify,
            spec,
        }
    }

    /// Committed text from byte `since` on, at most `max` bytes (see `output::read`).
    pub fn read_output(&self, since: u64, max: usize) -> crate::error::Result<OutputChunk> {
        let plan = self.state().output.committed().plan(since, max)?;
        Ok(plan.execute())
    }

    /// Marks everything so far as handed to the caller; returns what was not yet.
    pub fn take_undelivered(&self, limit: usize) -> String {
        let mut state = self.state();
        let text = state.output.text_since(state.delivered);
        state.delivered = state.output.text_len();
        crate::output::bounded::excerpt("", 0, &text, limit, None).text
    }
}

async fn sleep_or_never(d: Option<Duration>) {
    match d {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}

/// A registered waiter, not yet awaited.
pub struct WaitTicket {
    id: u64,
    notify: Arc<Notify>,
}

/// A registered wait; dropping it unregisters the waiter.
pub struct PendingWait<'a> {
    guard: WaiterGuard<'a>,
    notify: Arc<Notify>,
    spec: WaitSpec,
}

impl PendingWait<'_> {
    /// Resolves at the first of: pattern matched, exit, delay, timeout.
    pub async fn outcome(self) -> WaitOutcome {
        let Self { guard, notify, spec } = self;
        let job = guard.job;
        let input = async {
            if spec.detect_input {
                job.input_awaited().await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        let fired = tokio::select! {
            _ = notify.notified() => None,
            _ = sleep_or_never(spec.delay) => Some(WaitStatus::DelayElapsed),
            _ = sleep_or_never(spec.timeout) => Some(WaitStatus::TimedOut),
            _ = input => Some(WaitStatus::AwaitingInput),
        };
        let waiter = guard.take();
        let status = match (&waiter, fired) {
            (Some(w), _) if w.matched.is_some() => WaitStatus::Matched,
            (Some(w), _) if w.exited => WaitStatus::Exited,
            (_, Some(fired)) => fired,
            _ => WaitStatus::Exited,
        };
        let (output, truncated) = waiter.as_ref().map(|w| w.output(spec.max_output)).unwrap_or_default();
        WaitOutcome {
            status,
            output,
            matched: waiter.and_then(|w| w.matched),
            truncated,
        }
    }
}

/// Removes the waiter if the wait is abandoned (its future dropped) or finished.
struct WaiterGuard<'a> {
    job: &'a Arc<Job>,
    id: u64,
}

impl WaiterGuard<'_> {
    /// Ends the wait: the waiter leaves the job, and what it saw counts as delivered.
    fn take(self) -> Option<Waiter> {
        let mut state = self.job.state();
        let waiter = remove_waiter(&mut state, self.id);
        state.delivered = state.output.text_len();
        drop(state);
        std::mem::forget(self);
        waiter
    }
}

impl Drop for WaiterGuard<'_> {
    fn drop(&mut self) {
        let mut state = self.job.state();
        remove_waiter(&mut state, self.id);
    }
}

fn remove_waiter(state: &mut JobState, id: u64) -> Option<Waiter> {
    let index = state.waiters.iter().position(|w| w.id == id)?;
    Some(state.waiters.swap_remove(index))
}
