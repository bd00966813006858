//! What goes to a job's program (input, keys, a new terminal size), and whether the
//! program waits for input: blocked reading its terminal after a quiet settle time.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::{Input, InputQueue, Job, Refused};
use crate::base::sync::lock;
use crate::job::wait::WaitStatus;

/// Quiet time before a job blocked reading its terminal counts as waiting for input:
/// the reader then has the prompt the program printed just before its read (that takes
/// well under a millisecond; the margin is for a loaded machine), and a program woken
/// by input a caller has just written is past its read.
pub const INPUT_SETTLE: Duration = Duration::from_millis(50);
/// The longest pause between two looks at a quiet job during a wait.
const INPUT_RECHECK_MAX: Duration = Duration::from_millis(800);

impl Job {
    /// Marks now as the job's last activity (output, or the start of a wait for input).
    pub(super) fn touch(&self) {
        let now = self.meta.started.elapsed().as_nanos() as u64;
        self.last_activity.store(now, Ordering::Relaxed);
    }

    /// Output arrived: the input written before it has reached the program.
    pub(super) fn output_arrived(&self) {
        self.touch();
        self.unanswered_input.store(false, Ordering::Relaxed);
    }

    pub(super) fn quiet_for(&self) -> Duration {
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
    pub(super) fn look_at_input(&self, program: bool) -> (bool, Option<String>) {
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
        // Output taken in while the terminal was looked at (the prompt the program
        // printed before it blocked) is not yet settled: not waiting yet.
        let awaiting = state.awaiting && self.quiet_for() >= INPUT_SETTLE;
        (awaiting, state.program)
    }

    /// A look at a quiet job for wait `id`, on the service's timer: ends the wait if the
    /// job waits for input (see [`Job::awaiting_input`]); otherwise looks again when the
    /// settle time after the latest output has passed, or, while the job stays quiet
    /// and busy, after a pause that doubles up to [`INPUT_RECHECK_MAX`].
    pub(super) fn look_for_input(self: &Arc<Self>, id: u64, pause: Duration) {
        if !self.waiting(id) {
            return;
        }
        let quiet = self.quiet_for();
        let now = tokio::time::Instant::now();
        if quiet < INPUT_SETTLE {
            self.look_for_input_at(now + (INPUT_SETTLE - quiet), id, INPUT_SETTLE);
        } else if self.awaiting_input() {
            self.end_wait(id, WaitStatus::AwaitingInput);
        } else {
            self.look_for_input_at(now + pause, id, (pause * 2).min(INPUT_RECHECK_MAX));
        }
    }

    /// Queues input for the writer task, within [`crate::base::limits::MAX_QUEUED_INPUT_BYTES`].
    pub fn send_input(&self, input: Input) -> Result<(), Refused> {
        let len = match &input {
            Input::Data(data) => data.len(),
            Input::Close => 0,
        };
        self.queued_input.reserve(len)?;
        if len > 0 {
            self.unanswered_input.store(true, Ordering::Relaxed);
        }
        self.input.send(input).map_err(|_| {
            self.queued_input.release(len);
            Refused::Closed
        })
    }

    /// The queue the writer task takes input from (it releases what it writes).
    pub fn queued_input(&self) -> Arc<InputQueue> {
        self.queued_input.clone()
    }

    /// Whether `len` more bytes fit in the input queue now.
    pub fn input_room(&self, len: usize) -> Result<(), Refused> {
        self.queued_input.room(len)
    }

    /// Drops the input still queued and stops the writer (a kill, a removal).
    pub fn drop_input(&self) {
        self.queued_input.drop_all();
    }

    /// Writes `data` to the terminal now, on the caller's thread, when nothing is queued
    /// before it; whatever the terminal does not take at once (or all of it, when input
    /// is queued or this is not a PTY job) goes to the writer task, in order. Saves
    /// `sendInput` a hand-over to the writer task before the program can see its input.
    pub fn write_now(&self, data: Vec<u8>) -> Result<(), Refused> {
        let mut written = 0;
        if self.queued_input.is_empty() {
            let pty = lock(&self.pty);
            if let Some(terminal) = pty.as_ref() {
                self.unanswered_input.store(true, Ordering::Relaxed);
                written = terminal.write_some(&data);
            }
        }
        if written < data.len() {
            self.send_input(Input::Data(data[written..].to_vec()))?;
        }
        Ok(())
    }

    pub fn resize(&self, cols: u16, rows: u16) -> std::io::Result<()> {
        if let Some(terminal) = lock(&self.pty).as_ref() {
            terminal.resize(cols, rows)?;
        }
        self.state().output.resize(cols, rows);
        Ok(())
    }
}
