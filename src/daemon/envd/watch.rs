//! envd's directory watchers: what `WatchDir` streams (watch_stream.rs) and what
//! `CreateWatcher` / `GetWatcherEvents` / `RemoveWatcher` poll ([`Watchers`]), on the
//! kernel's inotify through the `inotify` crate (Linux; elsewhere the calls answer
//! `unimplemented`).
//!
//! As envd: the path must be a directory (`not_found`, else `invalid_argument`); one
//! on a network file system (NFS, CIFS/SMB, FUSE) is refused unless the request allows
//! it; each change becomes events named by the path relative to the watched directory,
//! typed as envd's fsnotify types inotify's (a rename is a `RENAME` of the old name and
//! a `CREATE` of the new; attribute changes are `CHMOD`), with the entry's `EntryInfo`
//! when asked for (never on `REMOVE`/`RENAME`: the entry there is gone or another). A
//! recursive watch adds each directory created (or moved in) below as its creation is
//! read.
//!
//! **Read at once and at every poll.** A task per watch reads the inotify descriptor as
//! soon as it is readable (so a new subdirectory is watched before much happens in it,
//! and a stream sends events as they come), and a poll (`GetWatcherEvents`) first reads
//! whatever the kernel holds still, under the same lock: a change made before the poll
//! is in its answer, as the SDKs' `watch_dir` then `get_new_events` expect, whatever
//! the machine's load.
//!
//! **Bounds** (envd has none): at most [`MAX_WATCHERS`] watchers at once on the face,
//! streams and polled ones together (`resource_exhausted` past it: each holds kernel
//! inotify watches, which are per user and few); at most [`MAX_QUEUED`] events waiting
//! in a watcher, past which it fails with `resource_exhausted` (a stream ends with it,
//! a poll answers it) rather than growing or dropping events unseen; the kernel's own
//! queue overflowing fails it the same way. A stream's watcher goes when the stream
//! ends or its client leaves; a polled one when removed or not polled for
//! [`IDLE_POLLED`] (nothing says its client is gone otherwise).

// Elsewhere than Linux the watchers fail at once (no inotify): what only the Linux
// reading uses is left unused there.
#![cfg_attr(not(target_os = "linux"), allow(dead_code, unused_imports))]

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

/// One watch: what its reading task and its readers share, and its place among the
/// [`MAX_WATCHERS`]. Dropped, it stops the task, which closes the inotify descriptor
/// (the kernel's watches go with it).
pub struct Watch {
    pub shared: Arc<Shared>,
    _slot: Slot,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.shared.stop.notify_one();
    }
}

/// The inotify instance, its directories and the events read from it.
pub struct Shared {
    state: Mutex<State>,
    /// Woken when events come or the watch fails (a stream waits on it).
    pub woken: Notify,
    /// Tells the reading task to end.
    stop: Notify,
    root: PathBuf,
    recursive: bool,
    include_entry: bool,
}

struct State {
    #[cfg(target_os = "linux")]
    inotify: inotify::Inotify,
    /// The directory each watch descriptor stands for.
    #[cfg(target_os = "linux")]
    dirs: HashMap<inotify::WatchDescriptor, PathBuf>,
    #[cfg(target_os = "linux")]
    buffer: Vec<u8>,
    events: VecDeque<FilesystemEvent>,
    failed: Option<FsError>,
}

impl Shared {
    /// The events so far (those the kernel still holds read first), taken; or why the
    /// watcher failed (it stays failed).
    pub fn take(&self) -> Result<Vec<FilesystemEvent>, FsError> {
        let mut state = lock(&self.state);
        self.read(&mut state);
        if let Some(e) = &state.failed {
            return Err(e.clone());
        }
        Ok(state.events.drain(..).collect())
    }

    fn fail(&self, state: &mut State, e: FsError) {
        if state.failed.is_none() {
            state.failed = Some(e);
        }
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
            state: Mutex::new(inotify_state(&root, spec.recursive)?),
            woken: Notify::new(),
            stop: Notify::new(),
            root,
            recursive: spec.recursive,
            include_entry: spec.include_entry,
        });
        start_reading(&shared)?;
        Ok(Watch { shared, _slot: slot })
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

