//! Pathname unix sockets below Landlock ABI 9: the service decides which a job reaches.
//!
//! Below ABI 9 no kernel rule confines `connect` to a pathname unix socket, and behind
//! those are the D-Bus session bus (`systemd-run --user` runs anything unconfined),
//! ssh-agent (signs with the user's keys), the docker socket, this project's own
//! daemon. The job's seccomp filter therefore hands every call that can name one to
//! the service (`SECCOMP_RET_USER_NOTIF`: `connect`, `sendto` with an address,
//! `sendmsg`, `sendmmsg`; `super::refusals::supervised_calls`), through the listener its filter is
//! installed with (`super::watch` says how the listener reaches the service). The
//! calling thread waits, and ignores every signal but a fatal one while it does
//! (`SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`), so a call the supervisor made is never
//! made again by a restarted one.
//!
//! **What is read, when, by whom.** Threads of the service, each job its own
//! (`Supervised`) from its first supervised call (before it, the job's listener waits
//! in the `lobby`, which wakes no thread at the spawn), wait in
//! `SECCOMP_IOCTL_NOTIF_RECV` on the job's listener; the one
//! woken takes the notification and handles it: it copies the address (and for a send
//! the data and the ancillary data) out of the job's memory (`process_vm_readv`), opens
//! a pathname socket's file from that copy (`unix_path`), judges the file by identity,
//! and makes the call itself, on a duplicate of the job's socket, to `/proc/self/fd/N`
//! of the file it judged (`perform`). After every read of the job (memory, working directory,
//! descriptor) it asks whether the call is still waiting (`SECCOMP_IOCTL_NOTIF_ID_VALID`):
//! the pid is the thread's only while it waits.
//!
//! **Why no race lets a path through.** The job can change its memory at any time: the
//! supervisor reads the address once and never lets the kernel read it again (no
//! `SECCOMP_USER_NOTIF_FLAG_CONTINUE`). It can change the file system at any time: the
//! decision is on the file opened, by device and inode, and the call reaches that file
//! through its descriptor, not through a name. It can exit or be killed mid-decision:
//! the answer to a call that no longer waits is dropped, and nothing was done for it
//! unless its thread was alive when it was done (a fatal signal after that only kills
//! the thread whose call was made). The allowed sockets are identities found when the
//! sandbox was made (`crate::sandbox::Resolved::unix_sockets`), and the job's writable
//! directories the ones its Landlock rules were made from, never names a job wrote.
//!
//! A call may block (a connect to a busy server, a send to a full socket), as it would
//! have for the job: another of the job's threads is always waiting for its next
//! notification, and other jobs have threads of their own, so a blocked call holds up
//! no other call.

mod abandoned;
mod address;
pub mod handover;
mod job;
mod listener;
mod lobby;
mod perform;
mod unix_path;

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use super::watch;

use crate::sandbox::{effective_network, FileId, JobSandbox, Network};

use job::{Caller, Refused};

/// What one job's supervised calls may reach.
#[derive(Debug)]
pub struct Policy {
    /// `sandbox.unixSockets`: the socket files' identities, found when the sandbox was made.
    allowed: Vec<FileId>,
    /// The directories (and files) the job may write, as its Landlock rules grant them:
    /// a socket beneath one is the job's own (ABI 9 lets it reach those too).
    writable: Vec<FileId>,
    /// The job's network, as enforced: the supervisor makes internet connects too, so
    /// it checks what Landlock would have (`address::verdict`).
    network: Network,
}

impl Policy {
    pub fn new(job: &JobSandbox<'_>) -> Self {
        let resolved = job.resolved;
        let mut writable: Vec<FileId> = resolved.write.iter().map(|a| a.id()).collect();
        if !resolved.read_only {
            writable.push(resolved.root.id());
        }
        if let Some(tmpdir) = job.tmpdir.anchor() {
            writable.push(tmpdir.id());
        }
        Self {
            allowed: resolved.unix_sockets.iter().map(|a| a.id()).collect(),
            writable,
            network: effective_network(&resolved.network, &job.support),
        }
    }
}

/// Starts answering the supervised calls of the job whose filter `listener` belongs to,
/// until no process of it is left (the listener then reports a hang-up): from its first
/// call, which the lobby waits for (`lobby.rs`), threads of its own. `pid`: the job's
/// main process, by which a restart in place finds the job's listener (`handover`).
pub fn start(listener: OwnedFd, policy: Arc<Policy>, pid: i32) -> io::Result<()> {
    let job = Arc::new(Supervised {
        listener,
        policy,
        pid,
        waiting: Mutex::new(Vec::new()),
        threads: AtomicUsize::new(0),
    });
    janitor()?.jobs().push(Arc::downgrade(&job));
    // No thread is woken for it until it makes a supervised call (`lobby.rs`).
    lobby::admit(job)
}

