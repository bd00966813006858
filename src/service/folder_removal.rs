//! Finished job folders beyond a service's `keep` are removed, or emptied into spares
//! (`output::spare_dir`), by one thread per process, at the lowest priority
//! (`platform::lower_current_thread`), not on the runtime's blocking pool at the
//! default one.
//!
//! A removal is housekeeping that no caller waits for, but it is not cheap: on ext4
//! mounted with `discard` and no journal (this project's CI machines) freeing a
//! folder's blocks issues the discards at once, about 0.15 ms of CPU per folder. Each
//! finished job of a long session removes one, while the next job starts: at the
//! default priority that work took a core from the next job's program and from the JS
//! thread. At nice 19 it waits for a core nobody else wants. The queue is a channel:
//! folders are handled in the order they were given, and a thread that cannot be
//! started leaves the work to the blocking pool as before.

use std::path::PathBuf;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, OnceLock};

use super::spare_pool::SparePool;
use crate::base::sync::lock;
use crate::output::spare_dir;

/// How far the thread's nice value is raised (19, the lowest priority, from 0).
const NICE_STEPS: i32 = 19;

/// What the thread does with a folder.
enum Work {
    Remove(PathBuf),
    /// Made the spare at the second path, and given to the pool.
    Recycle(PathBuf, PathBuf, Arc<SparePool>),
}

impl Work {
    fn run(self) {
        match self {
            Work::Remove(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Work::Recycle(dir, spare, pool) => match spare_dir::scrub(&dir, &spare) {
                Some(made) => {
                    if let Some(unwanted) = pool.offer(made) {
                        let _ = std::fs::remove_dir_all(unwanted.path());
                    }
                }
                None => pool.not_made(),
            },
        }
    }
}

/// Removes `dir` and what it holds, later, on the removal thread (else on `runtime`'s
/// blocking pool).
pub(super) fn remove_later(dir: PathBuf, runtime: &tokio::runtime::Handle) {
    later(Work::Remove(dir), runtime);
}

/// Makes `dir` the spare `spare` for `pool`, later, on the removal thread (else on
/// `runtime`'s blocking pool); a folder that cannot be a spare is removed.
pub(super) fn recycle_later(dir: PathBuf, spare: PathBuf, pool: Arc<SparePool>, runtime: &tokio::runtime::Handle) {
    later(Work::Recycle(dir, spare, pool), runtime);
}

fn later(work: Work, runtime: &tokio::runtime::Handle) {
    static QUEUE: OnceLock<Option<Mutex<Sender<Work>>>> = OnceLock::new();
    let queue = QUEUE.get_or_init(|| {
        let (tx, rx) = channel::<Work>();
        std::thread::Builder::new()
            .name("native-shell-prune".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                // For life: this thread never starts a process (the nice value would be
                // inherited) and does nothing else.
                crate::platform::lower_current_thread(NICE_STEPS);
                for work in rx {
                    work.run();
                }
            })
            .ok()
            .map(|_| Mutex::new(tx))
    });
    let refused = match queue {
        Some(tx) => lock(tx).send(work).err().map(|e| e.0),
        None => Some(work),
    };
    if let Some(work) = refused {
        runtime.spawn_blocking(move || work.run());
    }
}
