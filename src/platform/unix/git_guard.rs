//! What a sandboxed job may not leave behind in a writable project: git's hooks and
//! configuration, which run unconfined at the user's next `git commit`.
//!
//! Landlock grants a right on a whole tree and cannot take it back beneath, so a job
//! allowed to write the project may write `.git/hooks/pre-commit` or add
//! `core.fsmonitor` / an alias / a filter to `.git/config`: code the user's own git
//! then runs outside any sandbox. Granting the project's entries one by one instead of
//! its root would leave `.git` out, but then no job could create or remove anything at
//! the project's top level (`npm install` making `node_modules`, `cargo` making
//! `target`), and a mount namespace costs a user namespace and a copy of the mount
//! table per job. So the service checks instead: when the first of a project's
//! sandboxed jobs starts it records `.git/config`, `.git/config.worktree`, every entry
//! of `.git/hooks` and of a `core.hooksPath` inside the project (contents, modes, link
//! targets); when each job's main process exits, and when the last process of the last
//! of them has ended, whatever differs is put back and named in the job's result
//! (`sandbox.restored`). Everything is done through descriptors opened without
//! following symbolic links (`openat` with `O_NOFOLLOW` from the project's directory),
//! so a job that swaps a directory for a link while the service restores cannot point
//! the service's writes elsewhere.
//!
//! What it costs and what stays open (docs/sandbox.md): reading those files (some
//! dozen small ones) before the first sandboxed job starts; a change made by the user
//! (or an unconfined job) while a sandboxed job runs is undone as well; a process a job
//! left running may change them after the last check, until the next sandboxed job
//! ends; a `.git` the job replaced (by a link or a `gitdir:` file) is moved aside, not
//! rebuilt; repositories nested deeper in the project are not guarded; and a hook
//! the user already has that runs project files (a link into the work tree, the
//! `pre-commit` framework's `.pre-commit-config.yaml`) runs what the job may change.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustix::fs::{AtFlags, Mode, OFlags};

/// A file bigger than this, or more entries than `MAX_ENTRIES`, is not recorded: the
/// guard then says it cannot guard (a note in the job's report).
const MAX_FILE: u64 = 1 << 20;
const MAX_ENTRIES: usize = 256;

/// What one path was: absent, a file, a link, a directory of such. Compared by
/// content (`same`); the stamps only let a check skip reading what did not change.
#[derive(Clone, Debug)]
enum Node {
    Absent,
    File {
        mode: u32,
        bytes: Vec<u8>,
        stamp: Stamp,
    },
    Link {
        target: Vec<u8>,
        stamp: Stamp,
    },
    Dir {
        mode: u32,
        entries: BTreeMap<OsString, Node>,
        stamp: Stamp,
    },
    /// A socket, a device, a pipe: recorded by kind only (removed if it appears).
    Other,
}

/// What `stat` says of a file that any change to it changes: a write or a new entry
/// moves the change time (which no caller can set back), a replacement the inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: i64,
    mode: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// The fields' types differ between platforms and architectures.
    #[allow(clippy::unnecessary_cast)]
    fn of(st: &rustix::fs::Stat) -> Self {
        Self {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            size: st.st_size as i64,
            mode: st.st_mode as u32,
            mtime: (st.st_mtime as i64, st.st_mtime_nsec as i64),
            ctime: (st.st_ctime as i64, st.st_ctime_nsec as i64),
        }
    }
}

/// Whether an unchanged stamp proves an unchanged file: the kernel takes change times
/// from a clock that ticks every few milliseconds, so a change made in the same tick
/// as the record can leave the time as it was. A stamp older than `SETTLED` before the
/// record is trusted; a newer one is read again.
const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

impl Node {
    fn stamp(&self) -> Option<Stamp> {
        match self {
            Node::File { stamp, .. } | Node::Link { stamp, .. } | Node::Dir { stamp, .. } => Some(*stamp),
            Node::Absent | Node::Other => None,
        }
    }
}

/// The same content, mode and kind (stamps aside).
fn same(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (Node::Absent, Node::Absent) | (Node::Other, Node::Other) => true,
        (Node::File { mode, bytes, .. }, Node::File { mode: m, bytes: b, .. }) => mode == m && bytes == b,
        (Node::Link { target, .. }, Node::Link { target: t, .. }) => target == t,
        (
            Node::Dir { mode, entries, .. },
            Node::Dir {
                mode: m, entries: e, ..
            },
        ) => {
            mode == m && entries.len() == e.len() && entries.iter().zip(e).all(|((n, a), (k, b))| n == k && same(a, b))
        }
        _ => false,
    }
}

