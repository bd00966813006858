//! The parts of a job's process search that Linux and macOS share; only where the
//! process table is read from differs (`/proc` or libproc).

use std::collections::{HashMap, HashSet};

/// Adds to `members` every process descending from `job_pid` or from a member, by
/// parent links (`parents`: pid → parent pid), to a fixed point (the list is short).
pub fn add_descendants(job_pid: i32, members: &mut HashSet<i32>, parents: &HashMap<i32, i32>) {
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

/// The processes left running in the background, given as (pid, parent pid): the roots
/// of what survives the job's own process (those whose parent is not one of them).
pub fn background_roots(procs: &[(i32, i32)], job_pid: i32) -> Vec<u32> {
    let pids: HashSet<i32> = procs.iter().map(|&(pid, _)| pid).collect();
    let mut roots: Vec<u32> = procs
        .iter()
        .filter(|&&(pid, ppid)| pid != job_pid && !pids.contains(&ppid))
        .map(|&(pid, _)| pid as u32)
        .collect();
    roots.sort_unstable();
    roots
}
