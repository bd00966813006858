//! Errors with a stable code: callers branch on the code, people read the message.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    ProcessNotFound,
    InvalidPattern,
    InvalidDirectory,
    SpawnFailed,
    LimitReached,
    InvalidArgument,
    /// A sandbox was asked for and this platform or kernel cannot give it.
    SandboxUnavailable,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ProcessNotFound => "PROCESS_NOT_FOUND",
            Self::InvalidPattern => "INVALID_PATTERN",
            Self::InvalidDirectory => "INVALID_DIRECTORY",
            Self::SpawnFailed => "SPAWN_FAILED",
            Self::LimitReached => "LIMIT_REACHED",
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::SandboxUnavailable => "SANDBOX_UNAVAILABLE",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceError {
    pub code: ErrorCode,
    pub message: String,
}

impl ServiceError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub fn not_found(handle: u32) -> Self {
        Self::new(ErrorCode::ProcessNotFound, format!("no process with handle {handle}"))
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, message)
    }
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for ServiceError {}

pub type Result<T> = std::result::Result<T, ServiceError>;