/// The guarded paths, relative to the project root.
#[derive(Clone, Debug)]
struct Snapshot {
    /// Empty: `.git` is not a directory, nothing is guarded.
    paths: Vec<(PathBuf, Node)>,
    /// When it was recorded (wall clock, as file times are).
    at: std::time::SystemTime,
}

/// One per project root with a `.git` directory: the record and how many sandboxed
/// jobs that may write the project hold it.
pub struct GitGuard {
    root: PathBuf,
    state: Mutex<State>,
}

struct State {
    holders: usize,
    baseline: Option<Result<Snapshot, String>>,
}

/// A sandboxed job's hold on the guard: checked at its main process's exit
/// (`check`), released when nothing of it runs (`release`, or when dropped).
pub struct GitHold {
    guard: Arc<GitGuard>,
    released: std::sync::atomic::AtomicBool,
    restored: Mutex<Vec<String>>,
}

impl GitGuard {
    /// A guard for `root` (canonical); it records nothing until a job holds it.
    pub fn new(root: &Path) -> Arc<Self> {
        Arc::new(Self {
            root: root.to_path_buf(),
            state: Mutex::new(State {
                holders: 0,
                baseline: None,
            }),
        })
    }

    /// Before a sandboxed job that may write the project starts. `Ok(None)`: the
    /// project has no `.git` directory, nothing to guard. `Err`: what could not be
    /// recorded (the job still runs; its report says so).
    pub fn hold(self: &Arc<Self>) -> Result<Option<Arc<GitHold>>, String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.holders == 0 {
            // Between jobs the user may have changed them: that is the new record. What
            // kept its stamp is not read again (the cost of a spawn: docs/sandbox.md).
            let fresh = match state.baseline.take() {
                Some(Ok(old)) if !old.paths.is_empty() => refresh(&self.root, old),
                _ => record(&self.root),
            };
            state.baseline = Some(fresh.map_err(|e| e.to_string()));
        }
        match state.baseline.as_ref() {
            Some(Ok(snapshot)) if snapshot.paths.is_empty() => return Ok(None),
            Some(Err(e)) => return Err(format!("the project's .git could not be recorded: {e}")),
            _ => {}
        }
        state.holders += 1;
        Ok(Some(Arc::new(GitHold {
            guard: self.clone(),
            released: false.into(),
            restored: Mutex::new(Vec::new()),
        })))
    }

    /// Puts back what differs from the record; returns what was put back.
    fn restore(&self, state: &State) -> Vec<String> {
        let Some(Ok(baseline)) = &state.baseline else {
            return Vec::new();
        };
        let mut restored = Vec::new();
        let Ok(root) = open_dir_at(rustix::fs::CWD, &self.root, false) else {
            return restored;
        };
        // `.git` replaced by a link or a `gitdir:` file (pointing at hooks elsewhere):
        // moved aside, so no git runs through it; the repository itself is not rebuilt.
        let git = OsStr::new(".git");
        match lstat_kind(root.as_fd(), git) {
            Ok(Some(Kind::Dir)) => {}
            Ok(None) => {
                restored.push(".git (gone: not rebuilt)".to_string());
                return restored;
            }
            _ => {
                let aside = format!(".git.replaced-by-sandboxed-job-{}", std::process::id());
                let _ = rustix::fs::renameat(root.as_fd(), git, root.as_fd(), aside.as_str());
                restored.push(format!(".git (replaced: moved to {aside})"));
                return restored;
            }
        }
        let settled = settled_before(baseline.at);
        let mut parents = Parents::default();
        for (path, node) in &baseline.paths {
            let Some((parent, name)) = split(path) else { continue };
            let Ok(dir) = parents.open(root.as_fd(), &parent) else {
                continue;
            };
            let samples = path == Path::new(".git/hooks");
            let current = match reread(dir.as_fd(), name, node, settled, samples, 0) {
                Ok(None) => continue,
                Ok(Some(current)) => current,
                Err(_) => Node::Other,
            };
            if !same(&current, node) {
                put(
                    dir.as_fd(),
                    name,
                    node,
                    &current,
                    &path.display().to_string(),
                    &mut restored,
                );
            }
        }
        restored
    }
}

