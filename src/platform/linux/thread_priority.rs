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
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() } as libc::id_t;
    // getpriority returns -1 both for nice -1 and for an error; a thread that reads
    // its own priority cannot fail, so -1 is taken as the value.
    // SAFETY: plain syscalls on this thread's own id.
    let now = unsafe { libc::getpriority(libc::PRIO_PROCESS, tid) };
    let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, (now + by).min(19)) };
}
