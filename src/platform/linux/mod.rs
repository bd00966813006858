//! Linux: jobs started by a vfork-style clone (`crate::platform::unix::launch`), exits
//! watched through pidfds, processes found in `/proc`, input detected from what each
//! process is blocked in, a cgroup per job that holds whatever it starts, and a
//! watchdog process that ends every job when Node dies.

pub mod cgroup;
mod cgroup_events;
pub mod child;
pub mod clone3;
pub mod exit_ring;
pub mod input_wait;
pub mod job_peers;
pub mod process_tree;
pub mod sandbox;
mod systemd_scope;
pub mod tcp_diag;
pub mod thread_priority;
pub mod watchdog;

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use crate::platform::JobIdentity;

pub use super::unix::{group_exists, open_directory, spawn, PipeReader, PipeWriter, Terminal};
pub use cgroup::{job_cgroup_number, mode as containment_mode, Containment};
pub use child::ChildProcess;
pub use input_wait::program_name;
pub use process_tree::{background_roots, detached_roots, is_alive, job_processes, start_ticks, ProcInfo, Snapshot};

/// The path of an open file, as the kernel names it now.
pub fn opened_path(file: &File) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

/// Signals the job's group and each listed process (SIGTERM to ask, SIGKILL to end);
/// ending it now also kills everything in its cgroup, found or not.
pub fn end_processes(job: &JobIdentity<'_>, procs: &[ProcInfo], ending: crate::platform::Ending) {
    super::unix::end_processes(job, procs, ending);
    if ending == crate::platform::Ending::Now {
        job.containment.kill();
    }
}

/// Whether the job's process group, or its cgroup, still holds a process. Asked only
/// once the job's own process has ended (`crate::job::driver`, `crate::job`): an emptied
/// cgroup is then handed back for later jobs (`Containment::release_if_empty`).
pub fn anything_left(job: &JobIdentity<'_>) -> bool {
    if is_alive(job.pid) {
        return group_exists(job.pid) || job.containment.holds_processes();
    }
    anything_left_after_reap(job)
}

/// `anything_left`, asked by the job's reader once it has reaped the job's process
/// (src/job/driver.rs): no `/proc` read to learn what is known, on the exit's path.
pub fn anything_left_after_reap(job: &JobIdentity<'_>) -> bool {
    let in_cgroup = job.containment.release_if_empty();
    group_exists(job.pid) || in_cgroup
}