impl GitHold {
    /// At the job's main process's exit: puts back what differs, remembers it for the
    /// job's report.
    pub fn check(&self) {
        let state = self.guard.state.lock().unwrap_or_else(|e| e.into_inner());
        let restored = self.guard.restore(&state);
        drop(state);
        self.restored.lock().unwrap_or_else(|e| e.into_inner()).extend(restored);
    }

    /// Once nothing of the job runs: a last check, and the hold is given up (with the
    /// last one, the record is taken again at the next job's start, so a change the
    /// user makes between jobs stays).
    pub fn release(&self) {
        if self.released.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return;
        }
        let mut state = self.guard.state.lock().unwrap_or_else(|e| e.into_inner());
        let restored = self.guard.restore(&state);
        state.holders = state.holders.saturating_sub(1);
        drop(state);
        self.restored.lock().unwrap_or_else(|e| e.into_inner()).extend(restored);
    }

    /// What was put back so far (paths relative to the project).
    pub fn restored(&self) -> Vec<String> {
        self.restored.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl std::fmt::Debug for GitHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitHold").field("root", &self.guard.root).finish()
    }
}

impl Drop for GitHold {
    fn drop(&mut self) {
        self.release();
    }
}

/// Records the guarded paths of `root`; none when `.git` is not a directory.
fn record(root: &Path) -> io::Result<Snapshot> {
    let at = std::time::SystemTime::now();
    let root = open_dir_at(rustix::fs::CWD, root, false)?;
    let Ok(git) = open_dir_at(root.as_fd(), Path::new(".git"), true) else {
        return Ok(Snapshot { paths: Vec::new(), at });
    };
    let mut paths = Vec::new();
    let mut budget = MAX_ENTRIES;
    for name in ["config", "config.worktree", "hooks"] {
        let node = read_bounded(git.as_fd(), OsStr::new(name), &mut budget)?;
        if name == "config" {
            if let Node::File { bytes, .. } = &node {
                if let Some(hooks) = hooks_path(bytes) {
                    let dir = open_path(root.as_fd(), hooks.parent().unwrap_or(Path::new("")));
                    let node = match (dir, hooks.file_name()) {
                        (Ok(dir), Some(name)) => read_bounded(dir.as_fd(), name, &mut budget)?,
                        _ => Node::Absent,
                    };
                    paths.push((hooks, node));
                }
            }
        }
        paths.push((Path::new(".git").join(name), node));
    }
    Ok(Snapshot { paths, at })
}

/// The record taken again, reading only what changed since `old` (a changed
/// `core.hooksPath` makes it whole again).
fn refresh(root_path: &Path, old: Snapshot) -> io::Result<Snapshot> {
    let at = std::time::SystemTime::now();
    let settled = settled_before(old.at);
    let root = open_dir_at(rustix::fs::CWD, root_path, false)?;
    let mut paths = Vec::with_capacity(old.paths.len());
    let mut parents = Parents::default();
    for (path, node) in old.paths {
        let Some((parent, name)) = split(&path) else { continue };
        let dir = parents.open(root.as_fd(), &parent)?;
        match reread(dir, name, &node, settled, path == Path::new(".git/hooks"), 0)? {
            None => paths.push((path, node)),
            Some(_) if path == Path::new(".git/config") => return record(root_path),
            Some(fresh) => paths.push((path, fresh)),
        }
    }
    if !matches!(lstat_kind(root.as_fd(), OsStr::new(".git")), Ok(Some(Kind::Dir))) {
        return record(root_path);
    }
    Ok(Snapshot { paths, at })
}

/// The time before which an unchanged stamp is trusted (`SETTLED`).
fn settled_before(recorded: std::time::SystemTime) -> (i64, i64) {
    let at = recorded
        .checked_sub(SETTLED)
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .unwrap_or_default();
    (at.as_secs() as i64, i64::from(at.subsec_nanos()))
}

