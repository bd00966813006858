//! Ending processes with signals: each job is a session leader, so its process group
//! is its pid.

use rustix::process::{kill_process, kill_process_group, test_kill_process_group, Pid, Signal};

use crate::platform::{Ending, JobIdentity, ProcInfo};

/// A pid that may be signalled: never 0 (our own group), 1 (init) or negative.
fn target(pid: i32) -> Option<Pid> {
    Pid::from_raw(pid).filter(|p| p.as_raw_nonzero().get() > 1)
}

fn signal(pid: i32, sig: Signal) {
    if let Some(pid) = target(pid) {
        // Failure (already gone) is fine.
        let _ = kill_process(pid, sig);
    }
}

fn signal_group(pgid: i32, sig: Signal) {
    if let Some(pgid) = target(pgid) {
        let _ = kill_process_group(pgid, sig);
    }
}

/// Signals the job's group and each listed process: SIGTERM to ask, SIGKILL to end.
pub fn end_processes(job: &JobIdentity<'_>, procs: &[ProcInfo], ending: Ending) {
    let sig = match ending {
        Ending::Politely => Signal::TERM,
        Ending::Now => Signal::KILL,
    };
    signal_group(job.pid, sig);
    for p in procs {
        signal(p.pid, sig);
    }
}

/// Whether any process is still in the job's process group.
pub fn group_exists(pgid: i32) -> bool {
    target(pgid).is_some_and(|pgid| test_kill_process_group(pgid).is_ok())
}
