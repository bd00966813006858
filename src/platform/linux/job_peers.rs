//! Whether a client of the daemon is one of the daemon's own jobs: a sandboxed job that
//! reached the daemon's socket or port could otherwise ask it to `run` a command outside
//! its sandbox (docs/daemon.md, "Who may connect"; SECURITY.md, "Sandboxed jobs").
//!
//! Decided only from what the kernel says and the job cannot change:
//! - its cgroup: where jobs are contained by cgroups (src/platform/linux/cgroup.rs),
//!   every process a job starts is in the job's cgroup, below this process's parent
//!   cgroup, and a sandboxed job cannot write itself out (the cgroup files are outside
//!   what its Landlock rules let it write). A unix peer's cgroup is read from
//!   /proc/PID/cgroup of the pid `SO_PEERCRED` gives; a TCP peer's is the cgroup its
//!   socket was created in, from sock_diag (`super::tcp_diag`);
//! - its ancestry: the daemon is a child subreaper (`become_subreaper`), so whatever a
//!   job starts stays a descendant of the daemon until it exits, however it detaches
//!   (an orphan is re-parented to the nearest subreaper above it, never past the
//!   daemon to init). That holds where no cgroup can be had (the "process-tree"
//!   containment mode: docs/reliability.md, "Containment"), and for jobs started
//!   before a launch into a cgroup was refused. A unix peer's parent links are walked
//!   from its pid; a TCP socket's holders are found by looking for its inode among the
//!   descriptors of the daemon's descendants, asked only when the cgroup cannot answer.
//!
//! Every job is refused, sandboxed or not: an unsandboxed job gains nothing by asking
//! (it could run the command itself), and one rule is simpler to trust. An unsandboxed
//! job can get past the checks (it may move itself out of its cgroup), which gives it
//! nothing it did not have.
//!
//! The orphans the daemon adopts as a subreaper are reaped by `reap_orphans`, which
//! leaves a job's own process to its watcher (src/platform/unix/reap.rs).
//!
//! One descendant is not a job: the daemon's own helper, the MCP server it starts as its
//! child (src/daemon/mcp_child.rs), named by its exact pid from its start until it has
//! exited (`helper_started`, `helper_exited`: the pid is let go before the helper is
//! reaped, so while it is named no other process can hold it). Its own children, if it
//! had any, would still be jobs: only that one process is excepted.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::path::Path;

use super::cgroup;

/// The pid of the daemon's helper while it lives (0: none).
static HELPER: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// `pid`, just started by the daemon as its helper, is not a job (see the module's text).
pub fn helper_started(pid: i32) {
    HELPER.store(pid, std::sync::atomic::Ordering::SeqCst);
}

/// The helper `pid` has exited (not yet reaped): it is a pid like any other again.
pub fn helper_exited(pid: i32) {
    let _ = HELPER.compare_exchange(
        pid,
        0,
        std::sync::atomic::Ordering::SeqCst,
        std::sync::atomic::Ordering::SeqCst,
    );
}