/// `name` in `dir` as it is now, or `None` if it is provably what `old` recorded: the
/// same stamp, settled (`SETTLED`), and for a directory every entry so too. Only what
/// changed is read.
///
/// `samples`: `name` is `.git/hooks`, whose `*.sample` files git never runs (it runs a
/// hook by its exact name): one written in place is not looked at (a rename to a
/// hook's name moves the directory's times). A fresh repository's hooks directory holds
/// nothing else, so its check is two `stat`s.
fn reread(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    old: &Node,
    settled: (i64, i64),
    samples: bool,
    depth: usize,
) -> io::Result<Option<Node>> {
    let st = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(rustix::io::Errno::NOENT) => {
            return Ok((!matches!(old, Node::Absent)).then_some(Node::Absent));
        }
        Err(e) => return Err(e.into()),
    };
    let stamp = Stamp::of(&st);
    let unchanged = old.stamp() == Some(stamp) && stamp.ctime < settled;
    match old {
        Node::File { .. } | Node::Link { .. } if unchanged => Ok(None),
        Node::Dir { entries, .. } if unchanged => {
            // No entry came or went (the directory's times would have moved); each
            // entry may still have been written in place. Opened only if one is looked at.
            let mut fd = None;
            let mut changed = None;
            for (child, node) in entries {
                if samples && child.as_bytes().ends_with(b".sample") {
                    continue;
                }
                let fd = match &mut fd {
                    Some(fd) => fd,
                    None => fd.insert(open_dir_at(dir, Path::new(name), true)?),
                };
                if let Some(fresh) = reread(fd.as_fd(), child, node, settled, false, depth + 1)? {
                    changed
                        .get_or_insert_with(|| entries.clone())
                        .insert(child.clone(), fresh);
                }
            }
            Ok(changed.map(|entries| Node::Dir {
                mode: stamp.mode & 0o7777,
                entries,
                stamp,
            }))
        }
        _ => {
            let fresh = read_node(dir, name, depth)?;
            Ok((!same(&fresh, old) || old.stamp() != fresh.stamp()).then_some(fresh))
        }
    }
}

fn read_bounded(dir: BorrowedFd<'_>, name: &OsStr, budget: &mut usize) -> io::Result<Node> {
    let node = read_node(dir, name, 0)?;
    let count = count(&node);
    if count > *budget {
        return Err(io::Error::other(format!(
            "more than {MAX_ENTRIES} entries or a file over {MAX_FILE} bytes"
        )));
    }
    *budget -= count;
    Ok(node)
}

fn count(node: &Node) -> usize {
    match node {
        Node::Dir { entries, .. } => 1 + entries.values().map(count).sum::<usize>(),
        _ => 1,
    }
}

/// `core.hooksPath` of a git config file, when it is a relative path without `..`
/// (relative to the work tree: inside the project). An absolute one outside the
/// project is not writable by a job; one inside it is not followed (rare: stated).
fn hooks_path(config: &[u8]) -> Option<PathBuf> {
    let text = String::from_utf8_lossy(config);
    let mut in_core = false;
    let mut found = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_core = line
                .trim_start_matches('[')
                .trim_end_matches(']')
                .trim()
                .eq_ignore_ascii_case("core");
            continue;
        }
        if !in_core {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim().eq_ignore_ascii_case("hookspath") {
            found = Some(value.trim().trim_matches('"').to_string());
        }
    }
    let path = PathBuf::from(found?);
    let inside = path.is_relative()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir));
    inside.then_some(path)
}

#[derive(PartialEq, Eq)]
enum Kind {
    Dir,
    Other,
}

