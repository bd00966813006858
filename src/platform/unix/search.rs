//! The parts of a job's process search that Linux and macOS share; only where the
//! process table is read from differs (`/proc` or libproc).

use std::collections::{HashMap, HashSet};

/// The job's processes among `procs` (all started since the job): the job's own, those
/// in its session or group, those `also` names (its cgroup's, its marker's), and every
/// process descending from one of them by parent links.
pub fn members(procs: &[Link], job_pid: i32, also: impl Fn(i32) -> bool) -> HashSet<i32> {
    let mut members: HashSet<i32> = procs
        .iter()
        .filter(|p| p.pid == job_pid || p.session == job_pid || p.pgrp == job_pid || also(p.pid))
        .map(|p| p.pid)
        .collect();
    let parents: HashMap<i32, i32> = procs.iter().map(|p| (p.pid, p.ppid)).collect();
    add_descendants(job_pid, &mut members, &parents);
    members
}

/// Adds to `members` every process descending from `job_pid` or from a member, by
/// parent links (`parents`: pid → parent pid), to a fixed point (the list is short).
fn add_descendants(job_pid: i32, members: &mut HashSet<i32>, parents: &HashMap<i32, i32>) {
    loop {
        let before = members.len();
        for (&pid, &ppid) in parents {
            if (ppid == job_pid || members.contains(&ppid)) && !members.contains(&pid) {
                members.insert(pid);
            }
        }
        if members.len() == before {
            break;
        }
    }
}

/// The processes left running in the background: the roots of what survives the
/// job's own process (those whose parent is not one of them).
pub fn background_roots(procs: &[Link], job_pid: i32) -> Vec<u32> {
    let pids: HashSet<i32> = procs.iter().map(|p| p.pid).collect();
    let mut roots: Vec<u32> = procs
        .iter()
        .filter(|p| p.pid != job_pid && !pids.contains(&p.ppid))
        .map(|p| p.pid as u32)
        .collect();
    roots.sort_unstable();
    roots
}

/// One process as the searches here see it.
#[derive(Clone, Copy, Debug)]
pub struct Link {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    /// SIGHUP is ignored (what `nohup` sets up); false where the platform cannot tell.
    pub ignores_hangup: bool,
    /// SIGINT is ignored: what a shell without job control (`bash -c`) does to a
    /// command it runs with `&`; false where the platform cannot tell.
    pub ignores_interrupt: bool,
}

/// Of a running job's processes (`procs`, the job's own `job_pid` among them), the roots
/// of those that left it:
/// - in another session (`setsid`);
/// - no longer descending from the job's process (a double fork, `setsid -f`: their
///   parent ended);
/// - SIGHUP ignored while their parent heeds it (`nohup`, in a job that heeds hangups:
///   a pipes job; a PTY job's processes all ignore it, see `reset_signals` in
///   `child_setup.rs`);
/// - run in the background (SIGINT ignored while their parent heeds it) and holding none
///   of the job's terminal or pipes on descriptors 0–2 (`cmd >/dev/null 2>&1 &`, and
///   `nohup cmd &` in a PTY job, where `nohup` moves them off the terminal).
///
/// `holds_job_io(pid)` answers the last question; it is asked only of background
/// processes. What a detached process starts is detached with it; only the roots are
/// named, as `background_roots` names them. If the job's process is not among `procs`
/// (it ended), all are detached.
pub fn detached_roots(procs: &[Link], job_pid: i32, holds_job_io: impl Fn(i32) -> bool) -> Vec<u32> {
    let by_pid: HashMap<i32, &Link> = procs.iter().map(|p| (p.pid, p)).collect();
    let Some(job) = by_pid.get(&job_pid) else {
        return background_roots(procs, job_pid);
    };
    let leaves = |p: &Link| -> bool {
        let Some(parent) = by_pid.get(&p.ppid) else { return true };
        p.session != job.session
            || (p.ignores_hangup && !parent.ignores_hangup)
            || (p.ignores_interrupt && !parent.ignores_interrupt && !holds_job_io(p.pid))
    };
    // A process is detached if it left, or if an ancestor below the job's process did.
    // The walk is bounded by the list's length: pids read at different moments could
    // in principle form a loop.
    let detached = |p: &Link| -> bool {
        let mut here = *p;
        for _ in 0..procs.len() {
            if here.pid == job_pid {
                return false;
            }
            if leaves(&here) {
                return true;
            }
            match by_pid.get(&here.ppid) {
                Some(parent) => here = **parent,
                None => return true,
            }
        }
        false
    };
    let detached: Vec<Link> = procs.iter().filter(|p| detached(p)).copied().collect();
    background_roots(&detached, job_pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(pid: i32, ppid: i32, session: i32, ignores_hangup: bool) -> Link {
        Link {
            pid,
            ppid,
            pgrp: session,
            session,
            ignores_hangup,
            ignores_interrupt: false,
        }
    }

    fn background(pid: i32, ppid: i32, session: i32) -> Link {
        Link {
            ignores_interrupt: true,
            ..link(pid, ppid, session, false)
        }
    }

    #[test]
    fn detached_roots_name_what_left_the_job() {
        let procs = [
            link(10, 1, 10, false),  // the job's shell
            link(11, 10, 10, false), // a foreground child
            link(12, 11, 10, false), // its child
            link(20, 1, 20, false),  // `setsid -f`: another session, parent gone
            link(21, 20, 20, false), // started by it: not a root
            link(30, 1, 10, false),  // a double fork that kept the session
            link(40, 10, 10, true),  // `nohup ... &`: heeds no hangup, its parent does
            link(41, 40, 10, true),  // inherited the ignored SIGHUP: not a root
            link(50, 10, 50, false), // `setsid` while the shell, its parent, lives
            background(60, 10, 10),  // `cmd >/dev/null 2>&1 &`: off the job's output
            background(61, 10, 10),  // `cmd &`: still writes to the job's output
        ];
        assert_eq!(detached_roots(&procs, 10, |pid| pid == 61), vec![20, 30, 40, 50, 60]);
    }

    #[test]
    fn a_job_that_ignores_hangup_itself_detaches_nothing_by_it() {
        let procs = [link(10, 1, 10, true), link(11, 10, 10, true)];
        assert_eq!(detached_roots(&procs, 10, |_| true), Vec::<u32>::new());
    }

    #[test]
    fn once_the_job_ended_all_is_detached() {
        let procs = [link(11, 1, 10, false), link(12, 11, 10, false)];
        assert_eq!(detached_roots(&procs, 10, |_| true), vec![11]);
    }
}