/// Makes this process a child subreaper: what its children leave behind is re-parented
/// to it. For the daemon only (a Node process hosting the addon keeps libuv's rules).
pub fn become_subreaper() -> io::Result<()> {
    crate::platform::unix::reap::adopting_orphans();
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Reaps the exited orphans this process adopted (never a job's own process: its
/// watcher reaps it). Called on each SIGCHLD. The daemon's other children are its
/// jobs' own processes (registered at launch) and the watchdog, which nobody waits for.
/// Returns the pid it stopped at when the one exited child it saw was a job's own
/// process, not reaped by its watcher yet: the caller looks again shortly, passing that
/// pid back as `deferred` (a SIGCHLD is taken at once, usually before the job's watcher
/// has reaped: listing every child then was the reaper's main cost per spawn). The same
/// pid seen again (a watcher that will not reap it soon) no longer stops the search.
pub fn reap_orphans(deferred: Option<i32>) -> Option<i32> {
    let Some(zombie) = zombie_child() else {
        // The usual case: the SIGCHLD was a job's own exit, reaped by its watcher
        // already. No /proc scan then.
        return None;
    };
    if deferred != Some(zombie) && crate::platform::unix::reap::is_launched(zombie) {
        return Some(zombie);
    }
    let me = std::process::id() as i32;
    crate::platform::unix::reap::reap_adopted(|| match own_children() {
        Some(children) => children
            .into_iter()
            .filter(|&pid| matches!(stat(pid), Ok((ppid, b'Z')) if ppid == me))
            .collect(),
        None => parents()
            .into_iter()
            .filter(|&(pid, (ppid, state))| ppid == me && state == b'Z' && pid != me)
            .map(|(pid, _)| pid)
            .collect(),
    });
    None
}

/// This process's children, zombies included, from the kernel's own lists: each of its
/// threads' `/proc/self/task/TID/children` (a child is on the list of the thread that
/// forked it, an adopted orphan on that of the thread the kernel chose). A handful of
/// reads, where the whole of /proc (every process of the machine: hundreds while builds
/// run) was read per job's exit, on a thread of its own but with launches held back
/// (`reap_adopted`'s gate) and both cores taxed: that scan was most of what a spawn
/// through the daemon cost over one in process (BENCHMARKS.md, "the daemon at in-process
/// speed"). `None` where the kernel has no such lists (built without
/// `CONFIG_PROC_CHILDREN`): the caller scans /proc then. A child that exits while a list
/// is read may be missed by that reading; it is a zombie until the next SIGCHLD's.
fn own_children() -> Option<Vec<i32>> {
    let threads = fs::read_dir("/proc/self/task").ok()?;
    let mut children = Vec::new();
    for thread in threads.flatten() {
        match fs::read_to_string(thread.path().join("children")) {
            Ok(list) => children.extend(list.split_ascii_whitespace().filter_map(|pid| pid.parse::<i32>().ok())),
            // The thread ended since the listing: its children went to another's list,
            // read too (or about to be: the next SIGCHLD's reading has them).
            Err(_) if !thread.path().exists() => {}
            // No such list where the thread is (or another failure): the full scan.
            Err(_) => return None,
        }
    }
    Some(children)
}

/// A child of this process that has exited and waits to be reaped, if any (looked at,
/// not reaped: `WNOWAIT`).
fn zombie_child() -> Option<i32> {
    // SAFETY: a zeroed siginfo_t is valid; waitid writes into our local only.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::waitid(libc::P_ALL, 0, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT) };
    // SAFETY: si_pid is valid to read for a waitid result (zero when none has exited).
    let pid = unsafe { info.si_pid() };
    (rc == 0 && pid != 0).then_some(pid)
}

/// Whether the process `pid` is one of this process's jobs (or a process a job
/// started): in a cgroup of our jobs, or a descendant of ours. An error (its /proc
/// entry unreadable but for its exit) is for the caller to refuse.
pub fn is_job_process(pid: i32) -> io::Result<bool> {
    let me = std::process::id() as i32;
    if pid == me {
        return Ok(false);
    }
    if pid != 0 && pid == HELPER.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(false);
    }
    if let Some(path) = cgroup::cgroup_of(pid) {
        if cgroup::holds_path(&path) {
            return Ok(true);
        }
    }
    // Parent links up to init; bounded, since pids read one by one could form a loop
    // (a process exits, its pid is reused by a descendant).
    let mut here = pid;
    for _ in 0..4096 {
        let (ppid, _) = stat(here)?;
        if ppid == me {
            return Ok(true);
        }
        if ppid <= 1 {
            return Ok(false);
        }
        here = ppid;
    }
    Err(io::Error::other("the parent links do not end"))
}

/// Whether the TCP socket `inode` (created in the cgroup `cgroup_id`, where known) is
/// a job's: created in a cgroup of our jobs, or held open by a descendant of ours.
pub fn is_job_socket(inode: u64, cgroup_id: Option<u64>) -> bool {
    if let Some(id) = cgroup_id {
        if cgroup::holds_id(id) {
            return true;
        }
        // Every job so far in a cgroup: a job's process is in one and its sockets too
        // (one it did not create was handed to it by the process that did).
        if cgroup::every_job_contained() {
            return false;
        }
    }
    let me = std::process::id() as i32;
    let wanted = format!("socket:[{inode}]");
    descendants(me).into_iter().any(|pid| holds(pid, &wanted))
}

/// Whether the process has a descriptor open on `target` (a /proc/PID/fd link text).
fn holds(pid: i32, target: &str) -> bool {
    let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten()
        .any(|fd| fs::read_link(fd.path()).is_ok_and(|link| link == Path::new(target)))
}

/// Every process descending from `root`, from one reading of /proc.
fn descendants(root: i32) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for (pid, (ppid, _)) in parents() {
        children.entry(ppid).or_default().push(pid);
    }
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    let mut pending = vec![root];
    while let Some(pid) = pending.pop() {
        for &child in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
            if seen.insert(child) {
                found.push(child);
                pending.push(child);
            }
        }
    }
    found
}

