//! The exits of this process's jobs learnt through ONE io_uring for the whole process,
//! so that an idle job holds no descriptor for its exit (a pidfd per job was one).
//!
//! Each job is one `IORING_OP_WAITID` (Linux 6.7) on the ring: `P_PID` with the job's
//! pid, `WEXITED | WNOWAIT`, so the kernel tells when exactly that child has exited and
//! writes its `siginfo` into a buffer the ring keeps for it, without reaping it. Only
//! that pid is ever waited for: Node's own children stay libuv's, the daemon's orphans
//! stay its orphan reaper's (src/platform/unix/reap.rs).
//!
//! Who reaps: the job's watcher (`super::child::ChildProcess`), told by the ring or
//! seeing the exit itself when its terminal hangs up (src/job/driver.rs), so that a
//! short job's exit needs no hand-over through this thread. A reap goes by the pid's
//! number (`waitpid`), which names our child only while that child is not reaped yet:
//! every reap of a watched pid is made under its `Slot`'s lock, and only while the slot
//! says it is not reaped, so no reap can take a later process given the same number.
//! The ring's thread reaps only for a watcher that is gone (`Slot::watcher_gone`).
//! An armed wait holds the pid's `struct pid` (`kernel_waitid_prepare`), so a process
//! its watcher reaped completes it with `ECHILD`, never with a later process's exit; a
//! wait armed after the watcher reaped (its number then free) may find a later process
//! given that number: its completion finds the slot reaped and does nothing.
//!
//! Why a thread of its own, the ring's only submitter of waits: the kernel looks for
//! the exited child in the task that submitted the wait (it runs as that task's
//! task_work), and a submitter's pending requests go with it when that thread ends.
//! The threads that start jobs do end (a Node worker's, a runtime's workers at its
//! shutdown), so every wait is submitted by `exit-ring`, which lives as long as the
//! process. Others hand it their pid through a queue and wake it with a `NOP` (the one
//! kind of entry another thread submits, and only one at a time).
//!
//! The thread sleeps in `poll` on the ring's descriptor, not in `io_uring_enter`: a
//! ring's wait counts as I/O wait (in `%iowait` and the I/O pressure of PSI) before
//! Linux 6.15, and this one waits all the time. A child's exit wakes it through the
//! task_work the kernel queues for it; it then flushes what overflowed (a burst bigger
//! than the completion queue is kept by the kernel, `IORING_FEAT_NODROP`) and reads the
//! completions.
//!
//! Where there is no such ring (before 6.7, `kernel.io_uring_disabled`, a seccomp
//! profile that refuses io_uring, as container runtimes' default ones do) `exit_watch`
//! says why, and each job has a pidfd (`super::child`).

use std::collections::HashMap;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use io_uring::{opcode, squeue, IoUring};
use tokio::sync::oneshot;

use crate::base::sync::lock;
use crate::platform::ExitWatch;

/// Submission entries: waits go in batches of at most this many.
const SQ_ENTRIES: u32 = 64;
/// Completion entries: a burst of exits up to this many is read without the kernel
/// keeping any aside (more are kept aside, never dropped).
const CQ_ENTRIES: u32 = 1024;
/// The `user_data` of a wake-up `NOP`; waits are numbered from 1.
const WAKE: u64 = 0;

/// What a job's watcher is sent: its process has exited (with this status; not reaped:
/// the watcher reaps it), or why the ring could not tell (the watcher then waits another
/// way: `super::child`).
pub type Sent = io::Result<ExitStatus>;

/// Who may reap one watched pid, shared by its watcher and the ring's thread. Every
/// reap of the pid is made under `state`'s lock while `reaped` is false (see the
/// module's text).
#[derive(Default)]
pub struct Slot {
    state: Mutex<SlotState>,
}

#[derive(Default)]
struct SlotState {
    /// Reaped, by the watcher or the ring's thread: the number may name another process.
    reaped: bool,
    /// The ring saw the exit (and told the watcher, if it was still there).
    exited: bool,
    /// The watcher was dropped before it reaped: the ring's thread reaps at the exit.
    watcher_gone: bool,
}

