//! Finding every process that belongs to a job, and ending them.
//!
//! Where the job has a cgroup (`super::cgroup`), every process in it is a member: that
//! alone finds everything the job started. The three older ways stay, for jobs that
//! could not be contained (no writable cgroup2) and as a second net:
//! - its session and process group (the job is a session leader): everything it
//!   started, unless the process called `setsid`/`setpgid`;
//! - the parent chain from the job's pid: children that left the session while their
//!   parent lives;
//! - the job's environment marker (`NATIVE_SHELL_JOB=<token>.<handle>`), inherited by
//!   every descendant: double-forked daemons whose parent is gone.
//!
//! Only processes started no earlier than the job are examined, which keeps a scan
//! to a few hundred `stat` reads and makes a pid reused by an older process harmless.

use std::collections::{HashMap, HashSet};
use std::fs;

use crate::platform::unix::search;
use crate::platform::JobIdentity;
use crate::platform::JOB_MARKER;

#[derive(Clone, Debug)]
pub struct ProcInfo {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    pub state: char,
    pub start_ticks: u64,
    /// SIGHUP is ignored (what `nohup` sets up): see `detached_roots`.
    pub ignores_hangup: bool,
    /// SIGINT is ignored (what `bash -c` sets up for `cmd &`): see `detached_roots`.
    pub ignores_interrupt: bool,
}

impl ProcInfo {
    fn link(&self) -> search::Link {
        search::Link {
            pid: self.pid,
            ppid: self.ppid,
            pgrp: self.pgrp,
            session: self.session,
            ignores_hangup: self.ignores_hangup,
            ignores_interrupt: self.ignores_interrupt,
        }
    }

