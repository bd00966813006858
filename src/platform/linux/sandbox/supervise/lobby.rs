//! Where a supervised job waits until it makes its first supervised call.
//!
//! Most jobs never make one (`true`, a build, a test run: nothing that connects to a
//! pathname socket or sends a message). Handing every job's listener to a thread of
//! its own at the spawn cost a wake-up on the spawn's path, and that thread two more
//! switches (into `SECCOMP_IOCTL_NOTIF_RECV`, and out at the job's end) for nothing:
//! on two cores, CPU taken from the new job and the JS thread. So the spawn only adds
//! the listener to one `epoll` set (no wake-up), watched by one thread for the process;
//! the job's first supervised call makes its listener readable, and that thread then
//! hands the job to a thread that serves it (`super::add_thread`), which waits in
//! `NOTIF_RECV` from then on (the fast, synchronous wake-ups, `super::Supervised`). A
//! job that ends without a call only reports a hang-up here, and is let go.
//!
//! What it costs: the first call of a job is answered after two wake-ups instead of one
//! (this thread's, then its server's), an ordinary one free to land on another CPU;
//! every later call as before. Nothing is let through meanwhile: the job's call waits
//! in the kernel for an answer, which only a server gives, after its checks.

use std::collections::HashMap;
use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use rustix::buffer::spare_capacity;
use rustix::event::epoll;

use super::Supervised;

struct Lobby {
    epoll: OwnedFd,
    /// The jobs waiting here, by the key their listener was added under.
    jobs: Mutex<HashMap<u64, Arc<Supervised>>>,
    next: AtomicU64,
}

impl Lobby {
    fn jobs(&self) -> MutexGuard<'_, HashMap<u64, Arc<Supervised>>> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// How long a job whose server could not be had (no thread could be made) waits before
/// it is tried again; its call waits meanwhile, answered late rather than never.
const RETRY: Duration = Duration::from_millis(10);

fn lobby() -> io::Result<&'static Lobby> {
    static LOBBY: OnceLock<Result<Lobby, String>> = OnceLock::new();
    LOBBY
        .get_or_init(|| {
            let epoll = epoll::create(epoll::CreateFlags::CLOEXEC).map_err(|e| format!("its epoll set: {e}"))?;
            std::thread::Builder::new()
                .name("unix-socket-lobby".into())
                .stack_size(128 << 10)
                .spawn(|| {
                    if let Ok(lobby) = lobby() {
                        watch(lobby);
                    }
                })
                .map_err(|e| format!("its thread: {e}"))?;
            Ok(Lobby {
                epoll,
                jobs: Mutex::new(HashMap::new()),
                next: AtomicU64::new(0),
            })
        })
        .as_ref()
        .map_err(|e| io::Error::other(format!("the unix socket supervisor: {e}")))
}

/// Until its first supervised call: `job` waits here (one `epoll_ctl`, no thread woken).
/// A call it made already is seen at once (the kernel checks the listener as it is
/// added). Fails if the lobby cannot be had: the job's calls would never be answered.
pub(super) fn admit(job: Arc<Supervised>) -> io::Result<()> {
    let lobby = lobby()?;
    let key = lobby.next.fetch_add(1, Ordering::Relaxed);
    // In the map before the set: the thread may see the listener at once.
    lobby.jobs().insert(key, job.clone());
    let flags = epoll::EventFlags::IN | epoll::EventFlags::ONESHOT;
    if let Err(e) = epoll::add(&lobby.epoll, &job.listener, epoll::EventData::new_u64(key), flags) {
        lobby.jobs().remove(&key);
        return Err(e.into());
    }
    Ok(())
}

/// The lobby's thread: each listener that becomes readable has its job handed to a
/// server; one that only hangs up (the job ended without a call) is let go.
fn watch(lobby: &Lobby) {
    let mut events: Vec<epoll::Event> = Vec::with_capacity(64);
    loop {
        events.clear();
        if epoll::wait(&lobby.epoll, spare_capacity(&mut events), None).is_err() {
            // `EINTR`; nothing else is documented for a valid set.
            continue;
        }
        for event in &events {
            // Copied out: the kernel's struct is packed.
            let (flags, data) = (event.flags, event.data);
            let key = data.u64();
            let Some(job) = lobby.jobs().remove(&key) else {
                continue;
            };
            let _ = epoll::delete(&lobby.epoll, &job.listener);
            if !flags.contains(epoll::EventFlags::IN) {
                // A hang-up alone: no process of the job is left, none asked anything.
                continue;
            }
            if super::add_thread(&job).is_err() {
                // No thread to be had now: back in the lobby, tried again shortly.
                std::thread::sleep(RETRY);
                let flags = epoll::EventFlags::IN | epoll::EventFlags::ONESHOT;
                lobby.jobs().insert(key, job.clone());
                if epoll::add(&lobby.epoll, &job.listener, epoll::EventData::new_u64(key), flags).is_err() {
                    lobby.jobs().remove(&key);
                }
            }
        }
    }
}
