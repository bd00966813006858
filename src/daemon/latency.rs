//! The daemon's threads ask the scheduler for short turns. Each of them wakes, does a
//! few microseconds of work (a request read and written to a terminal, a chunk of
//! output read and a reply sent) and sleeps again; on a machine whose cores are busy
//! (builds beside an agent) a woken thread otherwise waits for the running one's turn
//! to end before it runs: measured with `perf sched timehist` under a load of 20 on 2
//! cores, the connection thread waited 154 µs on average per wake-up, every one of
//! them on a client's round trip (docs/daemon.md, "Round trips").
//!
//! Linux 6.12 and later (EEVDF): a thread of the normal policy may ask for a shorter
//! turn (`sched_attr.sched_runtime`, its "slice"), and a woken thread with a shorter
//! slice preempts the running one at once. It takes no privilege and changes neither
//! the thread's priority nor its share of the CPU (a thread that keeps running still
//! gets only its share, in shorter pieces). It stays the daemon's: with
//! `SCHED_FLAG_RESET_ON_FORK`, every process and thread made from these threads starts
//! with the kernel's defaults, so a job (a compiler, a test run) is scheduled exactly
//! as it would be without the daemon, never in short turns. (That flag also resets a
//! negative nice to 0 in what is forked: a daemon started at a raised priority does not
//! pass it on to its jobs.) An older kernel takes the call and ignores the slice; a
//! refusal changes nothing, so it is not reported.

/// The shortest slice the kernel accepts (100 µs; it clamps to 0.1–100 ms).
#[cfg(target_os = "linux")]
const SLICE_NS: u64 = 100_000;

/// `SCHED_FLAG_RESET_ON_FORK` (include/uapi/linux/sched.h): what this thread forks
/// starts with the default policy, nice (when it was negative) and slice.
#[cfg(target_os = "linux")]
const SCHED_FLAG_RESET_ON_FORK: u64 = 0x01;

/// Asks for short turns for the calling thread (see the module's doc).
#[cfg(target_os = "linux")]
pub fn short_turns() {
    set_slice(SLICE_NS);
}

/// The kernel's default turn for the calling thread until the guard is dropped, then
/// short turns again: for a job's launch on the connection's thread, about half a
/// millisecond of CPU (the job's files, its cgroup, the clone, the wait for its exec).
/// Cut into 100 µs turns on busy cores, each turn waits for a core again: measured on 2
/// cores at a load of 22 (other builds), a spawn through the daemon took 20.2 ms
/// (median of 8 rounds of 40) in short turns and 14.1 ms with this thread at the
/// default, its round trips unchanged (BENCHMARKS.md, "The daemon at in-process
/// speed"). A wake-up is what short turns are for; a launch is work.
#[cfg(target_os = "linux")]
pub fn long_turn() -> LongTurn {
    LongTurn {
        changed: set_slice(DEFAULT_SLICE),
    }
}

/// Short turns again when dropped (`long_turn`).
#[cfg(target_os = "linux")]
pub struct LongTurn {
    changed: bool,
}

#[cfg(target_os = "linux")]
impl Drop for LongTurn {
    fn drop(&mut self) {
        if self.changed {
            short_turns();
        }
    }
}

/// `sched_runtime` 0: the kernel's default slice.
#[cfg(target_os = "linux")]
const DEFAULT_SLICE: u64 = 0;

/// Sets the calling thread's slice (`DEFAULT_SLICE`: the kernel's); whether it was set.
#[cfg(target_os = "linux")]
fn set_slice(slice_ns: u64) -> bool {
    // Only the normal policy has slices to ask for; a daemon its user started at
    // SCHED_BATCH or SCHED_IDLE (or real-time) is left as it was started.
    // SAFETY: sched_getscheduler(0) reads this thread's policy.
    let policy = unsafe { libc::sched_getscheduler(0) } & !libc::SCHED_RESET_ON_FORK;
    if policy != libc::SCHED_OTHER {
        return false;
    }
    let attr = libc::sched_attr {
        size: std::mem::size_of::<libc::sched_attr>() as u32,
        sched_policy: libc::SCHED_OTHER as u32,
        // Kept in a long turn too: a job forked meanwhile starts with the defaults.
        sched_flags: SCHED_FLAG_RESET_ON_FORK,
        sched_nice: current_nice(),
        sched_priority: 0,
        sched_runtime: slice_ns,
        sched_deadline: 0,
        sched_period: 0,
    };
    // SAFETY: sched_setattr(0: this thread, a valid attr of its declared size, flags 0).
    unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const libc::sched_attr, 0) == 0 }
}

/// The thread's nice value, kept as it is (`sched_setattr` sets it too).
#[cfg(target_os = "linux")]
fn current_nice() -> i32 {
    // getpriority returns -1 for a nice of -1 as for an error: errno tells them apart,
    // and an error keeps the default 0.
    // SAFETY: getpriority on this thread's id; errno is this thread's.
    unsafe {
        *libc::__errno_location() = 0;
        let nice = libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t);
        if nice == -1 && *libc::__errno_location() != 0 {
            0
        } else {
            nice
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub fn short_turns() {}

#[cfg(not(target_os = "linux"))]
pub struct LongTurn;

#[cfg(not(target_os = "linux"))]
pub fn long_turn() -> LongTurn {
    LongTurn
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// This thread's slice in ns, from the kernel's own account of it (`None` where the
    /// kernel shows none: built without scheduler debugging, or before EEVDF).
    fn slice() -> Option<u64> {
        let sched = std::fs::read_to_string("/proc/thread-self/sched").ok()?;
        let line = sched.lines().find(|l| l.starts_with("se.slice"))?;
        line.rsplit(':').next()?.trim().parse().ok()
    }

    #[test]
    fn a_long_turn_ends_in_short_turns_again() {
        // On a thread of its own: the test harness's threads are left as they were.
        std::thread::spawn(|| {
            short_turns();
            if slice() != Some(SLICE_NS) {
                // Before Linux 6.12 the slice asked for is ignored (see the module's doc).
                eprintln!("skipped: this kernel shows no slice of ours ({:?})", slice());
                return;
            }
            {
                let _launching = long_turn();
                assert_ne!(slice(), Some(SLICE_NS), "the launch runs in the kernel's default slice");
            }
            assert_eq!(slice(), Some(SLICE_NS));
        })
        .join()
        .unwrap();
    }
}
