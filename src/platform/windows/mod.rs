//! Windows: every job in a Job Object of its own (created suspended, assigned, resumed:
//! `launch`), so `kill` ends the whole tree and every job dies with Node however Node
//! dies; PTY jobs on a pseudoconsole (`conpty`), pipes jobs on anonymous pipes read by a
//! thread each (`pipes`); exits and the end of a PTY job's processes awaited in the
//! system thread pool (`signaled`).
//!
//! What does not hold as on Linux (docs/windows.md): no polite ending (kill terminates
//! the Job Object at once), no input detection (`Terminal::input_state` is always the
//! default), `backgroundPids` is always empty (as the seeds specify for Windows).

mod child;
mod conpty;
mod directory;
pub mod job_object;
mod launch;
mod pipes;
mod processes;
mod signaled;

use std::io;
use std::sync::Arc;

pub use child::ChildProcess;
pub use conpty::Terminal;
pub use directory::{open_directory, opened_path};
pub use pipes::{PipeReader, PipeWriter};
pub use processes::{
    background_roots, end_processes, group_exists, is_alive, job_processes, program_name, start_ticks, Containment,
    JobIdentity, ProcInfo, Snapshot,
};

use crate::platform::Spawned;
use crate::spawn::{Mode, SpawnSpec};

/// Starts the job's process in a new Job Object. Must run inside a tokio runtime.
pub fn spawn(spec: &SpawnSpec<'_>) -> io::Result<Spawned> {
    let job = Arc::new(job_object::JobTree::new()?);
    let (child, pid, io) = match spec.mode {
        Mode::Pty => conpty::spawn(spec, &job)?,
        Mode::Pipes => pipes::spawn(spec, &job)?,
    };
    Ok(Spawned {
        child,
        pid,
        io,
        containment: Containment::new(job, pid),
    })
}

pub mod watchdog {
    //! Nothing to start on Windows: each job's Job Object is made with
    //! `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE` and its only handles are Node's, so when Node
    //! dies, however it dies, the kernel closes them and ends every job's processes.

    pub fn ensure_started(_owner_entry: &str) {}
}
