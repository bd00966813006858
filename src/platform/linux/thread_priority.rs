//! The scheduling of the calling thread alone: a lower weight, or the batch policy.
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

/// Puts the calling thread alone under `SCHED_BATCH`: its weight stays the default (it
/// keeps its fair share when the machine is busy), but waking up it never preempts a
/// running thread (the kernel's `check_preempt_wakeup_fair` leaves that to the tick), so
/// work handed to it waits for a free core instead of taking one from the thread that
/// handed it over. Any thread may choose it (sched(7)); whatever the thread starts
/// inherits it, so only one that never starts a process may call this. Best effort.
pub fn batch_current_thread() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; `param` is a valid, live struct.
    let _ = unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) };
}

#[cfg(test)]
mod tests {
    /// The calling thread alone takes the batch policy; the others keep theirs.
    #[test]
    fn a_thread_takes_the_batch_policy_alone() {
        // SAFETY: queries of the calling thread's policy.
        let policy = || unsafe { libc::sched_getscheduler(0) };
        let before = policy();
        let there = std::thread::spawn(move || {
            super::batch_current_thread();
            policy()
        })
        .join()
        .expect("thread");
        assert_eq!(there, libc::SCHED_BATCH);
        assert_eq!(policy(), before, "the calling thread keeps its own");
    }
}
