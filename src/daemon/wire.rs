//! The daemon's answers as JSON: the same objects, field names and `null`s the napi
//! binding gives JS (src/binding/types.rs, index.d.ts), so a client can hand them on
//! unchanged. Handles are the daemon's: `handle` maps a service's own to them.

use serde_json::{json, Value};

use crate::base::error::ServiceError;
use crate::job::events::OutputEvent;
use crate::job::kill::KillReport;
use crate::job::JobStatus;
use crate::output::cells::{CellRun, ScreenCells};
use crate::output::read::OutputChunk;
use crate::policy::CommandCheck;
use crate::sandbox::Enforced;
use crate::service::history::HistoryEntry;
use crate::service::request::{InteractionResult, ProcessInfo, RunResult};

/// A `RunResult`'s status: `awaiting_input` for a running job waiting at its terminal.
fn run_status(status: JobStatus, awaiting_input: bool) -> &'static str {
    if awaiting_input {
        "awaiting_input"
    } else {
        status.as_str()
    }
}

pub fn sandbox(e: Option<Enforced>) -> Value {
    let Some(e) = e else { return Value::Null };
    json!({
        "mechanism": e.mechanism.as_str(),
        "abi": e.abi,
        "write": e.write,
        "read": e.read,
        "readOnly": e.read_only,
        "tmpdir": e.tmpdir,
        "network": e.network,
        "tcpPorts": e.tcp_ports,
        "filesystem": e.filesystem,
        "tcp": e.tcp,
        "scoping": e.scoping,
        "seccomp": e.seccomp,
        "unixSockets": e.unix_sockets,
        "notes": e.notes,
        "envDropped": e.env_dropped,
        "restored": e.restored,
        "readDenied": e.read_denied,
        "sysvIpc": e.sysv_ipc,
    })
}

pub fn run_result(r: RunResult, handle: u32) -> Value {
    json!({
        "handle": handle,
        "pid": r.pid,
        "command": r.command,
        "directory": r.directory,
        "status": run_status(r.status, r.awaiting_input),
        "stdout": r.stdout,
        "stderr": r.stderr,
        "output": r.output,
        "exitCode": r.exit_code,
        "signal": r.signal,
        "error": r.error,
        "backgroundPids": r.background_pids,
        "matched": r.matched,
        "truncated": r.truncated,
        "totalBytes": r.total_bytes,
        "outputDir": r.output_dir,
        "persistError": r.persist_error,
        "startedAt": r.started_at,
        "durationMs": r.duration_ms,
        "awaitingInput": r.awaiting_input,
        "sandbox": sandbox(r.sandbox),
    })
}

pub fn interaction(r: InteractionResult, handle: u32) -> Value {
    json!({
        "handle": handle,
        "status": r.status.as_str(),
        "output": r.output,
        "matched": r.matched,
        "exitCode": r.exit_code,
        "signal": r.signal,
        "running": r.running,
        "truncated": r.truncated,
    })
}

/// `attached`: `this`, `other` or `none` (who started the job, seen from the caller).
pub fn process_info(p: ProcessInfo, handle: u32, attached: &str) -> Value {
    json!({
        "handle": handle,
        "pid": p.pid,
        "command": p.command,
        "description": p.description,
        "directory": p.directory,
        "mode": p.mode.as_str(),
        "status": p.status.as_str(),
        "startedAt": p.started_at,
        "durationMs": p.duration_ms,
        "exitCode": p.exit_code,
        "signal": p.signal,
        "outputBytes": p.output_bytes,
        "lastLine": p.last_line,
        "backgroundPids": p.background_pids,
        "detachedPids": p.detached_pids,
        "awaitingInput": p.awaiting_input,
        "foreground": p.foreground,
        "persistError": p.persist_error,
        "sandbox": sandbox(p.sandbox),
        "containment": p.containment.as_str(),
        "attached": attached,
        "killReason": p.kill_reason,
    })
}

