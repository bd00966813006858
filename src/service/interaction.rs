//! Talking to a running job: input (text, keys) and waits for a pattern, the exit, a
//! delay, a timeout or a prompt. The synchronous half runs on the caller's thread (see
//! `PreparedInput`), the rest on the runtime.

use std::sync::Arc;

use tokio::runtime::Handle;

use super::Service;
use crate::base::error::{ErrorCode, Result, ServiceError};
use crate::base::limits::{MAX_INPUT_BYTES, MAX_QUEUED_INPUT_BYTES};
use crate::job::keys::{parse_key, Key};
use crate::job::spawn::Mode;
use crate::job::wait::{compile_pattern, WaitSpec};
use crate::job::{Input, Job, Refused, WaitTicket};
use crate::service::request::{InputRequest, InteractionResult, WaitRequest};
use crate::service::results::{finished_interaction, interaction};

/// Told once how an interaction ended.
pub type OnInteractionDone = Box<dyn FnOnce(InteractionResult) + Send>;

/// Told once how a `send_input` ended: its input may be refused when its turn comes.
pub type OnInputDone = Box<dyn FnOnce(Result<InteractionResult>) + Send>;

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
                // Room was checked in `prepare_input`; a job that ended since takes
                // nothing, and its wait ends at the exit.
                Input::Data(data) => {
                    let _ = self.job.write_now(data);
                }
                Input::Close => {
                    let _ = self.job.send_input(Input::Close);
                }
            }
        }
        self.started = Some((turn, ticket));
    }

    /// Calls `done` with the result: when the input is written already (the usual
    /// case) from whichever thread ends the wait, with no task in between (see
    /// `job/waiting.rs`); otherwise from a task on `runtime` that awaits the job's turn.
    pub fn finish_with(mut self, runtime: &Handle, done: OnInputDone) {
        if let Some((turn, ticket)) = self.started.take() {
            let job = self.job.clone();
            let spec = std::mem::take(&mut self.spec);
            self.job.start_wait(
                ticket,
                spec,
                Box::new(move |outcome| {
                    let result = interaction(&job, outcome);
                    drop(turn);
                    done(Ok(result));
                }),
            );
            return;
        }
        runtime.spawn(async move { done(self.finish().await) });
    }

    pub async fn finish(mut self) -> Result<InteractionResult> {
        if let Some((_turn, ticket)) = self.started.take() {
            let outcome = self.job.pending(ticket, std::mem::take(&mut self.spec)).outcome().await;
            return Ok(interaction(&self.job, outcome));
        }
        let job = self.job.clone();
        let _turn = job.interaction.lock().await;
        if !job.is_running() {
            return Ok(finished_interaction(&job, self.spec.max_output));
        }
        let pending = job.begin_wait(std::mem::take(&mut self.spec));
        for input in std::mem::take(&mut self.writes) {
            // Room was checked in `prepare_input`, but `writeToPty` calls made while
            // this waited for its turn may have filled the queue since: refused out
            // loud, never dropped. An ended job takes nothing, and the wait ends at
            // its exit.
            if let Err(Refused::Full { bytes }) = job.send_input(input) {
                return Err(queue_full(bytes));
            }
        }
        let outcome = pending.outcome().await;
        Ok(interaction(&job, outcome))
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
    /// Calls `done` with the result, from whichever thread ends the wait.
    pub fn finish_with(mut self, done: OnInteractionDone) {
        if let Some(early) = self.early.take() {
            return done(early);
        }
        let Some(ticket) = self.ticket.take() else {
            return done(finished_interaction(&self.job, self.spec.max_output));
        };
        let job = self.job.clone();
        let spec = std::mem::take(&mut self.spec);
        self.job
            .start_wait(ticket, spec, Box::new(move |outcome| done(interaction(&job, outcome))));
    }
}

impl Drop for PreparedWait {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            self.job.unregister(ticket);
        }
    }
}

impl Service {
    /// Writes input (and keys) to a running job, then waits as `waitFor` does.
    pub async fn send_input(&self, handle: u32, req: InputRequest) -> Result<InteractionResult> {
        self.prepare_input(handle, req)?.finish().await
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
        let queued: usize = writes
            .iter()
            .map(|w| match w {
                Input::Data(d) => d.len(),
                Input::Close => 0,
            })
            .sum();
        if let Err(Refused::Full { bytes }) = job.input_room(queued) {
            return Err(queue_full(bytes));
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
    /// made right after this call is seen; [`PreparedWait::finish_with`] gives the result.
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
            match job.send_input(Input::Data(data)) {
                Err(Refused::Full { bytes }) => return Err(queue_full(bytes)),
                // Ended (or killed) meanwhile: a finished job ignores input.
                Ok(()) | Err(Refused::Closed) => {}
            }
        }
        Ok(())
    }
}

impl Service {
    /// Closes a pipes job's stdin once what is queued is written: the program reads
    /// end of file. A PTY job has no stdin of its own (Ctrl-D, 0x04, is its input's
    /// end): refused. A finished job ignores it.
    pub fn close_input(&self, handle: u32) -> Result<()> {
        let job = self.job(handle)?;
        if job.meta.mode == Mode::Pty {
            return Err(ServiceError::invalid(format!(
                "job {handle} runs in a terminal: send Ctrl-D (0x04) as input to end it"
            )));
        }
        if job.is_running() {
            // Refused only when the writer has ended already: the input is closed.
            let _ = job.send_input(Input::Close);
        }
        Ok(())
    }
}

/// `LIMIT_REACHED`: the program has not read what was written before.
fn queue_full(queued: usize) -> ServiceError {
    ServiceError::new(
        ErrorCode::LimitReached,
        format!(
            "the job's input queue is full: {queued} bytes wait for the program to read them (at most {MAX_QUEUED_INPUT_BYTES})"
        ),
    )
}
