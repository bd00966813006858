//! Finding every process that belongs to a job, on macOS.
//!
//! The same three ways as on Linux (src/platform/linux/process_tree.rs), because each
//! alone misses some:
//! - the job's session and process group (the job is a session leader): `getsid` and
//!   libproc's `pbi_pgid`;
//! - the parent chain from the job's pid (`pbi_ppid`): children that left the session
//!   while their parent lives;
//! - the job's environment marker (`NATIVE_SHELL_JOB=<token>.<handle>`), read with
//!   `sysctl(KERN_PROCARGS2)` (`procargs.rs`): double-forked daemons whose parent is gone.
//!
//! Only processes started no earlier than the job are examined, which keeps a scan
//! short and makes a pid reused by an older process harmless. "Started" is the kernel's
//! monotonic clock at the fork (`ri_proc_start_abstime` from `proc_pid_rusage`, in
//! `mach_absolute_time` units): the wall-clock start libproc also gives
//! (`pbi_start_tvsec`) moves when the clock is set back, which would hide new processes.
//!
//! libproc and the sysctl answer for the same user's processes (any, for root). A job
//! process that changed user (a setuid program) is not found, and could not be
//! signalled anyway. Zombies are not listed: libproc does not describe them unless asked.

use std::collections::HashMap;
use std::ffi::c_int;

use super::procargs;
use crate::platform::unix::search;
use crate::platform::JobIdentity;
use crate::platform::JOB_MARKER;

/// The buffer for one process's arguments and environment when the kernel does not say
/// its limit (macOS's own is 1 MiB; this is the smaller limit of its other systems).
const FALLBACK_ARG_MAX: usize = 256 * 1024;

#[derive(Clone, Debug)]
pub struct ProcInfo {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    /// When the process was forked, in `mach_absolute_time` units: only compared.
    pub start_ticks: u64,
}

impl ProcInfo {
    /// libproc does not say which signals a process ignores: false, as `Link` asks.
    fn link(&self) -> search::Link {
        search::Link {
            pid: self.pid,
            ppid: self.ppid,
            pgrp: self.pgrp,
            session: self.session,
            ignores_hangup: false,
            ignores_interrupt: false,
        }
    }
}

/// The kernel's record of a live process started at or after `since`: parent, group,
/// session and start. None for zombies, processes gone or another user's, and older ones.
fn read_info(pid: i32, since: u64) -> Option<ProcInfo> {
    let start_ticks = start_time(pid)?;
    if start_ticks < since {
        return None;
    }
    let bsd = bsd_info(pid)?;
    if bsd.pbi_status == libc::SZOMB {
        return None;
    }
    // SAFETY: getsid takes a pid and returns a number.
    let session = unsafe { libc::getsid(pid) };
    if session < 0 {
        return None;
    }
    Some(ProcInfo {
        pid,
        ppid: i32::try_from(bsd.pbi_ppid).ok()?,
        pgrp: i32::try_from(bsd.pbi_pgid).ok()?,
        session,
        start_ticks,
    })
}

/// libproc's BSD view of a process (not found for zombies).
fn bsd_info(pid: i32) -> Option<libc::proc_bsdinfo> {
    // SAFETY: all-zero is a valid proc_bsdinfo (integers and byte arrays).
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as c_int;
    // SAFETY: the kernel writes at most `size` bytes into the local.
    let n = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDTBSDINFO,
            0,
            (&mut info as *mut libc::proc_bsdinfo).cast(),
            size,
        )
    };
    (n == size).then_some(info)
}

/// When the process was forked, in `mach_absolute_time` units.
fn start_time(pid: i32) -> Option<u64> {
    // SAFETY: all-zero is a valid rusage_info_v0 (integers and bytes).
    let mut usage: libc::rusage_info_v0 = unsafe { std::mem::zeroed() };
    // SAFETY: the kernel writes one rusage_info_v0 (the flavor asked for) into the local.
    let r = unsafe {
        libc::proc_pid_rusage(
            pid,
            libc::RUSAGE_INFO_V0,
            (&mut usage as *mut libc::rusage_info_v0).cast(),
        )
    };
    (r == 0).then_some(usage.ri_proc_start_abstime)
}

