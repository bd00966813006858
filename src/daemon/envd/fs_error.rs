//! A file call's failure (filesystem.rs, files.rs and what they use): its code, which
//! becomes a Connect code or the HTTP status envd's REST API gives, and its message.

use std::io;
use std::path::Path;

use crate::daemon::protocol::connect::{Code, ConnectError};

/// A file call's failure: its code becomes a Connect code (filesystem.rs) or the HTTP
/// status envd's REST API gives (files.rs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsError {
    pub code: FsCode,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsCode {
    InvalidArgument,
    NotFound,
    AlreadyExists,
    PermissionDenied,
    FailedPrecondition,
    ResourceExhausted,
    Internal,
}

impl FsCode {
    /// The status envd's REST API (/files) answers with: 404 is the SDKs'
    /// FileNotFoundError, 400 InvalidArgumentError, 507 NotEnoughSpaceError.
    pub fn http_status(self) -> u16 {
        match self {
            FsCode::InvalidArgument | FsCode::FailedPrecondition | FsCode::AlreadyExists => 400,
            FsCode::NotFound => 404,
            FsCode::PermissionDenied => 403,
            FsCode::ResourceExhausted => 507,
            FsCode::Internal => 500,
        }
    }
}

impl FsError {
    pub fn new(code: FsCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// An I/O failure on `path` (what `doing` was), coded by its cause.
    pub fn io(err: &io::Error, doing: &str, path: &Path) -> Self {
        let code = match err.raw_os_error() {
            Some(libc::ENOENT) => FsCode::NotFound,
            Some(libc::EACCES | libc::EPERM | libc::EROFS) => FsCode::PermissionDenied,
            Some(libc::EEXIST | libc::ENOTEMPTY) => FsCode::AlreadyExists,
            Some(libc::ENOTDIR | libc::EISDIR | libc::ENAMETOOLONG | libc::EINVAL | libc::EXDEV) => {
                FsCode::InvalidArgument
            }
            Some(libc::ELOOP) => FsCode::FailedPrecondition,
            Some(libc::ENOSPC | libc::EDQUOT | libc::EFBIG) => FsCode::ResourceExhausted,
            _ => FsCode::Internal,
        };
        Self::new(code, format!("{doing} '{}': {err}", path.display()))
    }
}

/// A file call's failure as the Connect error the SDKs map (not_found is their
/// FileNotFoundError; already_exists makes files.makeDir return false).
pub fn connect_error(e: &FsError) -> ConnectError {
    let code = match e.code {
        FsCode::InvalidArgument => Code::InvalidArgument,
        FsCode::NotFound => Code::NotFound,
        FsCode::AlreadyExists => Code::AlreadyExists,
        FsCode::PermissionDenied => Code::PermissionDenied,
        FsCode::FailedPrecondition => Code::FailedPrecondition,
        FsCode::ResourceExhausted => Code::ResourceExhausted,
        FsCode::Internal => Code::Internal,
    };
    ConnectError::new(code, e.message.clone())
}