/// A job being supervised, and the threads that answer its calls.
///
/// Each thread waits in `SECCOMP_IOCTL_NOTIF_RECV` on the job's listener itself (not in
/// `epoll` first): with `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP` the kernel then
/// wakes it on the CPU of the job's thread that made the call, which waits for the
/// answer anyway, and wakes that thread back on the supervisor's. An `epoll` waiter is
/// woken by an ordinary wake-up, free to land on another CPU: when that CPU is idle,
/// bringing it out of its idle state (a halted virtual CPU, on a VM) costs tens of
/// microseconds each way, which was the slow mode of the measurements (docs/sandbox.md).
/// From the job's first call (`lobby.rs`: until then none is), one thread at least is
/// always waiting: the one that takes the last waiting place
/// starts another (up to `MAX_THREADS` per job), so a call the supervisor makes that
/// blocks never holds up the job's next one. Once the job has ended its threads wait
/// for another job (`Pool`).
struct Supervised {
    listener: OwnedFd,
    policy: Arc<Policy>,
    /// The job's main process (`handover::carried` finds the job by it).
    pid: i32,
    /// The threads waiting in `receive` now.
    waiting: Mutex<Vec<libc::pthread_t>>,
    /// All the job's threads.
    threads: AtomicUsize,
}

/// Threads at most for one job: past this, its calls wait for one of its threads
/// (each blocked call holds one).
const MAX_THREADS: usize = 64;
/// How often the janitor looks for calls whose caller is gone (`abandoned`) and for
/// jobs that have ended.
const LOOK: Duration = Duration::from_secs(1);

impl Supervised {
    fn waiting(&self) -> std::sync::MutexGuard<'_, Vec<libc::pthread_t>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One more thread for `job`: one left idle by an ended job (`Pool`), else a new one.
/// A job's spawn pays a hand-over, not a thread's creation, when jobs follow each other.
fn add_thread(job: &Arc<Supervised>) -> io::Result<()> {
    job.threads.fetch_add(1, Ordering::AcqRel);
    let job = match pool().take(job.clone()) {
        Ok(()) => return Ok(()),
        Err(job) => job,
    };
    let answering = job.clone();
    let spawned = std::thread::Builder::new()
        .name("unix-socket-supervisor".into())
        .stack_size(256 << 10)
        .spawn(move || serve(answering));
    if let Err(e) = spawned {
        job.threads.fetch_sub(1, Ordering::AcqRel);
        return Err(e);
    }
    Ok(())
}

/// A supervisor thread's life: it answers a job's calls until the job ends, then waits
/// (up to `IDLE`) for another job to serve.
fn serve(mut job: Arc<Supervised>) {
    loop {
        answer(&job);
        drop(job);
        match pool().wait() {
            Some(next) => job = next,
            None => return,
        }
    }
}

/// Threads whose job has ended, each waiting for another.
struct Pool {
    idle: Mutex<Vec<(u64, std::sync::mpsc::SyncSender<Arc<Supervised>>)>>,
    next: std::sync::atomic::AtomicU64,
}

/// How long a thread whose job has ended waits for another before it ends.
const IDLE: Duration = Duration::from_secs(10);

fn pool() -> &'static Pool {
    static POOL: Pool = Pool {
        idle: Mutex::new(Vec::new()),
        next: std::sync::atomic::AtomicU64::new(0),
    };
    &POOL
}

impl Pool {
    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<(u64, std::sync::mpsc::SyncSender<Arc<Supervised>>)>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands `job` to an idle thread; `Err(job)` if none is idle.
    fn take(&self, job: Arc<Supervised>) -> Result<(), Arc<Supervised>> {
        let mut job = job;
        loop {
            let Some((_, thread)) = self.idle().pop() else {
                return Err(job);
            };
            // A thread listed waits for its channel until it has unlisted itself.
            match thread.send(job) {
                Ok(()) => return Ok(()),
                Err(std::sync::mpsc::SendError(back)) => job = back,
            }
        }
    }

    /// Waits for a job to serve, `None` after `IDLE` without one.
    fn wait(&self) -> Option<Arc<Supervised>> {
        let (to_me, mine) = std::sync::mpsc::sync_channel(1);
        let token = self.next.fetch_add(1, Ordering::Relaxed);
        self.idle().push((token, to_me));
        if let Ok(job) = mine.recv_timeout(IDLE) {
            return Some(job);
        }
        let mut idle = self.idle();
        match idle.iter().position(|(t, _)| *t == token) {
            Some(at) => {
                idle.swap_remove(at);
                None
            }
            // Taken meanwhile: the job is on its way.
            None => {
                drop(idle);
                mine.recv().ok()
            }
        }
    }
}