/// Each process's parent and state letter.
fn parents() -> HashMap<i32, (i32, u8)> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return HashMap::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| Some((pid, stat(pid).ok()?)))
        .collect()
}

/// The parent pid and state letter of a process, from /proc/PID/stat (after the name
/// in parentheses, which may itself hold spaces and parentheses).
fn stat(pid: i32) -> io::Result<(i32, u8)> {
    let text = fs::read(format!("/proc/{pid}/stat"))?;
    let close = text
        .iter()
        .rposition(|&b| b == b')')
        .ok_or_else(|| io::Error::other("bad /proc stat"))?;
    let rest = std::str::from_utf8(text.get(close + 1..).unwrap_or_default()).map_err(io::Error::other)?;
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next().and_then(|s| s.bytes().next());
    let ppid = fields.next().and_then(|p| p.parse().ok());
    match (state, ppid) {
        (Some(state), Some(ppid)) => Ok((ppid, state)),
        _ => Err(io::Error::other("bad /proc stat")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_ours_and_others_are_not() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        assert!(is_job_process(child.id() as i32).unwrap());
        assert!(!is_job_process(1).unwrap());
        assert!(!is_job_process(std::process::id() as i32).unwrap());
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn a_childs_socket_is_found_among_its_descriptors() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port}; sleep 30");
        let mut child = std::process::Command::new("bash")
            .arg("-c")
            .arg(script)
            .spawn()
            .unwrap();
        let (accepted, peer) = listener.accept().unwrap();
        let local = accepted.local_addr().unwrap();
        let socket = super::super::tcp_diag::tcp_peer(local, peer).unwrap().unwrap();
        // Asked without the cgroup: the descriptor scan answers.
        assert!(is_job_socket(socket.inode, None));
        assert!(!is_job_socket(1, None));
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn own_children_lists_a_zombie_forked_by_another_thread() {
        // A child forked from a thread of ours other than this one, exited and not yet
        // waited for: a zombie on that thread's list, which the reaper must see. The
        // thread stays alive meanwhile (a thread's children go to another's list when
        // it ends).
        let (forked, child) = std::sync::mpsc::channel();
        let (checked, done) = std::sync::mpsc::channel::<()>();
        let forker = std::thread::spawn(move || {
            forked
                .send(std::process::Command::new("true").spawn().unwrap())
                .unwrap();
            let _ = done.recv();
        });
        let mut child = child.recv().unwrap();
        let pid = child.id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !matches!(stat(pid), Ok((_, b'Z'))) {
            assert!(std::time::Instant::now() < deadline, "the child never exited");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let children = own_children().expect("this kernel lists children (CONFIG_PROC_CHILDREN)");
        checked.send(()).unwrap();
        forker.join().unwrap();
        assert!(children.contains(&pid), "{pid} not in {children:?}");
        child.wait().unwrap();
        assert!(!own_children().unwrap().contains(&pid));
    }

    #[test]
    fn reads_stat_with_a_strange_name() {
        let (ppid, state) = stat(std::process::id() as i32).unwrap();
        assert!(ppid >= 0);
        assert!(state.is_ascii_uppercase());
    }
}