impl Slot {
    /// Reaps `pid` if it has exited, unless it was reaped already: `Some` the status
    /// of this reap. `pid` must be the child this slot was made for.
    pub fn reap_if_exited(&self, pid: i32) -> io::Result<Option<ExitStatus>> {
        let mut state = lock(&self.state);
        if state.reaped {
            return Ok(None);
        }
        let reaped = crate::platform::unix::reap::try_reap(pid);
        if matches!(reaped, Ok(Some(_)) | Err(_)) {
            state.reaped = true;
        }
        reaped
    }

    /// The watcher goes without having reaped: it reaps now if the ring saw the exit,
    /// else the ring's thread will at the exit (its wait must be armed or asked for).
    pub fn watcher_leaves(&self, pid: i32) {
        let mut state = lock(&self.state);
        if state.reaped {
            return;
        }
        if state.exited {
            state.reaped = true;
            drop(state);
            let _ = crate::platform::unix::reap::try_reap(pid);
        } else {
            state.watcher_gone = true;
        }
    }
}

struct Ring {
    ring: IoUring,
    /// Held by whoever pushes to and submits the submission queue, so that each
    /// submitter submits only what it pushed itself: a wait submitted by another
    /// thread would be that thread's (see the module's text).
    submitting: Mutex<()>,
    queue: Mutex<Queue>,
}

#[derive(Default)]
struct Queue {
    /// Pids to watch, not yet taken by the ring's thread.
    asked: Vec<(i32, Arc<Slot>, oneshot::Sender<Sent>)>,
    /// A wake-up is on its way: further requests need none until the thread takes them.
    wake_sent: bool,
}

/// A wait the kernel holds: its siginfo is written where `info` points, so the box
/// lives here until its completion comes.
struct Armed {
    pid: i32,
    slot: Arc<Slot>,
    info: Box<libc::siginfo_t>,
    reply: oneshot::Sender<Sent>,
}

static RING: OnceLock<Result<&'static Ring, String>> = OnceLock::new();
/// Set when the ring failed for good after it was made (`give_up`): no new waits.
static BROKEN: AtomicBool = AtomicBool::new(false);

/// How this process learns of its jobs' exits, found once (the ring is made then).
pub fn exit_watch() -> ExitWatch {
    match ring() {
        Ok(_) if BROKEN.load(Ordering::SeqCst) => ExitWatch {
            mechanism: "pidfd",
            fallback_reason: Some("the exit ring failed after it was made".into()),
        },
        Ok(_) => ExitWatch {
            mechanism: "io_uring",
            fallback_reason: None,
        },
        Err(why) => ExitWatch {
            mechanism: "pidfd",
            fallback_reason: Some(why.clone()),
        },
    }
}

/// Whether jobs' exits can be watched by the ring (`watch` may still fail later).
pub fn available() -> bool {
    ring().is_ok() && !BROKEN.load(Ordering::SeqCst)
}

/// Watches `pid`, a child of this process that nothing reaps but under `slot` (see the
/// module's text): its exit status is sent once it has exited; the watcher reaps it
/// then (`Slot::reap_if_exited`), or the ring's thread does if the watcher has left.
/// Err: there is no ring here (the caller watches it another way).
pub fn watch(pid: i32, slot: Arc<Slot>) -> Result<oneshot::Receiver<Sent>, ()> {
    let ring = ring().as_ref().map_err(|_| ())?;
    if BROKEN.load(Ordering::SeqCst) {
        return Err(());
    }
    let (reply, receiver) = oneshot::channel();
    let wake = {
        let mut queue = lock(&ring.queue);
        queue.asked.push((pid, slot, reply));
        !std::mem::replace(&mut queue.wake_sent, true)
    };
    if wake
        && ring
            .submit_locked(&[opcode::Nop::new().build().user_data(WAKE)])
            .is_err()
    {
        // Not woken: the next request tries again (the pid waits in the queue).
        lock(&ring.queue).wake_sent = false;
    }
    Ok(receiver)
}

fn ring() -> &'static Result<&'static Ring, String> {
    RING.get_or_init(|| {
        let ring = Ring::open()?;
        // Leaked on purpose: the ring's thread and the kernel's armed waits use it
        // for the rest of the process's life.
        let ring: &'static Ring = Box::leak(Box::new(ring));
        std::thread::Builder::new()
            .name("exit-ring".into())
            .spawn(move || ring.serve())
            .map_err(|e| format!("no thread for the exit ring ({e})"))?;
        Ok(ring)
    })
}

