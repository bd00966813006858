//! The supervisor across a restart in place (src/daemon/upgrade/): the old image stops
//! taking notifications and finishes those it took (`drain`), the exec keeps each
//! supervised job's listener open by number (src/job/sandbox_carry.rs carries it with
//! its policy), and the new image starts answering on it (`resume`).
//!
//! **Why nothing is lost or answered twice.** A notification the old image took
//! (`SECCOMP_IOCTL_NOTIF_RECV`) and did not answer would never be answered: the
//! kernel answers the ones still pending only when the listener's file is closed,
//! and the exec keeps it open. So before the exec every supervisor thread parks
//! outside `receive` (`enter` refuses it a new turn; a thread waiting in `receive` is
//! interrupted and comes back to `enter`) and every call taken is answered first. A
//! call the old image answered is gone from the kernel: the new image cannot take it
//! again. A call made meanwhile stays pending in the kernel (its thread blocked, as it
//! is for any supervised call) and is taken by the new image's first `receive`. A call
//! the old image is still making when the limit passes (a connect to a server that
//! does not accept) refuses the restart: the threads go on (`undrain`).
//!
//! **What the new image trusts.** The policy comes from the hand-over the old image
//! wrote (the allowed sockets and the job's writable directories by device and inode,
//! found when the job's sandbox was made): nothing is resolved again from a path a
//! job could have swapped. The listener is checked to be a seccomp listener before it
//! is used.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{abandoned, janitor, watch, Policy};
use crate::sandbox::{FileId, Network};

/// Set while the old image hands over: no thread takes a notification.
static DRAINING: AtomicBool = AtomicBool::new(false);
/// Threads between `enter` and `leave`: in `receive`, or answering what they took.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
static PARKED: Mutex<()> = Mutex::new(());
static RESUMED: Condvar = Condvar::new();

fn parked() -> std::sync::MutexGuard<'static, ()> {
    PARKED.lock().unwrap_or_else(|e| e.into_inner())
}

/// A thread's turn to take a notification and answer it; waits while the supervisor
/// is drained. `leave` ends the turn.
pub(super) fn enter() {
    loop {
        // Counted before the flag is read, and the drainer sets the flag before it
        // reads the count (both sequentially consistent): either this thread sees
        // the flag, or the drainer sees it counted and interrupts it.
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        if !DRAINING.load(Ordering::SeqCst) {
            return;
        }
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
        let mut guard = parked();
        while DRAINING.load(Ordering::SeqCst) {
            guard = RESUMED.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
    }
}

pub(super) fn leave() {
    ACTIVE.fetch_sub(1, Ordering::SeqCst);
}

/// Stops every supervisor thread outside `receive`, each call it took answered, within
/// `limit`. `Err`: a call still being made; the threads go on.
pub fn drain(limit: Duration) -> Result<(), String> {
    DRAINING.store(true, Ordering::SeqCst);
    let deadline = Instant::now() + limit;
    loop {
        let active = ACTIVE.load(Ordering::SeqCst);
        if active == 0 {
            return Ok(());
        }
        if Instant::now() >= deadline {
            undrain();
            return Err(format!(
                "{active} supervisor threads were still making a job's call to a unix socket"
            ));
        }
        // Those waiting in `receive` come back with `EINTR`; a signal that came just
        // before one entered it is sent again at the next round.
        if let Ok(janitor) = janitor() {
            let jobs: Vec<_> = janitor.jobs().iter().filter_map(std::sync::Weak::upgrade).collect();
            for job in jobs {
                for &thread in job.waiting().iter() {
                    abandoned::interrupt(thread);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Lets the threads take notifications again (the restart did not happen).
pub fn undrain() {
    let _guard = parked();
    DRAINING.store(false, Ordering::SeqCst);
    RESUMED.notify_all();
}

/// A job's policy, as the hand-over carries it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedPolicy {
    pub allowed: Vec<FileId>,
    pub writable: Vec<FileId>,
    pub network: Network,
}

/// The listener (a copy, close-on-exec) and policy of the supervised job whose main
/// process is `pid`, while a process of it is left. `Err`: two supervised jobs claim
/// the pid (the first one's main process gone, a process of it still running, and the
/// pid reused): refused rather than guessed.
pub fn carried(pid: u32) -> Result<Option<(OwnedFd, CarriedPolicy)>, String> {
    let janitor = janitor().map_err(|e| e.to_string())?;
    let jobs: Vec<_> = janitor.jobs().iter().filter_map(std::sync::Weak::upgrade).collect();
    let mut found = jobs
        .iter()
        .filter(|job| job.pid == pid as i32 && !watch::nothing_left(&job.listener));
    let Some(job) = found.next() else {
        return Ok(None);
    };
    if found.next().is_some() {
        return Err(format!("two supervised jobs claim process {pid}"));
    }
    let listener = job
        .listener
        .try_clone()
        .map_err(|e| format!("its seccomp listener cannot be kept: {e}"))?;
    let policy = &job.policy;
    Ok(Some((
        listener,
        CarriedPolicy {
            allowed: policy.allowed.clone(),
            writable: policy.writable.clone(),
            network: policy.network.clone(),
        },
    )))
}

/// `fd` is a seccomp listener (`anon_inode:seccomp notify`), checked before it is
/// taken.
pub fn is_listener(fd: BorrowedFd<'_>) -> bool {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .is_ok_and(|target| target.as_os_str() == "anon_inode:seccomp notify")
}

/// The new image's side: answers the calls of the job `pid` on its carried listener,
/// with its carried policy, calls made while the images changed first.
pub fn resume(listener: OwnedFd, policy: CarriedPolicy, pid: u32) -> io::Result<()> {
    if !is_listener(listener.as_fd()) {
        return Err(io::Error::other("the carried descriptor is no seccomp listener"));
    }
    let policy = Policy {
        allowed: policy.allowed,
        writable: policy.writable,
        network: policy.network,
    };
    super::start(listener, Arc::new(policy), pid as i32)
}
