//! Finished job folders beyond a service's `keep` are removed by one thread per
//! process, at the lowest priority (`platform::lower_current_thread`), not on the
//! runtime's blocking pool at the default one.
//!
//! A removal is housekeeping that no caller waits for, but it is not cheap: on ext4
//! mounted with `discard` and no journal (this project's CI machines) freeing a
//! folder's blocks issues the discards at once, about 0.15 ms of CPU per folder. Each
//! finished job of a long session removes one, while the next job starts: at the
//! default priority that work took a core from the next job's program and from the JS
//! thread. At nice 19 it waits for a core nobody else wants. The queue is a channel:
//! folders are removed in the order they were given, and a thread that cannot be
//! started leaves the removal to the blocking pool as before.

use std::path::PathBuf;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, OnceLock};

use crate::base::sync::lock;

/// How far the thread's nice value is raised (19, the lowest priority, from 0).
const NICE_STEPS: i32 = 19;

/// Removes `dir` and what it holds, later, on the removal thread (else on `runtime`'s
/// blocking pool).
pub(super) fn remove_later(dir: PathBuf, runtime: &tokio::runtime::Handle) {
    static QUEUE: OnceLock<Option<Mutex<Sender<PathBuf>>>> = OnceLock::new();
    let queue = QUEUE.get_or_init(|| {
        let (tx, rx) = channel::<PathBuf>();
        std::thread::Builder::new()
            .name("native-shell-prune".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                // For life: this thread never starts a process (the nice value would be
                // inherited) and does nothing else.
                crate::platform::lower_current_thread(NICE_STEPS);
                for dir in rx {
                    let _ = std::fs::remove_dir_all(dir);
                }
            })
            .ok()
            .map(|_| Mutex::new(tx))
    });
    let refused = match queue {
        Some(tx) => lock(tx).send(dir).err().map(|e| e.0),
        None => Some(dir),
    };
    if let Some(dir) = refused {
        runtime.spawn_blocking(move || std::fs::remove_dir_all(dir));
    }
}