impl Ring {
    fn open() -> Result<Ring, String> {
        let ring = IoUring::builder()
            // Node's fork()s for its child_process do not copy the ring's memory.
            .dontfork()
            .setup_cqsize(CQ_ENTRIES)
            .build(SQ_ENTRIES)
            .map_err(|e| format!("io_uring_setup refused ({e})"))?;
        if !ring.params().is_feature_nodrop() {
            return Err("this kernel's io_uring may drop completions (no IORING_FEAT_NODROP)".into());
        }
        let mut probe = io_uring::Probe::new();
        ring.submitter()
            .register_probe(&mut probe)
            .map_err(|e| format!("io_uring's probe refused ({e})"))?;
        if !probe.is_supported(opcode::WaitId::CODE) {
            return Err("this kernel's io_uring has no IORING_OP_WAITID (Linux 6.7)".into());
        }
        let ring = Ring {
            ring,
            submitting: Mutex::new(()),
            queue: Mutex::new(Queue::default()),
        };
        // A seccomp profile may allow the setup and refuse io_uring_enter: one NOP
        // through it, and its completion read, before any job relies on the ring.
        ring.submit_locked(&[opcode::Nop::new().build().user_data(WAKE)])
            .and_then(|_| ring.ring.submitter().submit_and_wait(1))
            .map_err(|e| format!("io_uring_enter refused ({e})"))?;
        // SAFETY: no thread reads the completion queue yet: the ring is not shared.
        unsafe { ring.ring.completion_shared() }.for_each(drop);
        Ok(ring)
    }

    /// Pushes `entries` and submits them, under `submitting`.
    fn submit_locked(&self, entries: &[squeue::Entry]) -> io::Result<()> {
        let _submitting = lock(&self.submitting);
        for chunk in entries.chunks(SQ_ENTRIES as usize) {
            {
                // SAFETY: the submission queue is touched only under `submitting`.
                let mut sq = unsafe { self.ring.submission_shared() };
                // SAFETY: a NOP's entry points at nothing; a wait's at an `Armed`'s
                // boxed siginfo, kept until its completion is read (`serve`).
                unsafe { sq.push_multiple(chunk) }.map_err(|_| io::Error::other("io_uring submission queue full"))?;
            }
            self.submit_all()?;
        }
        Ok(())
    }

