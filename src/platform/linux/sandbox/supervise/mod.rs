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
//! **What is read, when, by whom.** Threads of the service (`Supervisor`) wait on every
//! supervised job's listener (one `epoll` set); the one woken takes the notification
//! and handles it: it copies the address (and for a send the data and the
//! ancillary data) out of the job's memory (`process_vm_readv`), opens a pathname
//! socket's file from that copy (`unix_path`), judges the file by identity, and makes
//! the call itself, on a duplicate of the job's socket, to `/proc/self/fd/N` of the
//! file it judged (`perform`). After every read of the job (memory, working directory,
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
//! have for the job: another thread is always waiting for the next notification, so one
//! job's blocked call never holds up another job's.

mod abandoned;
mod address;
mod job;
mod listener;
mod perform;
mod unix_path;

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

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
/// until no process of it is left (the listener then reports a hang-up).
pub fn start(listener: OwnedFd, policy: Arc<Policy>) -> io::Result<()> {
    supervisor()?.add(listener, policy)
}

/// A job being supervised.
struct Supervised {
    listener: OwnedFd,
    policy: Arc<Policy>,
}

/// Every supervised job's listener in one `epoll` set, and the threads that wait on it.
/// Each listener is registered one-shot: the thread woken for it takes one
/// notification, arms the listener again (so another thread can take the job's next
/// call at once) and handles the one it took, blocking if the call blocks. One thread
/// at least is always waiting: the one that takes the last idle place starts another
/// (up to `MAX_THREADS`), so a notification costs one wake-up, and one job's blocked
/// call never holds up another's.
struct Supervisor {
    epoll: OwnedFd,
    jobs: Mutex<HashMap<u64, Arc<Supervised>>>,
    next: AtomicU64,
    /// Threads waiting in `epoll_wait`, and all of them.
    idle: AtomicUsize,
    threads: AtomicUsize,
}

/// Threads at most: past this, calls wait for a thread (each blocked call holds one).
const MAX_THREADS: usize = 256;
/// How long a spare waiting thread stays before it ends (the last one stays).
const IDLE: Duration = Duration::from_secs(10);
/// How often a waiting thread looks for calls whose caller is gone (`abandoned`).
const LOOK: Duration = Duration::from_secs(1);

fn supervisor() -> io::Result<&'static Supervisor> {
    static SUPERVISOR: OnceLock<Result<Supervisor, String>> = OnceLock::new();
    SUPERVISOR
        .get_or_init(|| {
            let epoll = rustix::event::epoll::create(rustix::event::epoll::CreateFlags::CLOEXEC)
                .map_err(|e| format!("epoll: {e}"))?;
            Ok(Supervisor {
                epoll,
                jobs: Mutex::new(HashMap::new()),
                next: AtomicU64::new(1),
                idle: AtomicUsize::new(0),
                threads: AtomicUsize::new(0),
            })
        })
        .as_ref()
        .map_err(|e| io::Error::other(format!("the unix socket supervisor: {e}")))
}

fn armed() -> rustix::event::epoll::EventFlags {
    use rustix::event::epoll::EventFlags;
    EventFlags::IN | EventFlags::ONESHOT
}

impl Supervisor {
    fn add(&'static self, listener: OwnedFd, policy: Arc<Policy>) -> io::Result<()> {
        use rustix::event::epoll;
        if self.threads.load(Ordering::Acquire) == 0 {
            self.spawn()?;
        }
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        listener::wake_up_in_turn(listener.as_fd());
        let job = Arc::new(Supervised { listener, policy });
        self.lock().insert(key, job.clone());
        let added = epoll::add(
            &self.epoll,
            job.listener.as_fd(),
            epoll::EventData::new_u64(key),
            armed(),
        );
        if let Err(e) = added {
            self.lock().remove(&key);
            return Err(e.into());
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Supervised>>> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn spawn(&'static self) -> io::Result<()> {
        self.threads.fetch_add(1, Ordering::AcqRel);
        let spawned = std::thread::Builder::new()
            .name("unix-socket-supervisor".into())
            .stack_size(256 << 10)
            .spawn(move || self.wait());
        if let Err(e) = spawned {
            self.threads.fetch_sub(1, Ordering::AcqRel);
            return Err(e);
        }
        Ok(())
    }

    fn wait(&'static self) {
        use rustix::event::epoll;
        let mut events: Vec<epoll::Event> = Vec::with_capacity(1);
        let look = rustix::fs::Timespec {
            tv_sec: LOOK.as_secs() as _,
            tv_nsec: 0,
        };
        let (mut since, mut looked) = (std::time::Instant::now(), std::time::Instant::now());
        loop {
            events.clear();
            self.idle.fetch_add(1, Ordering::AcqRel);
            let waited = epoll::wait(&self.epoll, rustix::buffer::spare_capacity(&mut events), Some(&look));
            let still_idle = self.idle.fetch_sub(1, Ordering::AcqRel) - 1;
            if looked.elapsed() >= LOOK {
                abandoned::interrupt_abandoned();
                looked = std::time::Instant::now();
            }
            let Some(event) = events.first().filter(|_| waited.is_ok()) else {
                // Nothing for a while: a spare thread ends, the last one stays.
                if since.elapsed() >= IDLE && self.threads.load(Ordering::Acquire) > 1 && still_idle > 0 {
                    self.threads.fetch_sub(1, Ordering::AcqRel);
                    return;
                }
                continue;
            };
            since = std::time::Instant::now();
            let (flags, data) = (event.flags, event.data);
            let key = data.u64();
            let Some(job) = self.lock().get(&key).cloned() else {
                continue;
            };
            if flags.intersects(epoll::EventFlags::HUP | epoll::EventFlags::ERR) {
                // No process of the job is left: none can call again.
                let _ = epoll::delete(&self.epoll, job.listener.as_fd());
                self.lock().remove(&key);
                continue;
            }
            let taken = listener::receive(job.listener.as_fd());
            // Armed again before the call is handled: the job's other threads are not
            // kept waiting behind this one.
            let _ = epoll::modify(
                &self.epoll,
                job.listener.as_fd(),
                epoll::EventData::new_u64(key),
                armed(),
            );
            if still_idle == 0 && self.threads.load(Ordering::Acquire) < MAX_THREADS {
                // Never none waiting. Without one more thread, the calls wait for this
                // one: slower, still answered.
                let _ = self.spawn();
            }
            // An error: the caller was interrupted by a fatal signal since.
            if let Ok(notif) = taken {
                handle(&job, notif);
            }
        }
    }
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
/// kernel allows one per chain of filters, `EBUSY`), asked once, on a thread made for
/// it: a filter and `NO_NEW_PRIVS` set on a thread stay on that thread, which ends.
pub fn listener_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        std::thread::spawn(|| {
            // SAFETY: a flag on this thread only.
            if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) } < 0 {
                return false;
            }
            let allow = [libc::sock_filter {
                code: 0x06,
                jt: 0,
                jf: 0,
                k: libc::SECCOMP_RET_ALLOW,
            }];
            let program = libc::sock_fprog {
                len: 1,
                filter: allow.as_ptr() as *mut libc::sock_filter,
            };
            // SAFETY: a one-instruction program on the stack; it confines this thread.
            let fd = unsafe {
                libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as u32,
                    &program as *const libc::sock_fprog,
                )
            };
            if fd >= 0 {
                // SAFETY: the listener just made, ours.
                unsafe { libc::close(fd as i32) };
            }
            fd >= 0
        })
        .join()
        .unwrap_or(false)
    })
}
