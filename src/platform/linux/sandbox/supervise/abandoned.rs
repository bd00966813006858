//! A call the supervisor makes may block for as long as the server lets it: a connect
//! to a socket whose server never accepts (its backlog full), a send to a full one. If
//! the job's thread is gone meanwhile (killed, the job ended), nothing would ever end
//! the supervisor's thread: a job could pile up blocked threads until every supervised
//! call of every job waits for one. So a thread about to make such a call registers
//! (`interruptible`), and the janitor thread looks every second (`interrupt_abandoned`):
//! a call whose notification no longer waits is interrupted with a signal whose handler
//! does nothing and that is installed without `SA_RESTART`, so the blocked system call
//! returns `EINTR`. `SIGURG` (ignored by default; only out-of-band socket data raises
//! it, for a process that asked), and only if nothing in the process handles it already:
//! else no call is interrupted, and the threads stay blocked until their server moves.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use super::listener::still_waiting;

/// The signal that interrupts an abandoned call.
const INTERRUPT: libc::c_int = libc::SIGURG;

struct Blocked {
    token: u64,
    thread: libc::pthread_t,
    /// The job's listener: kept open by the registered thread until it unregisters.
    listener: RawFd,
    id: u64,
}

static BLOCKED: Mutex<Vec<Blocked>> = Mutex::new(Vec::new());
static ANY: AtomicBool = AtomicBool::new(false);

extern "C" fn nothing(_: libc::c_int) {}

/// Installs the handler, once; false if the signal is someone else's.
fn installed() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        // SAFETY: reading, then (when unclaimed) setting the process's action for one
        // signal; the handler does nothing, so it is async-signal-safe.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(INTERRUPT, std::ptr::null(), &mut old) != 0 {
                return false;
            }
            if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN {
                return false;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = nothing as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            // No SA_RESTART: the interrupted call returns EINTR.
            action.sa_flags = 0;
            libc::sigaction(INTERRUPT, &action, std::ptr::null_mut()) == 0
        }
    })
}

fn lock() -> std::sync::MutexGuard<'static, Vec<Blocked>> {
    BLOCKED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes `call` (a system call that may block, returning -1 with `errno` on failure)
/// for the notification `id` of `listener`, registered so that it can be interrupted
/// once the notification no longer waits. A call interrupted while its notification
/// still waits (the signal came from elsewhere) is made again.
pub fn interruptible(listener: RawFd, id: u64, mut call: impl FnMut() -> isize) -> isize {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    if !installed() {
        return call();
    }
    let token = NEXT.fetch_add(1, Ordering::Relaxed);
    lock().push(Blocked {
        token,
        // SAFETY: the calling thread's own id.
        thread: unsafe { libc::pthread_self() },
        listener,
        id,
    });
    ANY.store(true, Ordering::Release);
    let result = loop {
        let result = call();
        let interrupted = result < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR);
        // SAFETY: the listener is held open by our caller while this runs.
        let listener = unsafe { std::os::fd::BorrowedFd::borrow_raw(listener) };
        if !interrupted || !still_waiting(listener, id) {
            break result;
        }
    };
    // SAFETY: this thread's errno, read and put back around the unregistering (a lock
    // may change it), for the caller to read the call's.
    let errno = unsafe { *libc::__errno_location() };
    {
        let mut blocked = lock();
        blocked.retain(|b| b.token != token);
        ANY.store(!blocked.is_empty(), Ordering::Release);
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
    result
}

/// Interrupts `thread` of this process: a call it is blocked in returns `EINTR`
/// (nothing, if the signal is someone else's).
pub fn interrupt(thread: libc::pthread_t) {
    if installed() {
        // SAFETY: a thread of the supervisor, alive: it is listed as waiting by the
        // caller, under the lock it takes to unlist itself before it ends.
        unsafe { libc::pthread_kill(thread, INTERRUPT) };
    }
}

/// Interrupts every registered call whose notification no longer waits.
pub fn interrupt_abandoned() {
    if !ANY.load(Ordering::Acquire) {
        return;
    }
    for b in lock().iter() {
        // SAFETY: a listener held open by the registered thread (it unregisters, under
        // this lock, before it lets go of it).
        let listener = unsafe { std::os::fd::BorrowedFd::borrow_raw(b.listener) };
        if !still_waiting(listener, b.id) {
            // SAFETY: a thread that is alive: it is registered, and unregisters under
            // this lock before it ends.
            unsafe { libc::pthread_kill(b.thread, INTERRUPT) };
        }
    }
}
