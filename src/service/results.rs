//! The answers the service gives, built from a job's state: `RunResult`,
//! `InteractionResult`, `ProcessInfo` and history entries (the types are in `request`
//! and `history`).

use std::sync::Arc;

use crate::job::spawn::Mode;
use crate::job::wait::WaitStatus;
use crate::job::{Job, JobMeta, JobState, JobStatus};
use crate::output::persist::unix_millis;
use crate::output::Which;
use crate::platform::is_alive;
use crate::service::history::HistoryEntry;
use crate::service::request::{InteractionResult, ProcessInfo, RunResult};

fn duration_ms(job: &Job, state: &JobState) -> u64 {
    state.duration.unwrap_or_else(|| job.meta.started.elapsed()).as_millis() as u64
}

pub fn run_result(job: &Arc<Job>, limit: usize, matched: Option<String>) -> RunResult {
    let mut state = job.state();
    // Before the excerpts' markers name a file: is it still there?
    state.output.check_files();
    let separate = job.meta.mode == Mode::Pipes;
    let stdout = state.output.excerpt(Which::Stdout, limit);
    let stderr = if separate {
        state.output.excerpt(Which::Stderr, limit)
    } else {
        Default::default()
    };
    let output = state.output.excerpt(Which::Combined, limit);
    state.delivered = state.output.text_len();
    RunResult {
        handle: job.meta.handle,
        pid: Some(job.meta.pid),
        command: job.meta.command.clone(),
        directory: job.meta.directory.clone(),
        status: state.status,
        truncated: stdout.truncated || stderr.truncated || output.truncated,
        stdout: stdout.text,
        stderr: stderr.text,
        output: output.text,
        exit_code: state.exit_code,
        signal: state.signal,
        error: state.error.clone(),
        background_pids: state.background_pids.clone(),
        matched,
        total_bytes: state.output.total_bytes(),
        output_dir: state.output.kept_dir().map(|d| d.display().to_string()),
        persist_error: state.output.persist_error(),
        started_at: unix_millis(job.meta.started_at),
        duration_ms: duration_ms(job, &state),
        awaiting_input: false,
        sandbox: job.meta.sandbox_report(),
    }
}

pub fn interaction(job: &Arc<Job>, outcome: crate::job::wait::WaitOutcome) -> InteractionResult {
    let state = job.state();
    InteractionResult {
        handle: job.meta.handle,
        status: outcome.status,
        output: outcome.output,
        matched: outcome.matched,
        exit_code: state.exit_code,
        signal: state.signal,
        running: state.status == JobStatus::Running,
        truncated: outcome.truncated,
    }
}

pub fn finished_interaction(job: &Arc<Job>, limit: usize) -> InteractionResult {
    let output = job.take_undelivered(limit);
    let state = job.state();
    InteractionResult {
        handle: job.meta.handle,
        status: WaitStatus::Exited,
        output,
        matched: None,
        exit_code: state.exit_code,
        signal: state.signal,
        running: false,
        truncated: false,
    }
}

/// `detached`: what `detached_pids` found for a running job (ask before taking the
/// state: it reads the process table). An ended job reports those of its
/// `background_pids` still alive: what it left running, now.
pub fn process_info(job: &Arc<Job>, detached: Option<Vec<u32>>) -> ProcessInfo {
    let (awaiting_input, foreground) = job.input_state();
    let mut state = job.state();
    state.output.check_files();
    let background_pids = state.background_pids.clone();
    let detached_pids = match state.status {
        JobStatus::Running => detached.unwrap_or_default(),
        _ => background_pids
            .iter()
            .copied()
            .filter(|&pid| is_alive(pid as i32))
            .collect(),
    };
    ProcessInfo {
        awaiting_input,
        foreground,
        handle: job.meta.handle,
        pid: job.meta.pid,
        command: job.meta.command.clone(),
        description: job.meta.description.clone(),
        directory: job.meta.directory.clone(),
        mode: job.meta.mode,
        status: state.status,
        started_at: unix_millis(job.meta.started_at),
        duration_ms: duration_ms(job, &state),
        exit_code: state.exit_code,
        signal: state.signal,
        output_bytes: state.output.total_bytes(),
        last_line: state.output.last_line(),
        background_pids,
        detached_pids,
        persist_error: state.output.persist_error(),
        sandbox: job.meta.sandbox_report(),
        containment: job.meta.containment.mode(),
        kill_reason: state.kill_note.clone(),
    }
}

pub fn history_entry(meta: &JobMeta, state: &JobState, output: String) -> HistoryEntry {
    HistoryEntry {
        handle: meta.handle,
        command: meta.command.clone(),
        args: meta.args.clone(),
        directory: meta.directory.clone(),
        status: state.status,
        started_at: unix_millis(meta.started_at),
        duration_ms: state.duration.map_or(0, |d| d.as_millis() as u64),
        exit_code: state.exit_code,
        signal: state.signal,
        error: state.error.clone(),
        output,
    }
}
