//! Checking what a caller asks for before anything starts: the service's settings, a
//! run request, a terminal size, and the limit on running jobs.

use std::path::PathBuf;

use super::Service;
use crate::base::error::{ErrorCode, Result, ServiceError};
use crate::base::limits::{
    MAX_COMMAND_BYTES, MAX_SCREEN_CELLS, MAX_SCROLLBACK_CELLS, MAX_SESSION_ID_LEN, MAX_TERMINAL_SIZE,
};
use crate::base::sync::lock;
use crate::job::spawn::{directory, env};
use crate::job::wait::compile_pattern;
use crate::service::request::RunRequest;

impl Service {
    /// Checks a request and the job limit; returns the compiled pattern and directory.
    pub(super) fn admit(&self, req: &RunRequest) -> Result<(Option<crate::job::wait::Pattern>, directory::WorkingDir)> {
        validate_run(req)?;
        let pattern = req.callback_pattern.as_deref().map(compile_pattern).transpose()?;
        let workdir = directory::resolve(&self.inner.root, self.inner.root_id, req.directory.as_deref())?;
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
}

pub(super) fn valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_SESSION_ID_LEN
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
pub(super) fn default_io_dir() -> PathBuf {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    home.join(".gemini").join("io")
}

/// A terminal of `cols` × `rows` keeping `scrollback` lines: each side in range, and
/// its cells within the memory budget (`MAX_SCREEN_CELLS`, `MAX_SCROLLBACK_CELLS`).
pub(super) fn validate_size(cols: u16, rows: u16, scrollback: usize) -> Result<()> {
    if cols == 0 || rows == 0 || cols > MAX_TERMINAL_SIZE || rows > MAX_TERMINAL_SIZE {
        return Err(ServiceError::invalid(format!(
            "terminal size {cols}x{rows} is out of range (1 to {MAX_TERMINAL_SIZE} each)"
        )));
    }
    let screen = usize::from(cols) * usize::from(rows);
    if screen > MAX_SCREEN_CELLS {
        return Err(ServiceError::invalid(format!(
            "terminal size {cols}x{rows} is {screen} cells; at most {MAX_SCREEN_CELLS} (cols × rows)"
        )));
    }
    let kept = usize::from(cols).saturating_mul(scrollback);
    if kept > MAX_SCROLLBACK_CELLS {
        return Err(ServiceError::invalid(format!(
            "scrollback of {scrollback} lines at {cols} columns is {kept} cells; at most {MAX_SCROLLBACK_CELLS} (cols × scrollback)"
        )));
    }
    Ok(())
}

pub(super) fn validate_run(req: &RunRequest) -> Result<()> {
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
    // Pipes jobs have no terminal to emulate (their cols and rows only describe one).
    let scrollback = if req.mode == crate::job::spawn::Mode::Pty {
        req.scrollback
    } else {
        0
    };
    validate_size(req.cols, req.rows, scrollback)?;
    env::validate_pairs(&req.env)
}