    pub fn is_zombie(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Parses `/proc/<pid>/stat`. The command name may hold spaces and parentheses, so
/// fields are counted from the last `)`.
pub fn read_stat(pid: i32) -> Option<ProcInfo> {
    let mut buf = [0u8; STAT_BYTES];
    let line = read_stat_line(pid, &mut buf)?;
    // Only what follows the name is read as text: a name is any bytes a process chose
    // (`prctl(PR_SET_NAME)`), and one that is not UTF-8 must not hide it from a scan.
    let after = std::str::from_utf8(&line[line.iter().rposition(|&b| b == b')')? + 1..]).ok()?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // After the name: state(0) ppid(1) pgrp(2) session(3) ... starttime(19) ...
    // sigignore(30), the ignored signals as a decimal mask (bit n-1 is signal n).
    let ignored: u64 = fields.get(30)?.parse().ok()?;
    Some(ProcInfo {
        pid,
        state: fields.first()?.chars().next()?,
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        session: fields.get(3)?.parse().ok()?,
        start_ticks: fields.get(19)?.parse().ok()?,
        ignores_hangup: ignored & (1 << (libc::SIGHUP - 1)) != 0,
        ignores_interrupt: ignored & (1 << (libc::SIGINT - 1)) != 0,
    })
}

/// Room for a `/proc/<pid>/stat` line: 52 numbers of at most 20 digits, a name of at
/// most 64 bytes in parentheses, the state and the spaces fit in 1,200 bytes.
const STAT_BYTES: usize = 2048;

/// The stat line of `pid`, read in one `read` into `buf` where it fits (it always does:
/// `STAT_BYTES`). `fs::read_to_string` made 8 calls of it (a `statx` that says size 0,
/// then reads of 32, 32, 64, 128, 256 bytes and one at the end): this runs at every
/// spawn, on the caller's thread (the job's start time), and for every process a scan
/// looks at. The line is whole once it ends in a newline; a shorter read goes on.
fn read_stat_line(pid: i32, buf: &mut [u8; STAT_BYTES]) -> Option<&[u8]> {
    use std::io::Read;
    let mut file = fs::File::open(format!("/proc/{pid}/stat")).ok()?;
    let mut len = 0;
    while len < buf.len() && !buf[..len].ends_with(b"\n") {
        match file.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(&buf[..len])
}

fn all_pids() -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
        .collect()
}

/// The process's `NATIVE_SHELL_JOB=...` entry (the first, as `getenv` would see it).
fn job_marker_of(pid: i32) -> Option<Vec<u8>> {
    let env = fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = [JOB_MARKER.as_bytes(), b"="].concat();
    env.split(|&b| b == 0)
        .find(|entry| entry.starts_with(&prefix))
        .map(<[u8]>::to_vec)
}

/// Every live process of the job (the job's own pid included while it lives). A
/// contained job's are read from its cgroup (a few µs per process) instead of from all
/// of `/proc` (milliseconds).
pub fn job_processes(job: &JobIdentity<'_>) -> Vec<ProcInfo> {
    if job.containment.is_contained() {
        return job
            .containment
            .pids()
            .into_iter()
            .filter_map(read_stat)
            .filter(|s| !s.is_zombie())
            .collect();
    }
    Snapshot::take(job.start_ticks).members(job)
}

/// The live processes (other than this one) started at or after some moment, each with
/// its job marker: one read of `/proc` that the searches for many jobs can share, so
/// ending a thousand jobs at exit costs one scan, not a thousand.
pub struct Snapshot {
    procs: Vec<ProcInfo>,
    /// pid → the process's whole `NATIVE_SHELL_JOB=...` environment entry, if any.
    markers: HashMap<i32, Vec<u8>>,
}

impl Snapshot {
    /// `since`: clock ticks since boot; older processes cannot belong to a newer job.
    pub fn take(since: u64) -> Self {
        let me = std::process::id() as i32;
        let procs: Vec<ProcInfo> = all_pids()
            .into_iter()
            .filter(|&p| p != me)
            .filter_map(read_stat)
            .filter(|s| s.start_ticks >= since && !s.is_zombie())
            .collect();
        let markers = procs
            .iter()
            .filter_map(|s| job_marker_of(s.pid).map(|m| (s.pid, m)))
            .collect();
        Self { procs, markers }
    }

    /// The job's processes: what its cgroup holds, its session and group, their
    /// descendants by parent links, and whatever carries its marker.
    pub fn members(&self, job: &JobIdentity<'_>) -> Vec<ProcInfo> {
        let candidates: Vec<&ProcInfo> = self.procs.iter().filter(|s| s.start_ticks >= job.start_ticks).collect();
        let marker = job.marker.as_bytes();
        let contained: HashSet<i32> = job.containment.pids().into_iter().collect();
        let links: Vec<search::Link> = candidates.iter().map(|s| s.link()).collect();
        let members = search::members(&links, job.pid, |pid| {
            contained.contains(&pid) || self.markers.get(&pid).is_some_and(|m| m == marker)
        });
        candidates
            .into_iter()
            .filter(|s| members.contains(&s.pid))
            .cloned()
            .collect()
    }
}

/// The processes left running in the background: the roots of what survives the
/// job's own process (those whose parent is not itself one of them).
pub fn background_roots(procs: &[ProcInfo], job_pid: i32) -> Vec<u32> {
    search::background_roots(&links(procs), job_pid)
}

fn links(procs: &[ProcInfo]) -> Vec<search::Link> {
    procs.iter().map(ProcInfo::link).collect()
}

/// Of a running job's processes, the roots of those that detached from it (another
/// session, parent gone, `nohup`, backgrounded off the job's output): see
/// `search::detached_roots`.
pub fn detached_roots(procs: &[ProcInfo], job_pid: i32) -> Vec<u32> {
    // The job's terminal or pipes; `/dev/null` is no one's (bash gives it to `cmd &`).
    let job_io: Vec<_> = standard_streams(job_pid)
        .into_iter()
        .filter(|stream| stream.as_os_str() != "/dev/null")
        .collect();
    search::detached_roots(&links(procs), job_pid, |pid| {
        standard_streams(pid).iter().any(|stream| job_io.contains(stream))
    })
}

/// What descriptors 0–2 of a process are open on (`/dev/pts/3`, `pipe:[41]`), as the
/// links in `/proc/<pid>/fd` name them; those that are closed or unreadable are left out.
fn standard_streams(pid: i32) -> Vec<std::path::PathBuf> {
    (0..3)
        .filter_map(|fd| fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok())
        .collect()
}

pub fn is_alive(pid: i32) -> bool {
    read_stat(pid).is_some_and(|s| !s.is_zombie())
}

/// The start time of a process, in clock ticks since boot.
pub fn start_ticks(pid: i32) -> u64 {
    read_stat(pid).map_or(0, |s| s.start_ticks)
}

/// `CLOCK_BOOTTIME` now, in nanoseconds (0 if it cannot be read): the clock the
/// kernel stamps a new process's start with (`start_boottime`, set in `copy_process`).
pub fn boot_clock() -> u64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec of ours (the vDSO: no system call).
    if unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut now) } != 0 {
        return 0;
    }
    (now.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(now.tv_nsec as u64)
}