/// What inotify is asked to report: fsnotify's set (no opens, reads or closes).
#[cfg(target_os = "linux")]
fn watch_mask() -> inotify::WatchMask {
    use inotify::WatchMask as M;
    M::CREATE | M::MOVED_TO | M::MOVED_FROM | M::MODIFY | M::ATTRIB | M::DELETE | M::DELETE_SELF | M::MOVE_SELF
}

/// An inotify instance watching `root`, and every directory below it when recursive.
#[cfg(target_os = "linux")]
fn inotify_state(root: &Path, recursive: bool) -> Result<State, FsError> {
    let inotify = inotify::Inotify::init().map_err(|e| add_error(&e, root))?;
    let mut state = State {
        inotify,
        dirs: HashMap::new(),
        buffer: vec![0u8; 64 * 1024],
        events: VecDeque::new(),
        failed: None,
    };
    let wd = state
        .inotify
        .watches()
        .add(root, watch_mask())
        .map_err(|e| add_error(&e, root))?;
    state.dirs.insert(wd, root.to_path_buf());
    if recursive {
        add_below(&mut state, root)?;
    }
    Ok(state)
}

#[cfg(not(target_os = "linux"))]
fn inotify_state(_root: &Path, _recursive: bool) -> Result<State, FsError> {
    Err(FsError::new(
        FsCode::FailedPrecondition,
        "directory watchers need Linux's inotify",
    ))
}

/// Watches every directory below `dir` (symlinks not followed). One that cannot be
/// watched (gone meanwhile, not readable) is skipped; running out of the user's inotify
/// watches fails the whole watch.
#[cfg(target_os = "linux")]
fn add_below(state: &mut State, dir: &Path) -> Result<(), FsError> {
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let path = entry.path();
            match state
                .inotify
                .watches()
                .add(&path, watch_mask() | inotify::WatchMask::DONT_FOLLOW)
            {
                Ok(wd) => {
                    state.dirs.insert(wd, path.clone());
                    pending.push(path);
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => return Err(add_error(&e, &path)),
                Err(_) => {}
            }
        }
    }
    Ok(())
}

#[cfg(target_os = "linux")]
fn add_error(e: &std::io::Error, path: &Path) -> FsError {
    match e.raw_os_error() {
        Some(libc::ENOSPC | libc::EMFILE) => FsError::new(
            FsCode::ResourceExhausted,
            format!(
                "cannot watch '{}': the user's inotify instances or watches are used up \
                 (fs.inotify.max_user_instances, max_user_watches)",
                path.display()
            ),
        ),
        _ => FsError::io(e, "cannot watch", path),
    }
}

/// The task that reads the descriptor whenever it is readable, until the watch drops.
#[cfg(target_os = "linux")]
fn start_reading(shared: &Arc<Shared>) -> Result<(), FsError> {
    use std::os::fd::AsFd;
    // A duplicate of the instance's descriptor, owned by the readiness registration:
    // epoll watches the open file description both share, so it is readable when the
    // instance is; and being owned, it is not closed (nor its number reused) while
    // registered.
    let fd = lock(&shared.state)
        .inotify
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| FsError::new(FsCode::Internal, format!("cannot poll the watch: {e}")))?;
    // SAFETY: `fd` is an `OwnedFd` the registration owns, so it stays open for as long
    // as it is registered and is deregistered before it is closed (AsyncFd's drop),
    // which is what `register_with_interest` asks.
    let readiness = unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
        .map_err(|e| FsError::new(FsCode::Internal, format!("cannot poll the watch: {e}")))?;
    let shared = shared.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                ready = readiness.readable() => match ready {
                    Ok(mut guard) => {
                        // Readiness is cleared only when a read found nothing left.
                        let _ = guard.try_io(|_| {
                            shared.read(&mut lock(&shared.state));
                            Err::<(), _>(std::io::Error::from(std::io::ErrorKind::WouldBlock))
                        });
                    }
                    Err(e) => {
                        let mut state = lock(&shared.state);
                        shared.fail(&mut state, FsError::new(FsCode::Internal, format!("watcher error: {e}")));
                        return;
                    }
                },
                _ = shared.stop.notified() => return,
            }
        }
    });
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn start_reading(_shared: &Arc<Shared>) -> Result<(), FsError> {
    Ok(())
}