pub fn kill_result(r: KillReport, handle: u32) -> Value {
    json!({
        "handle": handle,
        "status": r.status.as_str(),
        "exitCode": r.exit_code,
        "signal": r.signal,
        "escalated": r.escalated,
        "survivors": r.survivors,
    })
}

pub fn history_entry(e: HistoryEntry, handle: u32) -> Value {
    json!({
        "handle": handle,
        "command": e.command,
        "args": e.args,
        "directory": e.directory,
        "status": e.status.as_str(),
        "startedAt": e.started_at,
        "durationMs": e.duration_ms,
        "exitCode": e.exit_code,
        "signal": e.signal,
        "error": e.error,
        "output": e.output,
    })
}

pub fn output_event(e: OutputEvent, handle: u32) -> Value {
    json!({
        "handle": handle,
        "totalBytes": e.total_bytes,
        "textLength": e.text_length,
        "exited": e.exited,
        "status": e.status.as_str(),
        "exitCode": e.exit_code,
        "signal": e.signal,
    })
}

pub fn output_chunk(c: OutputChunk) -> Value {
    json!({ "text": c.text, "next": c.next, "omitted": c.omitted })
}

fn cursor(c: &ScreenCells) -> Value {
    json!({ "x": c.cursor.0, "y": c.cursor.1, "visible": c.cursor_visible })
}

fn cell_run(r: CellRun) -> Value {
    json!({
        "text": r.text, "fg": r.fg, "bg": r.bg, "bold": r.bold, "italic": r.italic,
        "underline": r.underline, "dim": r.dim, "inverse": r.inverse,
    })
}

pub fn screen(c: ScreenCells) -> Value {
    let cursor = cursor(&c);
    let lines: Vec<Value> = c
        .lines
        .into_iter()
        .map(|line| Value::Array(line.into_iter().map(cell_run).collect()))
        .collect();
    json!({
        "cols": c.cols, "rows": c.rows, "cursor": cursor,
        "alternateScreen": c.alternate_screen, "lines": lines,
    })
}

/// `getScreenPacked`'s shape with plain arrays where JS has `Uint32Array`s (JSON has
/// no typed arrays; the client makes them).
pub fn packed_screen(c: ScreenCells) -> Value {
    let cursor = cursor(&c);
    let mut text = String::new();
    let mut line_runs = Vec::new();
    let (mut lengths, mut flags, mut fg, mut bg) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut colors: Vec<String> = vec![String::new()];
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::from([(String::new(), 0)]);
    let mut index = |colour: String| -> usize {
        let next = colors.len();
        *seen.entry(colour).or_insert_with_key(|colour| {
            colors.push(colour.clone());
            next
        })
    };
    for line in c.lines {
        line_runs.push(line.len());
        for run in line {
            lengths.push(run.text.encode_utf16().count());
            text.push_str(&run.text);
            flags.push(
                u32::from(run.bold)
                    | u32::from(run.italic) << 1
                    | u32::from(run.underline) << 2
                    | u32::from(run.dim) << 3
                    | u32::from(run.inverse) << 4,
            );
            fg.push(index(run.fg));
            bg.push(index(run.bg));
        }
    }
    json!({
        "cols": c.cols, "rows": c.rows, "cursor": cursor, "alternateScreen": c.alternate_screen,
        "text": text, "lineRuns": line_runs, "runLengths": lengths, "runFlags": flags,
        "runFg": fg, "runBg": bg, "colors": colors,
    })
}

pub fn command_check(c: CommandCheck) -> Value {
    json!({
        "decision": c.decision.as_str(),
        "roots": c.roots,
        "subcommands": c.subcommands,
        "hasSubstitution": c.has_substitution,
        "hasRedirection": c.has_redirection,
        "reason": c.reason,
    })
}

/// An error reply's `error` object: the in-process error's `code` and `message`.
pub fn error(e: &ServiceError) -> Value {
    json!({ "code": e.code.as_str(), "message": e.message })
}
