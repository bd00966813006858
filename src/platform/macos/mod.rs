//! macOS: jobs started by `fork()` running the same child steps as Linux
//! (src/platform/unix/fork.rs), exits watched through a kqueue per job (EVFILT_PROC),
//! processes found with libproc and `sysctl(KERN_PROCARGS2)`, the foreground program
//! named but no waiting-for-input detection, and a watchdog process that ends every job
//! when Node dies. What holds and what does not, against Linux: docs/macos.md.

pub mod child;
pub mod input_wait;
pub mod procargs;
pub mod process_tree;
pub mod seatbelt;
pub mod watchdog;

use std::ffi::{CStr, OsStr};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

pub use super::unix::{
    containment_mode, end_processes, group_exists, open_directory, spawn, Containment, PipeReader, PipeWriter, Terminal,
};
pub use child::ChildProcess;
pub use input_wait::program_name;
pub use process_tree::{background_roots, detached_roots, is_alive, job_processes, start_ticks, ProcInfo, Snapshot};

/// The path of an open file, as the kernel names it now (`F_GETPATH`).
pub fn opened_path(file: &File) -> Option<PathBuf> {
    let mut buf = [0u8; libc::MAXPATHLEN as usize];
    // SAFETY: F_GETPATH writes a NUL-terminated path of at most MAXPATHLEN bytes.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETPATH, buf.as_mut_ptr()) } < 0 {
        return None;
    }
    let path = CStr::from_bytes_until_nul(&buf).ok()?;
    Some(PathBuf::from(OsStr::from_bytes(path.to_bytes())))
}
