//! Finding and ending a job's processes: its Job Object holds every process the job
//! started (each joins at creation, before it runs), so there is nothing to search for:
//! the members are the job's pid list, and ending them is terminating the job.

use std::ffi::OsString;
use std::mem::MaybeUninit;
use std::os::windows::ffi::OsStringExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use windows_sys::Win32::Foundation::{FILETIME, WAIT_TIMEOUT};
use windows_sys::Win32::System::Threading::{
    GetProcessTimes, OpenProcess, QueryFullProcessImageNameW, WaitForSingleObject, PROCESS_NAME_WIN32,
    PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE,
};

use super::job_object::JobTree;
use crate::base::sync::lock;
use crate::platform::{Ending, JobIdentity};

/// The exit code every process of a killed job gets (the Job Object is terminated with
/// it). 1, as Node's own `subprocess.kill()` uses on Windows.
pub const KILLED: u32 = 1;

/// What holds a job's processes together: its Job Object. Shared by the job and, for a
/// PTY job, the task that closes its pseudoconsole; the last one to let go closes the
/// job, which ends whatever is still in it (kill on close).
#[derive(Clone, Debug)]
pub struct Containment(pub(super) Arc<JobTree>);

/// Every job is held by a Job Object of its own.
pub fn containment_mode() -> crate::platform::ContainmentMode {
    crate::platform::ContainmentMode::JobObject
}

impl Containment {
    pub fn mode(&self) -> crate::platform::ContainmentMode {
        crate::platform::ContainmentMode::JobObject
    }

    /// The containment of a job whose first process is `pid`.
    pub(super) fn new(job: Arc<JobTree>, pid: u32) -> Self {
        let mut jobs = lock(&JOBS);
        jobs.retain(|(_, weak)| weak.strong_count() > 0);
        jobs.push((pid, Arc::downgrade(&job)));
        drop(jobs);
        Self(job)
    }
}

/// Jobs by the pid of their first process, for `group_exists`, which is asked by pid.
/// Weak: an entry never keeps a job alive; dead ones are pruned as new ones come.
static JOBS: Mutex<Vec<(u32, Weak<JobTree>)>> = Mutex::new(Vec::new());

fn job_of(pid: u32) -> Option<Arc<JobTree>> {
    lock(&JOBS)
        .iter()
        .rev()
        .find(|(p, _)| *p == pid)
        .and_then(|(_, weak)| weak.upgrade())
}

#[derive(Clone, Debug)]
pub struct ProcInfo {
    pub pid: i32,
}

/// Every live process of the job (the job's own process included while it lives).
pub fn job_processes(job: &JobIdentity<'_>) -> Vec<ProcInfo> {
    job.containment
        .0
        .pids()
        .unwrap_or_default()
        .into_iter()
        .map(|pid| ProcInfo { pid: pid as i32 })
        .collect()
}

/// Nothing to share between jobs on Windows: each asks its own Job Object.
pub struct Snapshot;

impl Snapshot {
    pub fn take(_since: u64) -> Self {
        Self
    }

    pub fn members(&self, job: &JobIdentity<'_>) -> Vec<ProcInfo> {
        job_processes(job)
    }
}

/// Always empty: `backgroundPids` is specified as empty on Windows (docs/windows.md).
/// What `start /b` leaves running is still in the job's Job Object,
/// so `kill` ends it all the same.
pub fn background_roots(_procs: &[ProcInfo], _job_pid: i32) -> Vec<u32> {
    Vec::new()
}

/// Always empty, like `background_roots`: the Job Object lists its processes but not
/// their parents, sessions or consoles, so nothing says which of them detached, and
/// none can leave the job (docs/windows.md).
pub fn detached_roots(_procs: &[ProcInfo], _job_pid: i32) -> Vec<u32> {
    Vec::new()
}

/// Ends every process of the job: the Job Object is terminated. Windows has no polite
/// request that every program heeds (a console control event reaches only console
/// programs sharing a console with the sender, and a GUI or detached process never), so
/// both endings end at once (docs/windows.md).
pub fn end_processes(job: &JobIdentity<'_>, _procs: &[ProcInfo], _ending: Ending) {
    let _ = job.containment.0.terminate(KILLED);
}

fn open(pid: i32, access: u32) -> Option<OwnedHandle> {
    let pid = u32::try_from(pid).ok().filter(|&p| p != 0)?;
    // SAFETY: plain call with a pid; null means it could not be opened.
    let handle = unsafe { OpenProcess(access, 0, pid) };
    // SAFETY: OpenProcess returned an open handle that nothing else owns.
    (!handle.is_null()).then(|| unsafe { OwnedHandle::from_raw_handle(handle) })
}

/// Whether process `pid` runs (has not exited).
pub fn is_alive(pid: i32) -> bool {
    open(pid, PROCESS_SYNCHRONIZE).is_some_and(|process| {
        // SAFETY: the handle is open with SYNCHRONIZE access; 0: do not wait.
        unsafe { WaitForSingleObject(process.as_raw_handle(), 0) == WAIT_TIMEOUT }
    })
}

/// Whether any process is left in the Job Object of the job whose process is `pid`.
pub fn group_exists(pid: i32) -> bool {
    match u32::try_from(pid).ok().and_then(job_of) {
        Some(job) => job.pids().is_ok_and(|pids| !pids.is_empty()),
        None => is_alive(pid),
    }
}

/// When the process was created, in 100 ns units since 1601 (0 if unknown).
pub fn start_ticks(pid: i32) -> u64 {
    let Some(process) = open(pid, PROCESS_QUERY_LIMITED_INFORMATION) else {
        return 0;
    };
    let mut times = [MaybeUninit::<FILETIME>::uninit(); 4];
    let [created, exited, kernel, user] = &mut times;
    // SAFETY: the handle is open with query access; the four out-pointers are live.
    let ok = unsafe {
        GetProcessTimes(
            process.as_raw_handle(),
            created.as_mut_ptr(),
            exited.as_mut_ptr(),
            kernel.as_mut_ptr(),
            user.as_mut_ptr(),
        )
    };
    if ok == 0 {
        return 0;
    }
    // SAFETY: GetProcessTimes succeeded, so it wrote the creation time.
    let created = unsafe { created.assume_init() };
    (u64::from(created.dwHighDateTime) << 32) | u64::from(created.dwLowDateTime)
}

/// The file name of the program process `pid` runs (`cmd.exe`).
pub fn program_name(pid: i32) -> Option<String> {
    let process = open(pid, PROCESS_QUERY_LIMITED_INFORMATION)?;
    let mut buf = vec![0u16; 1024];
    let mut len = buf.len() as u32;
    // SAFETY: the handle is open with query access; the pointer and length describe
    // `buf`, and `len` outlives the call.
    let ok =
        unsafe { QueryFullProcessImageNameW(process.as_raw_handle(), PROCESS_NAME_WIN32, buf.as_mut_ptr(), &mut len) };
    if ok == 0 {
        return None;
    }
    let path = PathBuf::from(OsString::from_wide(buf.get(..len as usize)?));
    Some(path.file_name()?.to_string_lossy().into_owned())
}