fn lstat_kind(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Option<Kind>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir() => Ok(Some(Kind::Dir)),
        Ok(_) => Ok(Some(Kind::Other)),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn open_dir_at(dir: BorrowedFd<'_>, path: &Path, nofollow: bool) -> io::Result<OwnedFd> {
    let mut flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    if nofollow {
        flags |= OFlags::NOFOLLOW;
    }
    Ok(rustix::fs::openat(dir, path, flags, Mode::empty())?)
}

/// The directory last opened for a guarded path, kept for the next (most share `.git`).
#[derive(Default)]
struct Parents {
    last: Option<(PathBuf, OwnedFd)>,
}

impl Parents {
    fn open(&mut self, root: BorrowedFd<'_>, parent: &Path) -> io::Result<BorrowedFd<'_>> {
        if self.last.as_ref().is_none_or(|(p, _)| p != parent) {
            self.last = Some((parent.to_path_buf(), open_path(root, parent)?));
        }
        match &self.last {
            Some((_, fd)) => Ok(fd.as_fd()),
            None => Err(io::Error::other("no directory")),
        }
    }
}

/// Opens `path` (relative) beneath `root` one component at a time, following no link.
fn open_path(root: BorrowedFd<'_>, path: &Path) -> io::Result<OwnedFd> {
    let mut dir = rustix::fs::openat(
        root,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    for part in path.components() {
        if let std::path::Component::Normal(name) = part {
            dir = open_dir_at(dir.as_fd(), Path::new(name), true)?;
        }
    }
    Ok(dir)
}

fn split(path: &Path) -> Option<(PathBuf, &OsStr)> {
    Some((path.parent()?.to_path_buf(), path.file_name()?))
}

fn read_node(dir: BorrowedFd<'_>, name: &OsStr, depth: usize) -> io::Result<Node> {
    let st = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(rustix::io::Errno::NOENT) => return Ok(Node::Absent),
        Err(e) => return Err(e.into()),
    };
    let kind = rustix::fs::FileType::from_raw_mode(st.st_mode);
    let stamp = Stamp::of(&st);
    let mode = stamp.mode & 0o7777;
    if kind.is_symlink() {
        let target = rustix::fs::readlinkat(dir, name, Vec::new())?.into_bytes();
        return Ok(Node::Link { target, stamp });
    }
    if kind.is_file() {
        if st.st_size as u64 > MAX_FILE {
            return Err(io::Error::other("a file too big to record"));
        }
        let fd = rustix::fs::openat(
            dir,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut std::fs::File::from(fd).take_limited(), &mut bytes)?;
        return Ok(Node::File { mode, bytes, stamp });
    }
    if kind.is_dir() && depth < 3 {
        let fd = open_dir_at(dir, Path::new(name), true)?;
        let mut entries = BTreeMap::new();
        for entry in rustix::fs::Dir::read_from(fd.as_fd())? {
            let entry = entry?;
            let child = OsStr::from_bytes(entry.file_name().to_bytes());
            if child == "." || child == ".." {
                continue;
            }
            if entries.len() >= MAX_ENTRIES {
                return Err(io::Error::other("too many entries to record"));
            }
            entries.insert(child.to_os_string(), read_node(fd.as_fd(), child, depth + 1)?);
        }
        return Ok(Node::Dir { mode, entries, stamp });
    }
    Ok(Node::Other)
}

/// Reading a file no longer than `MAX_FILE` (it may grow while read).
trait TakeLimited {
    fn take_limited(self) -> io::Take<std::fs::File>;
}

impl TakeLimited for std::fs::File {
    fn take_limited(self) -> io::Take<std::fs::File> {
        io::Read::take(self, MAX_FILE + 1)
    }
}

/// Makes `name` in `dir` what `want` says, `current` being what it is now.
fn put(dir: BorrowedFd<'_>, name: &OsStr, want: &Node, current: &Node, shown: &str, restored: &mut Vec<String>) {
    match (want, current) {
        (Node::Dir { mode, entries, .. }, Node::Dir { entries: now, .. }) => {
            let Ok(fd) = open_dir_at(dir, Path::new(name), true) else {
                return;
            };
            if let Ok(st) = rustix::fs::fstat(&fd) {
                if Stamp::of(&st).mode & 0o7777 != *mode {
                    let _ = rustix::fs::fchmod(&fd, Mode::from_raw_mode(*mode));
                    restored.push(format!("{shown} (mode)"));
                }
            }
            let names: std::collections::BTreeSet<&OsString> = entries.keys().chain(now.keys()).collect();
            for child in names {
                let want = entries.get(child).unwrap_or(&Node::Absent);
                let current = now.get(child).unwrap_or(&Node::Absent);
                if !same(want, current) {
                    let shown = format!("{shown}/{}", child.to_string_lossy());
                    put(fd.as_fd(), child, want, current, &shown, restored);
                }
            }
            return;
        }
        (_, Node::Absent) => {}
        (_, Node::Dir { .. }) => remove_tree(dir, name),
        _ => {
            let _ = rustix::fs::unlinkat(dir, name, AtFlags::empty());
        }
    }
    restored.push(shown.to_string());
    match want {
        Node::Absent | Node::Other => {}
        Node::Link { target, .. } => {
            let _ = rustix::fs::symlinkat(OsStr::from_bytes(target), dir, name);
        }
        Node::File { mode, bytes, .. } => {
            let _ = write_file(dir, name, *mode, bytes);
        }
        Node::Dir { mode, entries, .. } => {
            if rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(*mode)).is_ok() {
                if let Ok(fd) = open_dir_at(dir, Path::new(name), true) {
                    let _ = rustix::fs::fchmod(&fd, Mode::from_raw_mode(*mode));
                    for (child, node) in entries {
                        let mut ignored = Vec::new();
                        put(fd.as_fd(), child, node, &Node::Absent, "", &mut ignored);
                    }
                }
            }
        }
    }
}

/// Writes a fresh file beside `name` and renames it over (`O_EXCL`: never through a
/// link the job planted under the temporary name).
fn write_file(dir: BorrowedFd<'_>, name: &OsStr, mode: u32, bytes: &[u8]) -> io::Result<()> {
    let mut temp = OsString::from(".native-shell-restore-");
    temp.push(name);
    let _ = rustix::fs::unlinkat(dir, temp.as_os_str(), AtFlags::empty());
    let fd = rustix::fs::openat(
        dir,
        temp.as_os_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    let mut file = std::fs::File::from(fd);
    io::Write::write_all(&mut file, bytes)?;
    rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))?;
    rustix::fs::renameat(dir, temp.as_os_str(), dir, name)?;
    Ok(())
}

