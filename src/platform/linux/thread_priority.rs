//! Lowering the scheduling weight of the calling thread alone.
//!
//! On Linux a nice value belongs to a thread: `setpriority(PRIO_PROCESS, tid)` changes
//! only the thread with that id (setpriority(2), "BUGS"), so the rest of the process,
//! the JS thread above all, keeps its weight. A thread cannot raise its weight back
//! without `CAP_SYS_NICE`, and whatever it starts inherits its nice value: only a
//! thread that stays lowered for life, and never starts a process, may call this.

/// Raises the calling thread's nice value by `by` (capped at 19). Best effort: a thread
/// that cannot be lowered runs as before, which costs only smoothness.
pub fn lower_current_thread(by: i32) {
    // rustix's gettid is the raw system call: glibc's wrapper is 2.30's, newer than the
    // 2.28 the Linux packages are built against (docs/platforms.md).
    let tid = rustix::thread::gettid();
    let Ok(now) = rustix::process::getpriority_process(Some(tid)) else {
        return;
    };
    let _ = rustix::process::setpriority_process(Some(tid), (now + by).min(19));
}
