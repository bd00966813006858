//! One job: a process behind a handle, its output, its waiters and its end.
//!
//! The reader task (`driver`) is the only writer of output; API calls read snapshots
//! under the same short lock. Exit is published only after every byte the process
//! wrote has been ingested, so a result never misses the tail of the output.
//!
//! `input` holds what goes to the program (input, resizing) and whether it waits for
//! input; `waiting` the waits on output, exit, delay, timeout or a prompt.

#[cfg(target_os = "linux")]
pub mod carry;
pub mod driver;
pub mod events;
mod flood_threads;
pub mod freeze;
pub mod handoff;
mod input;
mod input_queue;
pub mod keys;
pub mod kill;
pub mod notify;
#[cfg(target_os = "linux")]
pub mod sandbox_carry;
pub mod spawn;
pub mod wait;
mod waiting;
pub mod writer;

pub use input::INPUT_SETTLE;
pub use input_queue::{InputQueue, Refused};
pub use waiting::{PendingWait, WaitTicket};

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::{mpsc, watch, Notify};

use crate::base::deadlines::Deadlines;
use crate::base::sync::lock;
use crate::job::notify::Subscribers;
use crate::job::spawn::Mode;
use crate::job::wait::Waiter;
use crate::output::persist::{unix_millis, JobFiles, JobInfo, Stream};
use crate::output::read::OutputChunk;
use crate::output::{JobOutput, View};
use crate::platform::{Containment, Exit, JobIdentity, Terminal};

/// How long a job runs before its first `info.json` is written; see
/// [`Job::write_running_info`].
pub const FIRST_INFO_DELAY: Duration = Duration::from_millis(20);

/// Quiet time after which a PTY job's screen lines are committed as they stand (see
/// `JobOutput::commit_screen`). Programs that redraw several lines (progress bars) do
/// so many times a second; a pause longer than this ends the redraw.
pub const SCREEN_SETTLE: Duration = Duration::from_millis(500);

/// Writes the job's first `info.json` after [`FIRST_INFO_DELAY`] if it still runs then.
async fn write_running_info_later(job: Weak<Job>) {
    tokio::time::sleep(FIRST_INFO_DELAY).await;
    if let Some(job) = job.upgrade() {
        job.write_running_info();
    }
}

/// Named as `as_str` names it, also in a restart's hand-over (src/service/carry.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
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
    /// What confines it (`crate::sandbox`), and its own TMPDIR, handed back when nothing
    /// of the job runs any more (`driver::publish_exit`), else when the job is dropped.
    pub sandbox: Option<crate::sandbox::Enforced>,
    pub tmpdir: Option<std::sync::Arc<crate::sandbox::JobTmpDir>>,
    /// Its hold on the project's git guard (a sandboxed job that may write the
    /// project): checked at its exit, given up with its TMPDIR (`driver::publish_exit`).
    pub git_hold: Option<std::sync::Arc<crate::platform::GitHold>>,
}

/// Called with the final state as the exit is published, before any waiter wakes (the
/// service records history here, so a caller that saw the exit finds the entry).
pub type OnExit = Box<dyn FnOnce(&JobMeta, &JobState) + Send>;

impl JobMeta {
    /// What confines the job, with what the git guard put back so far.
    pub fn sandbox_report(&self) -> Option<crate::sandbox::Enforced> {
        let mut report = self.sandbox.clone()?;
        if let Some(hold) = &self.git_hold {
            report.restored = hold.restored();
        }
        Some(report)
    }

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
    /// What the first kill of the running job said it was for (`KillOptions.reason`):
    /// kept with the job, so a later client (an MCP server started after a restart)
    /// tells a task cancelled from a job killed for another cause.
    pub kill_note: Option<String>,
    /// Combined-text offset already handed to the caller ("output not yet returned").
    pub delivered: u64,
    /// The output reached EOF by the time the exit was published.
    pub output_closed_at_exit: bool,
    /// At the exit, nothing of the job was left: its output closed, its group and
    /// cgroup empty. Nothing can come back (no member is left to start one), so
    /// `left_nothing_running` need not ask the kernel again.
    nothing_left_at_exit: bool,
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
    queued_input: Arc<InputQueue>,
    closed: AtomicBool,
    close_notify: Notify,
    next_waiter: AtomicU64,
    /// Listeners told of new output and of the exit (`crate::job::notify`, `crate::job::events`).
    subscribers: Subscribers,
    /// The service's timer, for the deadlines of this job's waits.
    deadlines: Deadlines,
    /// When output last arrived (or a wait for input began), in ns since `meta.started`.
    last_activity: AtomicU64,
    /// Input was written and no output has come since. The kernel hands a PTY's input
    /// to the program's side on a worker thread of its own, later: until then the
    /// program still sleeps in its read as if nothing had been typed. The terminal's
    /// echo (or the program's answer) shows the input got there.
    unanswered_input: AtomicBool,
    /// Stops the reader for a restart in place, and lists the job's descriptors
    /// (`freeze`).
    pub freeze: Arc<freeze::Freeze>,
}