/// One thread's loop: takes the job's next call and answers it, until no process of
/// the job is left.
fn answer(job: &Arc<Supervised>) {
    // Set by each of the job's threads as it starts (the same flag each time), not on
    // the spawn's path: until it is set, a call is answered as well, its wake-ups
    // landing wherever the scheduler puts them. Refused before Linux 6.6, with the
    // same effect.
    let _ = listener::wake_up_in_turn(job.listener.as_fd());
    // SAFETY: the calling thread's own id.
    let me = unsafe { libc::pthread_self() };
    loop {
        // Each turn is counted, so a restart in place knows when every call taken is
        // answered and no thread takes another (`handover`).
        handover::enter();
        job.waiting().push(me);
        let taken = listener::receive(job.listener.as_fd());
        let still_waiting = {
            let mut waiting = job.waiting();
            if let Some(at) = waiting.iter().position(|t| *t == me) {
                waiting.swap_remove(at);
            }
            waiting.len()
        };
        let notif = match taken {
            Ok(notif) => notif,
            Err(e) => {
                handover::leave();
                // `ENOENT`: the caller was interrupted by a fatal signal since it was
                // reported, or no process of the job is left (from Linux 6.6 a waiting
                // thread is woken then; before, the janitor interrupts it: `EINTR`).
                if watch::nothing_left(&job.listener) {
                    break;
                }
                if !matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EINTR)) {
                    // Nothing the kernel documents: not a busy loop meanwhile.
                    std::thread::sleep(Duration::from_millis(1));
                }
                continue;
            }
        };
        if still_waiting == 0 && job.threads.load(Ordering::Acquire) < MAX_THREADS {
            // Never none waiting. Without one more thread, the job's calls wait for
            // this one: slower, still answered.
            let _ = add_thread(job);
        }
        handle(job, notif);
        handover::leave();
    }
    job.threads.fetch_sub(1, Ordering::AcqRel);
}

/// The thread that looks, every `LOOK`, for blocked calls whose caller is gone
/// (`abandoned`) and for ended jobs whose threads still wait: before Linux 6.6 a thread
/// waiting in `receive` is not woken when the job's last process exits, so it is
/// interrupted (`abandoned::interrupt`), finds the listener hung up and ends.
struct Janitor {
    jobs: Mutex<Vec<Weak<Supervised>>>,
}

impl Janitor {
    fn jobs(&self) -> std::sync::MutexGuard<'_, Vec<Weak<Supervised>>> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn look(&self) {
        loop {
            std::thread::sleep(LOOK);
            abandoned::interrupt_abandoned();
            let jobs: Vec<Arc<Supervised>> = {
                let mut jobs = self.jobs();
                jobs.retain(|job| job.strong_count() > 0);
                jobs.iter().filter_map(Weak::upgrade).collect()
            };
            for job in jobs.iter().filter(|job| watch::nothing_left(&job.listener)) {
                for &thread in job.waiting().iter() {
                    abandoned::interrupt(thread);
                }
            }
        }
    }
}

fn janitor() -> io::Result<&'static Janitor> {
    static JANITOR: OnceLock<Result<Janitor, String>> = OnceLock::new();
    JANITOR
        .get_or_init(|| {
            std::thread::Builder::new()
                .name("unix-socket-janitor".into())
                .stack_size(128 << 10)
                .spawn(|| {
                    if let Ok(janitor) = janitor() {
                        janitor.look();
                    }
                })
                .map_err(|e| format!("its thread: {e}"))?;
            Ok(Janitor {
                jobs: Mutex::new(Vec::new()),
            })
        })
        .as_ref()
        .map_err(|e| io::Error::other(format!("the unix socket supervisor: {e}")))
}

/// Handles one notification of `job`: answers it, unless it no longer waits.
fn handle(job: &Supervised, notif: libc::seccomp_notif) {
    let caller = Caller {
        listener: job.listener.as_fd(),
        id: notif.id,
        pid: notif.pid as i32,
    };
    match perform::request(&caller, &notif.data, &job.policy) {
        Ok(value) => listener::answer(caller.listener, notif.id, Ok(value)),
        Err(Refused::Errno(errno)) => listener::answer(caller.listener, notif.id, Err(errno)),
        Err(Refused::Gone) => {}
    }
}

/// Whether a listener can be had here (no filter of the host's holds one already: the
/// kernel allows one per chain of filters, `EBUSY`), asked once.
pub fn listener_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| listener::allow_all_listener().is_ok())
}
