//! The daemon's children's exits, SIGCHLD, taken by one thread of their own
//! (`native-shell-reaper`) that waits for the signal in `sigwaitinfo` and reaps the
//! orphans the daemon adopted as a subreaper (src/platform/linux/job_peers.rs
//! `reap_orphans`; a job's own process is reaped by its watcher, not here).
//!
//! Why not tokio's signal stream: its handler writes to one pipe that every runtime of
//! the process watches, so each job's exit — every `run` — woke the connection's
//! thread (to read the pipe and pass the work on), a `jobs` thread (whose runtime
//! watches the same pipe, for nothing), and the peer-check thread (which the work was
//! passed to): three threads woken at the moment the exit's reply is made, each a wait
//! for a core on a busy machine, and the two daemon threads in short turns
//! (latency.rs) preempting the reader that makes the reply (docs/daemon.md, "Round
//! trips"). Now the signal is blocked in every thread of the daemon (`block`, before
//! any is started: each inherits its creator's mask) and pending for the process until
//! this thread takes it: one thread woken per exit, which looks with one `waitid`
//! whether any child waits to be reaped and sleeps again (when the one it sees is a job's
//! own process, which its watcher reaps, it looks again 20 ms later rather than list
//! every child then: src/platform/linux/job_peers.rs `reap_orphans`).
//!
//! What the daemon starts does not inherit the mask: a job's launch empties it in the
//! child before the exec (src/platform/unix/launch.rs), as `std::process::Command` does
//! for the watchdog, the MCP child and a restart's `execve` of the next image.

/// Blocks SIGCHLD in the calling thread, and so in every thread it starts afterwards.
/// Called by `run` before any thread of the daemon exists: a thread that did not block
/// it could be handed the signal and drop it (its default action is to ignore it), and
/// an orphan's zombie would wait for the next exit's signal.
#[cfg(target_os = "linux")]
pub fn block() -> Result<(), String> {
    let set = sigchld();
    // SAFETY: a valid signal set; the old mask is not asked for.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(format!(
            "cannot block SIGCHLD: {}",
            std::io::Error::from_raw_os_error(rc)
        ));
    }
    Ok(())
}

/// Starts the thread that reaps the adopted orphans on each SIGCHLD (and once at its
/// start: an orphan that exited before, during a restart's `execve`, whose signal the
/// new image did not see).
#[cfg(target_os = "linux")]
pub fn reap_orphans_on_each() -> Result<(), String> {
    std::thread::Builder::new()
        .name("native-shell-reaper".into())
        .spawn(|| {
            // Blocked here already (inherited), and blocked it must be: `sigwaitinfo`
            // takes a signal only while it is blocked.
            let set = sigchld();
            // SAFETY: a valid signal set; the old mask is not asked for.
            unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
            let mut deferred = None;
            loop {
                deferred = crate::platform::reap_orphans(deferred);
                if deferred.is_none() {
                    // SAFETY: a valid signal set; no siginfo asked for. A standard
                    // signal is pending once however many children exited since: the
                    // reaping after it looks at them all. -1 (EINTR: another signal's
                    // handler ran on this thread) only reaps once more for nothing.
                    unsafe { libc::sigwaitinfo(&set, std::ptr::null_mut()) };
                } else {
                    // The exited child seen was a job's own, about to be reaped by its
                    // watcher, and may hide an orphan behind it: looked at again at
                    // the next exit or after `LOOK_AGAIN`, once (never a periodic
                    // wake-up: the same child seen again no longer defers the search).
                    // SAFETY: as above, with a valid timeout.
                    unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &LOOK_AGAIN) };
                }
            }
        })
        .map(drop)
        .map_err(|e| format!("cannot start the orphan reaper: {e}"))
}

/// How soon the reaper looks again after seeing only a job's own exited process.
#[cfg(target_os = "linux")]
const LOOK_AGAIN: libc::timespec = libc::timespec {
    tv_sec: 0,
    tv_nsec: 20_000_000,
};

#[cfg(target_os = "linux")]
fn sigchld() -> libc::sigset_t {
    // SAFETY: sigemptyset initializes the set, then SIGCHLD is added to it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        set
    }
}

/// Elsewhere the daemon adopts no orphans (no subreaper): nothing to block or reap.
#[cfg(not(target_os = "linux"))]
pub fn block() -> Result<(), String> {
    Ok(())
}

/// See the Linux one: nothing to reap here.
#[cfg(not(target_os = "linux"))]
pub fn reap_orphans_on_each() -> Result<(), String> {
    Ok(())
}