impl Job {
    pub fn new(
        meta: JobMeta,
        output: JobOutput,
        input: mpsc::UnboundedSender<Input>,
        pty: Option<Arc<Terminal>>,
        deadlines: Deadlines,
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
            kill_note: None,
            delivered: 0,
            output_closed_at_exit: false,
            nothing_left_at_exit: false,
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
            queued_input: Arc::new(InputQueue::default()),
            closed: AtomicBool::new(false),
            close_notify: Notify::new(),
            next_waiter: AtomicU64::new(1),
            subscribers: Subscribers::default(),
            deadlines,
            last_activity: AtomicU64::new(0),
            unanswered_input: AtomicBool::new(false),
            freeze: Arc::default(),
        }
    }

    /// The state lock (poison-tolerant: `crate::base::sync::lock`).
    pub fn state(&self) -> MutexGuard<'_, JobState> {
        lock(&self.state)
    }

    pub fn subscribers(&self) -> &Subscribers {
        &self.subscribers
    }

    pub fn is_running(&self) -> bool {
        self.state().status == JobStatus::Running
    }

    /// Gives the job its output files (made by the reader before its first read, on
    /// the runtime), or why they could not be made. `info.json` comes later: see
    /// `write_running_info`.
    pub fn attach_files(self: &Arc<Self>, files: Option<Result<JobFiles, String>>) {
        if matches!(files, Some(Ok(_))) {
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
    /// Whether `files_ready` would return at once.
    pub fn files_are_ready(&self) -> bool {
        *self.files_ready.borrow()
    }

    pub async fn files_ready(&self) {
        let mut rx = self.files_ready.subscribe();
        let _ = rx.wait_for(|ready| *ready).await;
    }

    /// The job ended, nothing kept its output open past the exit (so no background
    /// pids were found), and neither its process group nor its cgroup holds a process.
    pub fn left_nothing_running(&self) -> bool {
        let state = self.state();
        if state.nothing_left_at_exit {
            return true;
        }
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
        let decided = Self::decided_waits(state);
        let screen = state.output.take_screen_due();
        let snapshot = state.output.take_pending_snapshot();
        drop(guard);
        for (done, outcome) in decided {
            done(outcome);
        }
        self.subscribers.wake_all();
        // The screen's batch is emulated outside the job's lock (src/output/screen.rs),
        // after the subscribers are told: they can read the text meanwhile.
        if let Some(screen) = screen {
            screen.flush();
        }
        // A terminal's snapshot (its journal's cap) reads every cell: written out here,
        // before the next read and outside the job's lock (src/output/snapshot.rs).
        if let Some(snapshot) = snapshot {
            let written = snapshot.write();
            self.state().output.finish_snapshot(written);
        }
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
    /// `nothing_left`: the output closed and the job's group and cgroup were found
    /// empty after its exit (src/job/driver.rs).
    pub fn finish(
        &self,
        exit: std::io::Result<Exit>,
        background_pids: Vec<u32>,
        output_closed: bool,
        nothing_left: bool,
        on_exit: OnExit,
    ) {
        let mut state = self.state();
        state.output_closed_at_exit = output_closed;
        state.nothing_left_at_exit = nothing_left;
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
        let decided = Self::decided_waits(&mut state);
        self.write_info(&mut state);
        drop(state);
        self.finished.send_replace(true);
        // After the exit is published, so the delivery this queues reports it.
        self.subscribers.wake_all();
        // Last, as when each wait was a task woken here: listeners hear of the exit
        // before any caller learns of it from a wait.
        for (done, outcome) in decided {
            done(outcome);
        }
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
            persist_error: state.output.persist_error(),
        }
    }

    /// Resolves once the exit has been published.
    pub async fn wait_finished(&self) {
        let mut rx = self.finished.subscribe();
        let _ = rx.wait_for(|done| *done).await;
    }

    /// Called once the reader is done (the process exited and its output is closed):
    /// the terminal, stdin and the output files are let go, so a finished job that is
    /// never removed holds no PTY (a machine has only a few thousand) and no descriptor.
    pub fn release_io(&self) {
        // Nothing queued can reach a program whose I/O is done.
        self.queued_input.drop_all();
        lock(&self.pty).take();
        self.state().output.close_files();
        // A reader that died before making the files must not leave `run` waiting.
        self.files_ready.send_replace(true);
        // The writer task ends on Close and drops its end of the terminal or stdin.
        let _ = self.input.send(Input::Close);
    }

    /// Stops reading output that background processes write after the exit, and
    /// drops the input still queued.
    pub fn close(&self) {
        self.queued_input.drop_all();
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
        if view == View::Screen {
            // Read outside the job's lock, as `Service::screen` does: emulating what is
            // queued (up to a batch, milliseconds during a flood) would hold the reader
            // and every other caller of the job as long (crate::output::screen).
            let screen = self.state().output.screen();
            if let Some(screen) = screen {
                return crate::output::tail_of(screen.contents(), tail_bytes);
            }
        }
        self.state().output.view(view, tail_bytes)
    }

    /// Committed text from byte `since` on, at most `max` bytes (see `output::read`).
    /// A file found holding less than it was given is told so and the read planned
    /// again: what it lacks is then a gap, and the read goes on to memory's tail. The
    /// second plan reads the file only below where it was found to end, so a third
    /// is needed only if it was cut again in between.
    pub fn read_output(&self, since: u64, max: usize) -> crate::base::error::Result<OutputChunk> {
        let mut tries = 0;
        loop {
            let plan = self.state().output.committed().plan(since, max)?;
            let from_file = plan.reads_file();
            let (chunk, short) = plan.execute()?;
            if from_file && self.state().output.kept_dir().is_none() {
                // The folder was let go while its file was read: it may have become a
                // spare since, emptied for another job (`output::spare_dir`), so what
                // was read may not be this job's. Read again: a let-go folder is never
                // planned from, so this happens once at most.
                continue;
            }
            tries += 1;
            let Some(end) = short else { return Ok(chunk) };
            if let Some(files) = self.state().output.files_mut() {
                files.text_ends_at(end);
            }
            if chunk.next > since || tries == 3 {
                return Ok(chunk);
            }
        }
    }

    /// Up to `max` bytes as written, with their streams, from offset `since`
    /// (`output::raw_stream`).
    pub fn read_raw(&self, since: u64, max: usize) -> crate::output::raw_stream::RawRead {
        self.state().output.raw_stream().read(since, max)
    }

    /// Bytes written so far, all streams: the offset `read_raw` reaches now.
    pub fn raw_total(&self) -> u64 {
        self.state().output.raw_stream().total()
    }

    /// Retention removed the finished job's folder: it is no longer named nor read.
    pub fn files_pruned(&self) {
        if let Some(files) = self.state().output.files_mut() {
            files.mark_pruned();
        }
    }

    /// The job's folder, while it has one.
    pub fn output_dir(&self) -> Option<std::path::PathBuf> {
        self.state().output.kept_dir().map(|d| d.to_path_buf())
    }

    /// Marks everything so far as handed to the caller; returns what was not yet.
    pub fn take_undelivered(&self, limit: usize) -> String {
        let mut state = self.state();
        let text = state.output.text_since(state.delivered);
        state.delivered = state.output.text_len();
        crate::output::bounded::excerpt("", 0, &text, limit, None).text
    }
}