/// Removes `name` in `dir` and everything beneath, following no link.
fn remove_tree(dir: BorrowedFd<'_>, name: &OsStr) {
    if let Ok(fd) = open_dir_at(dir, Path::new(name), true) {
        let children: Vec<OsString> = match rustix::fs::Dir::read_from(fd.as_fd()) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .map(|e| OsString::from_vec(e.file_name().to_bytes().to_vec()))
                .filter(|n| n != "." && n != "..")
                .collect(),
            Err(_) => Vec::new(),
        };
        for child in children {
            match lstat_kind(fd.as_fd(), &child) {
                Ok(Some(Kind::Dir)) => remove_tree(fd.as_fd(), &child),
                _ => {
                    let _ = rustix::fs::unlinkat(fd.as_fd(), child.as_os_str(), AtFlags::empty());
                }
            }
        }
    }
    let _ = rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_hook_and_an_edited_config_are_put_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let git = root.join(".git");
        std::fs::create_dir_all(git.join("hooks")).expect("mkdir");
        std::fs::write(git.join("config"), "[core]\n\thooksPath = .husky\n").expect("config");
        std::fs::write(git.join("hooks/pre-push.sample"), "#!/bin/sh\n").expect("sample");
        std::fs::create_dir(root.join(".husky")).expect("husky");
        let guard = GitGuard::new(&root);
        let hold = guard.hold().expect("records").expect("a repository");
        std::fs::write(git.join("hooks/pre-commit"), "evil").expect("plant");
        std::fs::write(git.join("config"), "[core]\n\tfsmonitor = evil\n").expect("edit");
        std::fs::write(root.join(".husky/pre-commit"), "evil").expect("plant");
        std::fs::remove_file(git.join("hooks/pre-push.sample")).expect("remove");
        std::os::unix::fs::symlink("/etc/passwd", git.join("hooks/pre-push.sample")).expect("link");
        hold.check();
        let mut restored = hold.restored();
        restored.sort();
        assert_eq!(
            restored,
            [
                ".git/config",
                ".git/hooks/pre-commit",
                ".git/hooks/pre-push.sample",
                ".husky/pre-commit"
            ]
        );
        assert!(!git.join("hooks/pre-commit").exists());
        assert!(!root.join(".husky/pre-commit").exists());
        assert_eq!(
            std::fs::read_to_string(git.join("config")).unwrap(),
            "[core]\n\thooksPath = .husky\n"
        );
        assert_eq!(
            std::fs::read_to_string(git.join("hooks/pre-push.sample")).unwrap(),
            "#!/bin/sh\n"
        );
        drop(hold);
        // With no job holding it, the user's own change stays.
        std::fs::write(git.join("hooks/pre-commit"), "mine").expect("user");
        let hold = guard.hold().expect("records").expect("a repository");
        drop(hold);
        assert_eq!(std::fs::read_to_string(git.join("hooks/pre-commit")).unwrap(), "mine");
    }

    #[test]
    fn a_project_without_git_needs_no_guard() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(GitGuard::new(dir.path()).hold().expect("fine").is_none());
    }
}
