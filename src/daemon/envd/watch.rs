//! envd's directory watchers: what `WatchDir` streams (watch_stream.rs) and what
//! `CreateWatcher` / `GetWatcherEvents` / `RemoveWatcher` poll ([`Watchers`]), on the
//! `notify` crate (inotify on Linux; recursive watches follow new subdirectories).
//!
//! As envd: the path must be a directory (`not_found`, else `invalid_argument`); one
//! on a network file system (NFS, CIFS/SMB, FUSE) is refused unless the request allows
//! it; each change becomes events named by the path relative to the watched directory,
//! typed as envd's fsnotify types them (a rename is a `RENAME` of the old name and a
//! `CREATE` of the new; attribute changes are `CHMOD`), with the entry's `EntryInfo`
//! when asked for (never on `REMOVE`/`RENAME`: the entry there is gone or another).
//!
//! **Bounds** (envd has none): at most [`MAX_WATCHERS`] watchers at once on the face,
//! streams and polled ones together (`resource_exhausted` past it: each holds kernel
//! inotify watches, which are per user and few); at most [`MAX_QUEUED`] events waiting
//! in a watcher, past which it fails with `resource_exhausted` (a stream ends with it,
//! a poll answers it) rather than growing or dropping events unseen; the kernel's own
//! queue overflowing fails it the same way. A stream's watcher goes when the stream
//! ends or its client leaves; a polled one when removed or not polled for
//! [`IDLE_POLLED`] (nothing says its client is gone otherwise).

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use notify::event::{EventKind, ModifyKind, RenameMode};
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};
use tokio::sync::Notify;

use super::fs_entry::{entry_at, Bases};
use super::fs_error::{FsCode, FsError};
use super::proto::filesystem::{EventType, FilesystemEvent};
use crate::base::sync::lock;

/// Watchers open at once on the network face, streamed and polled together.
pub const MAX_WATCHERS: usize = 64;
/// Events waiting in one watcher (unsent or unpolled) before it fails.
pub const MAX_QUEUED: usize = 10_000;
/// A polled watcher that nobody polls for this long is removed.
pub const IDLE_POLLED: Duration = Duration::from_secs(10 * 60);

/// What a watch was asked for (`WatchDirRequest` and `CreateWatcherRequest` alike).
pub struct Spec<'a> {
    pub path: &'a str,
    pub recursive: bool,
    pub include_entry: bool,
    pub allow_network_mounts: bool,
}

/// One watch: the crate's watcher (its drop ends the kernel watch and its thread) and
/// the events it queued.
pub struct Watch {
    _watcher: RecommendedWatcher,
    pub shared: Arc<Shared>,
    _slot: Slot,
}

/// What the crate's event thread fills and the stream or a poll drains.
pub struct Shared {
    queue: Mutex<Queue>,
    /// Woken on every event and on failure (a stream waits on it).
    pub woken: Notify,
}

#[derive(Default)]
struct Queue {
    events: VecDeque<FilesystemEvent>,
    failed: Option<FsError>,
}

impl Shared {
    /// The events so far, taken; or why the watcher failed (it stays failed).
    pub fn take(&self) -> Result<Vec<FilesystemEvent>, FsError> {
        let mut queue = lock(&self.queue);
        if let Some(e) = &queue.failed {
            return Err(e.clone());
        }
        Ok(queue.events.drain(..).collect())
    }

    fn push(&self, events: Vec<FilesystemEvent>) {
        let mut queue = lock(&self.queue);
        if queue.failed.is_some() {
            return;
        }
        if queue.events.len() + events.len() > MAX_QUEUED {
            queue.failed = Some(FsError::new(
                FsCode::ResourceExhausted,
                format!("more than {MAX_QUEUED} events waited to be read: the watcher stopped"),
            ));
        } else {
            queue.events.extend(events);
        }
        drop(queue);
        self.woken.notify_one();
    }

    fn fail(&self, e: FsError) {
        let mut queue = lock(&self.queue);
        if queue.failed.is_none() {
            queue.failed = Some(e);
        }
        drop(queue);
        self.woken.notify_one();
    }
}

/// One of the [`MAX_WATCHERS`]; given back when dropped.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The face's watchers: the count of open ones and the polled ones by id.
#[derive(Default)]
pub struct Watchers {
    open: Arc<AtomicUsize>,
    polled: Mutex<HashMap<String, Polled>>,
}

struct Polled {
    watch: Watch,
    last_poll: Instant,
}