fn all_pids() -> Vec<i32> {
    // SAFETY: with no buffer, proc_listallpids returns how many pids there are about.
    let mut expected = unsafe { libc::proc_listallpids(std::ptr::null_mut(), 0) };
    for _ in 0..3 {
        // Room for a few more: processes start while this runs.
        let room = usize::try_from(expected).unwrap_or(0) + 64;
        let mut pids = vec![0i32; room];
        let bytes = c_int::try_from(room * std::mem::size_of::<i32>()).unwrap_or(c_int::MAX);
        // SAFETY: the kernel writes at most `bytes` bytes of pids into the vector.
        let n = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast(), bytes) };
        let Ok(n) = usize::try_from(n) else {
            return Vec::new();
        };
        if n < room {
            pids.truncate(n);
            return pids;
        }
        expected = c_int::try_from(n.saturating_mul(2)).unwrap_or(c_int::MAX);
    }
    Vec::new()
}

/// How large a process's arguments and environment can be (`kern.argmax`).
fn arg_max() -> usize {
    let mut mib = [libc::CTL_KERN, libc::KERN_ARGMAX];
    let mut value: c_int = 0;
    let mut size = std::mem::size_of::<c_int>();
    // SAFETY: the kernel writes one int into the local and its size into `size`.
    let r = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            mib.len() as u32,
            (&mut value as *mut c_int).cast(),
            &mut size,
            std::ptr::null_mut(),
            0,
        )
    };
    match usize::try_from(value) {
        Ok(max) if r == 0 && max > 0 => max,
        _ => FALLBACK_ARG_MAX,
    }
}

/// The process's `NATIVE_SHELL_JOB=...` entry (the first, as `getenv` would see it).
/// `buf` is reused across processes (up to `kern.argmax` bytes each).
fn job_marker_of(pid: i32, buf: &mut [u8]) -> Option<Vec<u8>> {
    let mut mib = [libc::CTL_KERN, libc::KERN_PROCARGS2, pid];
    let mut size = buf.len();
    // SAFETY: the kernel writes at most `size` bytes into `buf` and the count into `size`.
    let r = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            mib.len() as u32,
            buf.as_mut_ptr().cast(),
            &mut size,
            std::ptr::null_mut(),
            0,
        )
    };
    if r < 0 {
        return None;
    }
    procargs::env_entry(buf.get(..size)?, JOB_MARKER).map(<[u8]>::to_vec)
}

/// Every live process of the job (the job's own pid included while it lives).
pub fn job_processes(job: &JobIdentity<'_>) -> Vec<ProcInfo> {
    Snapshot::take(job.start_ticks).members(job)
}

/// The live processes (other than this one) started at or after some moment, each with
/// its job marker: one read of the process table that the searches for many jobs can
/// share.
pub struct Snapshot {
    procs: Vec<ProcInfo>,
    /// pid → the process's whole `NATIVE_SHELL_JOB=...` environment entry, if any.
    markers: HashMap<i32, Vec<u8>>,
}

impl Snapshot {
    /// `since`: a `start_ticks` value; older processes cannot belong to a newer job.
    pub fn take(since: u64) -> Self {
        let me = std::process::id() as i32;
        let procs: Vec<ProcInfo> = all_pids()
            .into_iter()
            .filter(|&p| p > 0 && p != me)
            .filter_map(|p| read_info(p, since))
            .collect();
        let mut buf = vec![0u8; arg_max()];
        let markers = procs
            .iter()
            .filter_map(|s| job_marker_of(s.pid, &mut buf).map(|m| (s.pid, m)))
            .collect();
        Self { procs, markers }
    }

    /// The job's processes: its session and group, their descendants by parent links,
    /// and whatever carries its marker.
    pub fn members(&self, job: &JobIdentity<'_>) -> Vec<ProcInfo> {
        let candidates: Vec<&ProcInfo> = self.procs.iter().filter(|s| s.start_ticks >= job.start_ticks).collect();
        let marker = job.marker.as_bytes();
        let links: Vec<search::Link> = candidates.iter().map(|s| s.link()).collect();
        let members = search::members(&links, job.pid, |pid| {
            self.markers.get(&pid).is_some_and(|m| m == marker)
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
/// session, parent gone): see `search::detached_roots`. libproc does not say which
/// signals a process ignores, so a `nohup` or `&` child counts as detached only once
/// its parent is gone or it calls `setsid` (docs/macos.md).
pub fn detached_roots(procs: &[ProcInfo], job_pid: i32) -> Vec<u32> {
    search::detached_roots(&links(procs), job_pid, |_| true)
}

/// The process exists and is not a zombie (libproc does not describe zombies).
pub fn is_alive(pid: i32) -> bool {
    pid > 0 && bsd_info(pid).is_some_and(|b| b.pbi_status != libc::SZOMB)
}

/// When the process was forked, in `mach_absolute_time` units (0 if unknown, which
/// makes every later search look at all processes).
pub fn start_ticks(pid: i32) -> u64 {
    start_time(pid).unwrap_or(0)
}
