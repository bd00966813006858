//! Pathname unix sockets below Landlock ABI 9: the service decides which a job reaches.
//!
//! Below ABI 9 no kernel rule confines `connect` to a pathname unix socket, and behind
//! those are the D-Bus session bus (`systemd-run --user` runs anything unconfined),
//! ssh-agent (signs with the user's keys), the docker socket, this project's own
//! daemon. The job's seccomp filter therefore hands every call that can name one to
//! the service (`SECCOMP_RET_USER_NOTIF`: `connect`, `sendto` with an address,
//! `sendmsg`; `super::refusals::supervised_calls`), through the listener its filter is
//! installed with (`super::watch` says how the listener reaches the service). The
//! calling thread waits, and ignores every signal but a fatal one while it does
//! (`SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`), so a call the supervisor made is never
//! made again by a restarted one.
//!
//! **What is read, when, by whom.** One thread of the service (`Supervisor`) waits on
//! every supervised job's listener and takes each notification; a worker thread
//! (`Workers`) handles it: it copies the address (and for a send the data and the
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
//! Every call is made on a worker (a pool: a connect to a busy server or a send to a
//! full socket blocks, as it would have for the job), so one job's blocked call never
//! holds up another job's.

mod address;
mod job;
mod listener;
mod perform;
mod unix_path;

use std::collections::{HashMap, VecDeque};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
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

/// The thread that waits on every supervised job's listener (one `epoll` set).
struct Supervisor {
    epoll: OwnedFd,
    jobs: Mutex<HashMap<u64, Arc<Supervised>>>,
    next: std::sync::atomic::AtomicU64,
}

fn supervisor() -> io::Result<&'static Supervisor> {
    static SUPERVISOR: OnceLock<Result<Supervisor, String>> = OnceLock::new();
    SUPERVISOR
        .get_or_init(|| {
            let epoll = rustix::event::epoll::create(rustix::event::epoll::CreateFlags::CLOEXEC)
                .map_err(|e| format!("epoll: {e}"))?;
            Ok(Supervisor {
                epoll,
                jobs: Mutex::new(HashMap::new()),
                next: std::sync::atomic::AtomicU64::new(1),
            })
        })
        .as_ref()
        .map_err(|e| io::Error::other(format!("the unix socket supervisor: {e}")))
        .and_then(|s| {
            static STARTED: OnceLock<io::Result<()>> = OnceLock::new();
            match STARTED.get_or_init(|| {
                std::thread::Builder::new()
                    .name("unix-socket-supervisor".into())
                    .spawn(move || s.run())
                    .map(drop)
            }) {
                Ok(()) => Ok(s),
                Err(e) => Err(io::Error::new(e.kind(), format!("the unix socket supervisor: {e}"))),
            }
        })
}

impl Supervisor {
    fn add(&self, listener: OwnedFd, policy: Arc<Policy>) -> io::Result<()> {
        use rustix::event::epoll;
        let key = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let job = Arc::new(Supervised { listener, policy });
        self.lock().insert(key, job.clone());
        let added = epoll::add(
            &self.epoll,
            job.listener.as_fd(),
            epoll::EventData::new_u64(key),
            epoll::EventFlags::IN,
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

    fn run(&self) {
        use rustix::event::epoll;
        let mut events: Vec<epoll::Event> = Vec::with_capacity(64);
        loop {
            events.clear();
            if epoll::wait(&self.epoll, rustix::buffer::spare_capacity(&mut events), None).is_err() {
                continue;
            }
            for event in &events {
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
                match listener::receive(job.listener.as_fd()) {
                    Ok(notif) => workers().run(job, notif),
                    // The caller was interrupted by a fatal signal since: nothing to do.
                    Err(_) => continue,
                }
            }
        }
    }
}

/// Handles one notification of `job`, on a worker.
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

type Work = (Arc<Supervised>, libc::seccomp_notif);

/// The threads that make the calls, made as needed and ended after a while idle.
struct Workers {
    queue: Mutex<Queue>,
    ready: Condvar,
}

struct Queue {
    work: VecDeque<Work>,
    idle: usize,
    threads: usize,
}

/// Threads at most: past this, calls wait for a worker (each blocked call holds one).
const MAX_WORKERS: usize = 256;
/// How long an idle worker waits for more before it ends.
const IDLE: Duration = Duration::from_secs(10);

fn workers() -> &'static Workers {
    static WORKERS: OnceLock<Workers> = OnceLock::new();
    WORKERS.get_or_init(|| Workers {
        queue: Mutex::new(Queue {
            work: VecDeque::new(),
            idle: 0,
            threads: 0,
        }),
        ready: Condvar::new(),
    })
}

impl Workers {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn run(&'static self, job: Arc<Supervised>, notif: libc::seccomp_notif) {
        let mut queue = self.lock();
        queue.work.push_back((job, notif));
        if queue.idle == 0 && queue.threads < MAX_WORKERS {
            let spawned = std::thread::Builder::new()
                .name("unix-socket-call".into())
                .stack_size(256 << 10)
                .spawn(move || self.work());
            if spawned.is_ok() {
                queue.threads += 1;
            }
        }
        // With no thread at all (none could be made), the call is refused rather than
        // left waiting: fail closed, and the job is not stuck.
        if queue.threads == 0 {
            if let Some((job, notif)) = queue.work.pop_back() {
                drop(queue);
                listener::answer(job.listener.as_fd(), notif.id, Err(libc::EAGAIN));
            }
            return;
        }
        drop(queue);
        self.ready.notify_one();
    }

    fn work(&self) {
        let mut queue = self.lock();
        loop {
            if let Some((job, notif)) = queue.work.pop_front() {
                drop(queue);
                handle(&job, notif);
                queue = self.lock();
                continue;
            }
            queue.idle += 1;
            let (again, timeout) = self
                .ready
                .wait_timeout(queue, IDLE)
                .unwrap_or_else(|e| e.into_inner());
            queue = again;
            queue.idle -= 1;
            if timeout.timed_out() && queue.work.is_empty() {
                queue.threads -= 1;
                return;
            }
        }
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