impl Watchers {
    /// Starts a watch as `spec` asks (blocking: a recursive watch walks the tree).
    pub fn open(&self, bases: &Bases, spec: &Spec<'_>) -> Result<Watch, FsError> {
        self.sweep();
        let slot = self.slot()?;
        let root = bases.resolve(spec.path)?;
        let meta = std::fs::metadata(&root).map_err(|e| FsError::io(&e, "cannot watch", &root))?;
        if !meta.is_dir() {
            return Err(FsError::new(
                FsCode::InvalidArgument,
                format!("path {} is not a directory", root.display()),
            ));
        }
        if !spec.allow_network_mounts && on_network_mount(&root) {
            return Err(FsError::new(
                FsCode::InvalidArgument,
                format!("cannot watch a path on a network file system: {}", root.display()),
            ));
        }
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            woken: Notify::new(),
        });
        let filling = shared.clone();
        let include_entry = spec.include_entry;
        let base = root.clone();
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
            Ok(event) if event.need_rescan() => filling.fail(FsError::new(
                FsCode::ResourceExhausted,
                "the kernel's event queue overflowed: events were lost, the watcher stopped",
            )),
            Ok(event) => {
                let events = convert(&base, &event, include_entry);
                if !events.is_empty() {
                    filling.push(events);
                }
            }
            Err(e) => filling.fail(FsError::new(FsCode::Internal, format!("watcher error: {e}"))),
        })
        .map_err(|e| watch_error(&e, &root))?;
        let mode = if spec.recursive {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        watcher.watch(&root, mode).map_err(|e| watch_error(&e, &root))?;
        Ok(Watch {
            _watcher: watcher,
            shared,
            _slot: slot,
        })
    }

    fn slot(&self) -> Result<Slot, FsError> {
        let taken = self.open.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < MAX_WATCHERS).then_some(n + 1)
        });
        match taken {
            Ok(_) => Ok(Slot(self.open.clone())),
            Err(_) => Err(FsError::new(
                FsCode::ResourceExhausted,
                format!("{MAX_WATCHERS} watchers are open: remove one (RemoveWatcher) or end a WatchDir stream"),
            )),
        }
    }

    /// `CreateWatcher`: a polled watch, by a new id.
    pub fn create(&self, bases: &Bases, spec: &Spec<'_>) -> Result<String, FsError> {
        let watch = self.open(bases, spec)?;
        let id = new_id()?;
        lock(&self.polled).insert(
            id.clone(),
            Polled {
                watch,
                last_poll: Instant::now(),
            },
        );
        Ok(id)
    }

    /// `GetWatcherEvents`: what the watcher queued since the last call, or its failure.
    pub fn events(&self, id: &str) -> Result<Vec<FilesystemEvent>, FsError> {
        self.sweep();
        let mut polled = lock(&self.polled);
        let entry = polled.get_mut(id).ok_or_else(|| unknown(id))?;
        entry.last_poll = Instant::now();
        entry.watch.shared.take()
    }

    /// `RemoveWatcher`: the watch ends.
    pub fn remove(&self, id: &str) -> Result<(), FsError> {
        let removed = lock(&self.polled).remove(id).ok_or_else(|| unknown(id))?;
        drop(removed);
        Ok(())
    }

    /// Drops the polled watchers nobody polled for [`IDLE_POLLED`].
    fn sweep(&self) {
        let now = Instant::now();
        lock(&self.polled).retain(|_, p| now.duration_since(p.last_poll) < IDLE_POLLED);
    }
}

fn unknown(id: &str) -> FsError {
    FsError::new(FsCode::NotFound, format!("watcher with id {id} not found"))
}

/// `w` and 16 random hex digits: an id nobody guesses (it is not a secret either: the
/// token already admits its holder to every watcher).
fn new_id() -> Result<String, FsError> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| FsError::new(FsCode::Internal, format!("no random id: {e}")))?;
    Ok(format!(
        "w{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ))
}

fn watch_error(e: &notify::Error, root: &Path) -> FsError {
    match &e.kind {
        notify::ErrorKind::Io(io) => FsError::io(io, "cannot watch", root),
        notify::ErrorKind::PathNotFound => FsError::new(
            FsCode::NotFound,
            format!("cannot watch '{}': not found", root.display()),
        ),
        notify::ErrorKind::MaxFilesWatch => FsError::new(
            FsCode::ResourceExhausted,
            format!(
                "cannot watch '{}': the user's inotify watches are used up (fs.inotify.max_user_watches)",
                root.display()
            ),
        ),
        _ => FsError::new(FsCode::Internal, format!("cannot watch '{}': {e}", root.display())),
    }
}

/// A crate event as envd's events: one per path, typed as fsnotify types them.
fn convert(root: &Path, event: &notify::Event, include_entry: bool) -> Vec<FilesystemEvent> {
    let kind = match event.kind {
        EventKind::Create(_) => EventType::Create,
        EventKind::Remove(_) => EventType::Remove,
        EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Any | ModifyKind::Other) => EventType::Write,
        EventKind::Modify(ModifyKind::Metadata(_)) => EventType::Chmod,
        // inotify's IN_MOVED_FROM and IN_MOVED_TO, as fsnotify reports them; the
        // crate's joined `Both` repeats the pair and is skipped.
        EventKind::Modify(ModifyKind::Name(RenameMode::From | RenameMode::Any)) => EventType::Rename,
        EventKind::Modify(ModifyKind::Name(RenameMode::To)) => EventType::Create,
        EventKind::Modify(ModifyKind::Name(RenameMode::Both | RenameMode::Other)) => return Vec::new(),
        // Opens, reads and closes: fsnotify does not report them.
        EventKind::Access(_) | EventKind::Any | EventKind::Other => return Vec::new(),
    };
    let carries_entry = include_entry && matches!(kind, EventType::Create | EventType::Write | EventType::Chmod);
    event
        .paths
        .iter()
        .map(|path| FilesystemEvent {
            name: relative(root, path),
            r#type: kind as i32,
            // Best effort, as envd: an entry gone meanwhile has none.
            entry: carries_entry.then(|| entry_at(path).ok()).flatten(),
        })
        .collect()
}

/// `path` relative to the watched directory (Go's `filepath.Rel`: `.` for itself).
fn relative(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rest) if rest.as_os_str().is_empty() => ".".into(),
        Ok(rest) => rest.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// Whether `path` lies on NFS, CIFS/SMB or FUSE (statfs's magic numbers, as envd
/// checks them): events there come late or never.
#[cfg(target_os = "linux")]
fn on_network_mount(path: &Path) -> bool {
    const NETWORK: [i64; 5] = [0x6969, 0xFF53_4D42, 0x517B, 0xFE53_4D42, 0x6573_5546];
    match rustix::fs::statfs(path) {
        #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
        Ok(stat) => NETWORK.contains(&(stat.f_type as i64)),
        Err(_) => false,
    }
}

#[cfg(not(target_os = "linux"))]
fn on_network_mount(_path: &Path) -> bool {
    false
}
