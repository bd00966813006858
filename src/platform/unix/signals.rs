//! Ending processes with signals: each job is a session leader, so its process group
//! is its pid.

use crate::platform::{Ending, JobIdentity, ProcInfo};

pub fn signal(pid: i32, sig: i32) {
    if pid > 1 {
        // SAFETY: kill(2) with a positive pid; failure (already gone) is fine.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

pub fn signal_group(pgid: i32, sig: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) on a process group we created; failure is fine.
        unsafe {
            libc::kill(-pgid, sig);
        }
    }
}

/// Signals the job's group and each listed process: SIGTERM to ask, SIGKILL to end.
pub fn end_processes(job: &JobIdentity<'_>, procs: &[ProcInfo], ending: Ending) {
    let sig = match ending {
        Ending::Politely => libc::SIGTERM,
        Ending::Now => libc::SIGKILL,
    };
    signal_group(job.pid, sig);
    for p in procs {
        signal(p.pid, sig);
    }
}

/// Whether any process is still in the job's process group.
pub fn group_exists(pgid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks; it sends nothing.
    pgid > 1 && unsafe { libc::kill(-pgid, 0) } == 0
}
