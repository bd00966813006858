//! Linux: jobs started by a vfork-style clone (`crate::platform::unix::launch`), exits
//! watched through pidfds, processes found in `/proc`, input detected from what each
//! process is blocked in, and a watchdog process that ends every job when Node dies.

pub mod child;
pub mod input_wait;
pub mod process_tree;
pub mod watchdog;

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

pub use super::unix::{
    end_processes, group_exists, open_directory, spawn, Containment, PipeReader, PipeWriter, Terminal,
};
pub use child::ChildProcess;
pub use input_wait::program_name;
pub use process_tree::{background_roots, is_alive, job_processes, start_ticks, JobIdentity, ProcInfo, Snapshot};

/// The path of an open file, as the kernel names it now.
pub fn opened_path(file: &File) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}