/// The start time of `pid`, a child this process started between two readings of
/// `boot_clock`, `before` and `after`: `/proc/<pid>/stat` gives its start as
/// `start_boottime` in whole clock ticks, so when both readings fall in the same tick
/// that tick is its start, with no `/proc` read on the spawn's path (three system
/// calls and a parse on the JS thread). Else (a tick began during the clone, about one
/// spawn in a hundred) it is read from `/proc`, as `start_ticks` does: exact either way,
/// so the pid-reuse checks that compare it (src/job/carry.rs) keep their guarantee.
pub fn start_ticks_between(pid: i32, before: u64, after: u64) -> u64 {
    static NS_PER_TICK: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let per_tick = *NS_PER_TICK.get_or_init(|| {
        // SAFETY: sysconf takes a name and reads nothing of ours.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        // The kernel divides exactly only when the tick is a whole number of ns.
        match u64::try_from(hz) {
            Ok(hz) if hz > 0 && 1_000_000_000 % hz == 0 => 1_000_000_000 / hz,
            _ => 0,
        }
    });
    if per_tick > 0 && before > 0 && before <= after && before / per_tick == after / per_tick {
        return before / per_tick;
    }
    start_ticks(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The start time known from the clock around a spawn is the one `/proc` gives,
    /// spawn after spawn (a tick beginning during one falls back to `/proc` itself).
    #[test]
    fn start_ticks_from_the_clock_are_those_of_proc() {
        for _ in 0..200 {
            let before = boot_clock();
            let mut child = std::process::Command::new("true").spawn().unwrap();
            let after = boot_clock();
            let pid = child.id() as i32;
            let told = start_ticks_between(pid, before, after);
            let read = start_ticks(pid);
            child.wait().unwrap();
            assert!(before > 0 && told > 0);
            assert_eq!(told, read, "clock {before}..{after}");
        }
    }

    #[test]
    fn reads_own_stat() {
        let me = std::process::id() as i32;
        let s = read_stat(me).unwrap();
        assert_eq!(s.pid, me);
        assert!(s.start_ticks > 0);
        assert!(is_alive(me));
    }

    /// A process names itself with any bytes (`prctl(PR_SET_NAME)`): one that is not
    /// UTF-8, with a `)` in it, is read all the same, so no scan skips it. (A thread of
    /// this test names itself; `/proc/<tid>/stat` is its line.)
    #[test]
    fn reads_a_name_that_is_not_utf8() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let named = std::thread::spawn(move || {
            // SAFETY: prctl with a NUL-terminated name of ours; gettid takes nothing.
            unsafe {
                libc::prctl(libc::PR_SET_NAME, c"\xff\xfe)x (".as_ptr(), 0, 0, 0);
                let _ = tx.send(libc::gettid());
            }
            let _ = done_rx.recv();
        });
        let tid = rx.recv().unwrap();
        let comm = std::fs::read(format!("/proc/{tid}/comm")).unwrap();
        assert_eq!(comm, b"\xff\xfe)x (\n");
        let stat = read_stat(tid);
        let _ = done_tx.send(());
        named.join().unwrap();
        let stat = stat.expect("the stat line of a thread whose name is not UTF-8");
        assert_eq!(stat.pid, tid);
        assert_eq!(stat.ppid, std::os::unix::process::parent_id() as i32);
        assert!(stat.start_ticks > 0);
    }

    #[test]
    fn reads_ignored_hangup() {
        // `nohup` ignores SIGHUP before it execs: the flag must come through.
        let mut child = std::process::Command::new("nohup")
            .args(["sleep", "5"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut seen = false;
        while !seen && std::time::Instant::now() < deadline {
            seen = read_stat(pid).is_some_and(|s| s.ignores_hangup);
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(seen);
    }

    #[test]
    fn background_roots_skip_children_of_members() {
        let p = |pid, ppid| ProcInfo {
            pid,
            ppid,
            pgrp: 0,
            session: 0,
            state: 'S',
            start_ticks: 0,
            ignores_hangup: false,
            ignores_interrupt: false,
        };
        let procs = vec![p(10, 1), p(11, 10), p(12, 1)];
        assert_eq!(background_roots(&procs, 99), vec![10, 12]);
    }
}
