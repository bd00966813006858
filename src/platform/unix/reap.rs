//! Reaping a job's process with `waitpid` (only that pid, so Node's own children are
//! left to libuv), shared by the Linux and macOS exit watchers; and, in the daemon (a
//! child subreaper: src/platform/linux/job_peers.rs), reaping the orphans it adopts
//! without taking the exit status of a job's own process from its watcher.

use std::collections::HashSet;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::Mutex;
#[cfg(target_os = "linux")]
use std::sync::RwLock;

use rustix::io::Errno;
use rustix::process::{waitpid, Pid, WaitOptions};

use crate::base::sync::lock;
use crate::platform::Exit;

/// Children whose watcher was dropped before they exited. Each new launch reaps those
/// that have exited since (`reap_dropped`), so none stays a zombie for long.
static UNREAPED: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// The job processes this process started and has not reaped yet: their exit status is
/// their watcher's (`ChildProcess`), never the orphan reaper's.
static LAUNCHED: Mutex<Option<HashSet<i32>>> = Mutex::new(None);
/// Held shared by a launch from before its clone until its pid is in `LAUNCHED`, and
/// exclusively by the orphan reaper while it looks: a child that exits at once is never
/// taken for an orphan in between. (Linux: only its daemon is a subreaper.)
#[cfg(target_os = "linux")]
static LAUNCH_GATE: RwLock<()> = RwLock::new(());

/// Runs `launch` (which starts one child and returns its pid) so that the orphan reaper
/// leaves that child to its watcher.
/// Whether this process adopts orphans (the daemon, a subreaper): only then are launches
/// registered, so a process hosting the addon pays nothing for it on each spawn.
#[cfg(target_os = "linux")]
static ADOPTS_ORPHANS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on, launches are registered for the orphan reaper. Called before this
/// process becomes a subreaper, so no launch of it is missed.
#[cfg(target_os = "linux")]
pub fn adopting_orphans() {
    ADOPTS_ORPHANS.store(true, std::sync::atomic::Ordering::SeqCst);
}

#[cfg(target_os = "linux")]
pub fn launching<E>(launch: impl FnOnce() -> Result<i32, E>) -> Result<i32, E> {
    if !ADOPTS_ORPHANS.load(std::sync::atomic::Ordering::SeqCst) {
        return launch();
    }
    let _gate = LAUNCH_GATE.read().unwrap_or_else(|e| e.into_inner());
    let pid = launch()?;
    lock(&LAUNCHED).get_or_insert_with(HashSet::new).insert(pid);
    Ok(pid)
}

/// Whether `pid` is a job's process this process launched and its watcher has not
/// reaped yet (its exit status is the watcher's).
#[cfg(target_os = "linux")]
pub fn is_launched(pid: i32) -> bool {
    lock(&LAUNCHED).as_ref().is_some_and(|set| set.contains(&pid))
}

/// A job's process launched by this process's previous image (a restart in place,
/// src/daemon/upgrade/): its exit status is its new watcher's, not the orphan
/// reaper's. Registered before the reaper runs in the new image.
#[cfg(target_os = "linux")]
pub fn adopt_launched(pid: i32) {
    let _gate = LAUNCH_GATE.read().unwrap_or_else(|e| e.into_inner());
    lock(&LAUNCHED).get_or_insert_with(HashSet::new).insert(pid);
}

/// Reaps the zombies among `children` (this process's children, found by the caller)
/// that no launch of ours started: orphans of a job, adopted by a subreaper.
#[cfg(target_os = "linux")]
pub fn reap_adopted(children: impl FnOnce() -> Vec<i32>) {
    let _gate = LAUNCH_GATE.write().unwrap_or_else(|e| e.into_inner());
    let ours = lock(&LAUNCHED).clone().unwrap_or_default();
    for pid in children() {
        if !ours.contains(&pid) {
            let _ = try_reap(pid);
        }
    }
}

fn forget(pid: i32) {
    if let Some(set) = lock(&LAUNCHED).as_mut() {
        set.remove(&pid);
    }
}

/// A watcher dropped before its process was reaped: reap it now if it has exited,
/// else remember it for a later launch.
pub fn reap_or_remember(pid: i32) {
    if !matches!(try_reap(pid), Ok(Some(_))) {
        lock(&UNREAPED).push(pid);
    }
}

/// `pid`, a child launched through `launching`, was reaped without `wait_for` (a
/// helper's `std::process::Child`): the orphan reaper may take that pid again.
#[cfg(target_os = "linux")]
pub fn reaped(pid: i32) {
    forget(pid);
}

/// Reaps the remembered children that have exited since.
pub fn reap_dropped() {
    lock(&UNREAPED).retain(|&pid| matches!(try_reap(pid), Ok(None)));
}

/// The exit status if the process has exited (and reaps it), None while it runs.
pub fn try_reap(pid: i32) -> io::Result<Option<ExitStatus>> {
    wait_for(pid, WaitOptions::NOHANG)
}

/// Waits for the process to exit, blocking the thread, and reaps it.
pub fn wait_blocking(pid: i32) -> io::Result<ExitStatus> {
    wait_for(pid, WaitOptions::empty())?.ok_or_else(|| io::Error::other("waitpid returned no status"))
}

/// `waitpid` on our own child `pid`, retried when interrupted; `None`: still running
/// (only with `NOHANG`).
fn wait_for(pid: i32, options: WaitOptions) -> io::Result<Option<ExitStatus>> {
    let child = Pid::from_raw(pid).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    loop {
        match waitpid(Some(child), options) {
            Ok(done) => {
                if done.is_some() {
                    forget(pid);
                }
                return Ok(done.map(|(_, status)| ExitStatus::from_raw(status.as_raw())));
            }
            Err(Errno::INTR) => {}
            Err(e) => {
                if e == Errno::CHILD {
                    forget(pid);
                }
                return Err(e.into());
            }
        }
    }
}

/// What the caller is told of an exit: the code, or the signal that ended it.
pub fn exit_of(status: ExitStatus) -> Exit {
    Exit {
        code: status.code(),
        signal: status.signal(),
    }
}

/// Reaps a child known to have exited already (a launch that failed before exec).
pub fn reap_blocking(pid: i32) {
    let _ = wait_blocking(pid);
}