impl Shared {
    /// Reads every event the kernel holds for this watch into the queue.
    #[cfg(target_os = "linux")]
    fn read(&self, state: &mut State) {
        if state.failed.is_some() {
            return;
        }
        let mut buffer = std::mem::take(&mut state.buffer);
        let mut came = false;
        loop {
            let events = match state.inotify.read_events(&mut buffer) {
                Ok(events) => events,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    self.fail(state, FsError::new(FsCode::Internal, format!("watcher error: {e}")));
                    break;
                }
            };
            let read: Vec<(inotify::WatchDescriptor, inotify::EventMask, Option<std::ffi::OsString>)> = events
                .map(|e| (e.wd, e.mask, e.name.map(std::ffi::OsStr::to_os_string)))
                .collect();
            for (wd, mask, name) in read {
                came |= self.take_event(state, &wd, mask, name.as_deref());
                if state.failed.is_some() {
                    break;
                }
            }
            if state.failed.is_some() {
                break;
            }
        }
        state.buffer = buffer;
        if came {
            self.woken.notify_one();
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn read(&self, _state: &mut State) {}

    /// One inotify event as envd's events (fsnotify's types, in its order); true when
    /// any was queued.
    #[cfg(target_os = "linux")]
    fn take_event(
        &self,
        state: &mut State,
        wd: &inotify::WatchDescriptor,
        mask: inotify::EventMask,
        name: Option<&std::ffi::OsStr>,
    ) -> bool {
        use inotify::EventMask as M;
        if mask.contains(M::Q_OVERFLOW) {
            self.fail(
                state,
                FsError::new(
                    FsCode::ResourceExhausted,
                    "the kernel's event queue overflowed: events were lost, the watcher stopped",
                ),
            );
            return false;
        }
        if mask.contains(M::IGNORED) {
            state.dirs.remove(wd);
            return false;
        }
        let Some(dir) = state.dirs.get(wd) else {
            return false;
        };
        let path = match name {
            Some(name) => dir.join(name),
            // The watched directory itself: reported for the root only (a directory
            // below is reported by its parent's event).
            None if *dir == self.root => dir.clone(),
            None => return false,
        };
        if self.recursive && mask.contains(M::ISDIR) && mask.contains(M::MOVED_FROM) {
            // A directory moved out (or away to another name): its watches go, else
            // what happens in it later would be named by where it was.
            let gone: Vec<inotify::WatchDescriptor> = state
                .dirs
                .iter()
                .filter(|(_, dir)| dir.starts_with(&path))
                .map(|(wd, _)| wd.clone())
                .collect();
            for wd in gone {
                state.dirs.remove(&wd);
                let _ = state.inotify.watches().remove(wd);
            }
        }
        if self.recursive && mask.contains(M::ISDIR) && mask.intersects(M::CREATE | M::MOVED_TO) && name.is_some() {
            match state
                .inotify
                .watches()
                .add(&path, watch_mask() | inotify::WatchMask::DONT_FOLLOW)
            {
                Ok(new) => {
                    state.dirs.insert(new, path.clone());
                    if let Err(e) = add_below(state, &path) {
                        self.fail(state, e);
                        return false;
                    }
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => {
                    self.fail(state, add_error(&e, &path));
                    return false;
                }
                Err(_) => {}
            }
        }
        let kinds = [
            (M::CREATE | M::MOVED_TO, EventType::Create),
            (M::MOVE_SELF | M::MOVED_FROM, EventType::Rename),
            (M::ATTRIB, EventType::Chmod),
            (M::MODIFY, EventType::Write),
            (M::DELETE | M::DELETE_SELF, EventType::Remove),
        ];
        let mut queued = false;
        for (bits, kind) in kinds {
            if !mask.intersects(bits) {
                continue;
            }
            if state.events.len() >= MAX_QUEUED {
                self.fail(
                    state,
                    FsError::new(
                        FsCode::ResourceExhausted,
                        format!("more than {MAX_QUEUED} events waited to be read: the watcher stopped"),
                    ),
                );
                return queued;
            }
            let carries_entry =
                self.include_entry && matches!(kind, EventType::Create | EventType::Write | EventType::Chmod);
            state.events.push_back(FilesystemEvent {
                name: relative(&self.root, &path),
                r#type: kind as i32,
                // Best effort, as envd: an entry gone meanwhile has none.
                entry: carries_entry.then(|| entry_at(&path).ok()).flatten(),
            });
            queued = true;
        }
        queued
    }
}