    /// Submits until the submission queue is empty (the kernel may take fewer at once).
    fn submit_all(&self) -> io::Result<()> {
        let mut tries = 0;
        loop {
            // SAFETY: under `submitting` (the caller's), no other thread changes it.
            if unsafe { self.ring.submission_shared() }.is_empty() {
                return Ok(());
            }
            match self.ring.submit() {
                Ok(_) => {}
                Err(e) if retryable(&e) && tries < 1000 => {
                    tries += 1;
                    std::thread::yield_now();
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The ring's thread: arms the waits asked for, sleeps until something completes,
    /// hands each exit to its watcher.
    fn serve(&'static self) {
        let mut armed = ArmedWaits::default();
        let armed = &mut armed.0;
        let mut next: u64 = WAKE + 1;
        loop {
            let asked = {
                let mut queue = lock(&self.queue);
                queue.wake_sent = false;
                std::mem::take(&mut queue.asked)
            };
            let first = next;
            let mut entries = Vec::with_capacity(asked.len());
            for (pid, slot, reply) in asked {
                if lock(&slot.state).reaped {
                    // Its watcher reaped it before the wait was armed: the number may
                    // be another process's now.
                    continue;
                }
                // SAFETY: all zeros is a valid siginfo_t.
                let info: Box<libc::siginfo_t> = Box::new(unsafe { std::mem::zeroed() });
                // WNOWAIT: told, not reaped; the reap is made under the slot's lock.
                let entry = opcode::WaitId::new(libc::P_PID, pid as libc::id_t, libc::WEXITED | libc::WNOWAIT)
                    .infop(&*info as *const libc::siginfo_t)
                    .build()
                    .user_data(next);
                armed.insert(next, Armed { pid, slot, info, reply });
                entries.push(entry);
                next += 1;
            }
            if let Err(e) = self.submit_locked(&entries) {
                give_up(armed, first..next, &e);
            }
            self.wait_for_completions();
            self.read_completions(armed);
        }
    }

    /// Sleeps until the ring has completions (or task_work that makes them) and lets
    /// the kernel move those it kept aside into the queue.
    fn wait_for_completions(&self) {
        let mut fds = [libc::pollfd {
            fd: self.ring.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        // SAFETY: one pollfd of ours, no timeout. An interrupted poll only returns
        // early: the completions are read, and the loop comes back here.
        unsafe { libc::poll(fds.as_mut_ptr(), 1, -1) };
        // SAFETY: nothing submitted, nothing waited for: GETEVENTS runs the task_work
        // and flushes the completions the kernel kept aside into the queue.
        let _ = unsafe { self.ring.submitter().enter::<libc::sigset_t>(0, 0, GETEVENTS, None) };
    }

    fn read_completions(&self, armed: &mut HashMap<u64, Armed>) {
        // SAFETY: only this thread reads the completion queue.
        let done: Vec<(u64, i32)> = unsafe { self.ring.completion_shared() }
            .map(|cqe| (cqe.user_data(), cqe.result()))
            .collect();
        for (id, result) in done {
            let Some(wait) = armed.remove(&id) else { continue };
            let mut state = lock(&wait.slot.state);
            if state.reaped {
                // Reaped by its watcher (this wait then ends with ECHILD), or a wait
                // armed after that reap: nothing to tell, nothing to reap.
                continue;
            }
            let sent = if result < 0 {
                Err(io::Error::from_raw_os_error(-result))
            } else {
                state.exited = true;
                Ok(status_of(&wait.info))
            };
            if state.watcher_gone {
                if sent.is_ok() {
                    // Nobody else will: reaped here, under the lock, while the number
                    // is still this child's.
                    state.reaped = true;
                    let _ = crate::platform::unix::reap::try_reap(wait.pid);
                } else {
                    crate::platform::unix::reap::reap_or_remember(wait.pid);
                }
                continue;
            }
            // Under the lock: a watcher leaving now finds `exited` and reaps itself.
            let _ = wait.reply.send(sent);
        }
    }
}

/// The waits the kernel holds, by `user_data`. Should the ring's thread ever end (a
/// panic), their siginfo buffers are let go without being freed: the kernel still holds
/// their addresses. Their watchers then see the channel closed and watch another way.
#[derive(Default)]
struct ArmedWaits(HashMap<u64, Armed>);

impl Drop for ArmedWaits {
    fn drop(&mut self) {
        for (_, wait) in self.0.drain() {
            std::mem::forget(wait.info);
        }
    }
}

/// `IORING_ENTER_GETEVENTS` (linux/io_uring.h).
const GETEVENTS: u32 = 1;

fn retryable(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN | libc::EBUSY))
}

/// The ring can no longer take waits (`io_uring_enter` failed for good): the waits of
/// the failed batch are told so, their watchers watch each process another way, and
/// new jobs get pidfds. Their siginfo buffers are let go without being freed: the kernel
/// may have taken some of the batch and may still write into them.
fn give_up(armed: &mut HashMap<u64, Armed>, ids: std::ops::Range<u64>, e: &io::Error) {
    BROKEN.store(true, Ordering::SeqCst);
    for id in ids {
        if let Some(wait) = armed.remove(&id) {
            std::mem::forget(wait.info);
            let state = lock(&wait.slot.state);
            if state.reaped {
                continue;
            }
            if state.watcher_gone {
                // Reaped by a later launch, as a dropped pidfd watcher's process is.
                crate::platform::unix::reap::reap_or_remember(wait.pid);
                continue;
            }
            let _ = wait
                .reply
                .send(Err(io::Error::new(e.kind(), format!("exit ring: {e}"))));
        }
    }
}

/// The wait status `waitpid` would have given, from the siginfo the kernel wrote.
fn status_of(info: &libc::siginfo_t) -> ExitStatus {
    // SAFETY: the kernel filled it for a CLD_* event: si_status is set.
    let status = unsafe { info.si_status() };
    let raw = match info.si_code {
        libc::CLD_EXITED => (status & 0xff) << 8,
        libc::CLD_DUMPED => (status & 0x7f) | 0x80,
        _ => status & 0x7f,
    };
    ExitStatus::from_raw(raw)
}
