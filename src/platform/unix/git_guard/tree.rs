//! The files the git guard keeps (`super`): what a path was (`Node`, with the `stat`
//! stamp that lets a check skip reading what did not change), reading it, comparing it
//! and putting it back, all through directory descriptors opened without following a
//! symbolic link.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};

/// A file bigger than this, or more entries than `MAX_ENTRIES`, is not recorded: the
/// guard then says it cannot guard (a note in the job's report).
const MAX_FILE: u64 = 1 << 20;
pub(super) const MAX_ENTRIES: usize = 256;

/// What one path was: absent, a file, a link, a directory of such. Compared by
/// content (`same`); the stamps only let a check skip reading what did not change.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(super) enum Node {
    Absent,
    File {
        mode: u32,
        #[serde(with = "super::bytes_as_base64")]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct Stamp {
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
    pub(super) fn stamp(&self) -> Option<Stamp> {
        match self {
            Node::File { stamp, .. } | Node::Link { stamp, .. } | Node::Dir { stamp, .. } => Some(*stamp),
            Node::Absent | Node::Other => None,
        }
    }
}

/// The same content, mode and kind (stamps aside).
pub(super) fn same(a: &Node, b: &Node) -> bool {
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

/// The time before which an unchanged stamp is trusted (`SETTLED`).
pub(super) fn settled_before(recorded: std::time::SystemTime) -> (i64, i64) {
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
pub(super) fn reread(
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

pub(super) fn read_bounded(dir: BorrowedFd<'_>, name: &OsStr, budget: &mut usize) -> io::Result<Node> {
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

/// What a directory entry is, for the guard's checks.
#[derive(PartialEq, Eq)]
pub(super) enum Kind {
    Dir,
    Other,
}

pub(super) fn lstat_kind(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Option<Kind>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir() => Ok(Some(Kind::Dir)),
        Ok(_) => Ok(Some(Kind::Other)),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

pub(super) fn open_dir_at(dir: BorrowedFd<'_>, path: &Path, nofollow: bool) -> io::Result<OwnedFd> {
    let mut flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    if nofollow {
        flags |= OFlags::NOFOLLOW;
    }
    Ok(rustix::fs::openat(dir, path, flags, Mode::empty())?)
}

/// The directory last opened for a guarded path, kept for the next (most share `.git`).
#[derive(Default)]
pub(super) struct Parents {
    last: Option<(PathBuf, OwnedFd)>,
}

impl Parents {
    pub(super) fn open(&mut self, root: BorrowedFd<'_>, parent: &Path) -> io::Result<BorrowedFd<'_>> {
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
pub(super) fn open_path(root: BorrowedFd<'_>, path: &Path) -> io::Result<OwnedFd> {
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

pub(super) fn split(path: &Path) -> Option<(PathBuf, &OsStr)> {
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
pub(super) fn put(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    want: &Node,
    current: &Node,
    shown: &str,
    restored: &mut Vec<String>,
) {
    // What the report says: put back, or why not (never "restored" for a failure).
    let say = |outcome: io::Result<()>, what: String| match outcome {
        Ok(()) => what,
        Err(e) => format!("{what} (could not be put back: {e})"),
    };
    if let (Node::Dir { mode, entries, .. }, Node::Dir { entries: now, .. }) = (want, current) {
        let fd = match open_dir_at(dir, Path::new(name), true) {
            Ok(fd) => fd,
            Err(e) => return restored.push(say(Err(e), shown.to_string())),
        };
        if let Ok(st) = rustix::fs::fstat(&fd) {
            if Stamp::of(&st).mode & 0o7777 != *mode {
                let changed = rustix::fs::fchmod(&fd, permissions(*mode)).map_err(io::Error::from);
                restored.push(say(changed, format!("{shown} (mode)")));
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
    let removed = match current {
        Node::Absent => Ok(()),
        Node::Dir { .. } => remove_tree(dir, name),
        _ => rustix::fs::unlinkat(dir, name, AtFlags::empty()).map_err(io::Error::from),
    };
    let made = removed.and_then(|()| make(dir, name, want));
    restored.push(say(made, shown.to_string()));
}

/// Makes `name` in `dir` (absent now) what `want` says.
fn make(dir: BorrowedFd<'_>, name: &OsStr, want: &Node) -> io::Result<()> {
    match want {
        Node::Absent | Node::Other => Ok(()),
        Node::Link { target, .. } => Ok(rustix::fs::symlinkat(OsStr::from_bytes(target), dir, name)?),
        Node::File { mode, bytes, .. } => write_file(dir, name, *mode, bytes),
        Node::Dir { mode, entries, .. } => {
            rustix::fs::mkdirat(dir, name, permissions(*mode))?;
            let fd = open_dir_at(dir, Path::new(name), true)?;
            rustix::fs::fchmod(&fd, permissions(*mode))?;
            for (child, node) in entries {
                make(fd.as_fd(), child, node)?;
            }
            Ok(())
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
        permissions(0o600),
    )?;
    let mut file = std::fs::File::from(fd);
    io::Write::write_all(&mut file, bytes)?;
    rustix::fs::fchmod(&file, permissions(mode))?;
    rustix::fs::renameat(dir, temp.as_os_str(), dir, name)?;
    Ok(())
}

/// Removes `name` in `dir` and everything beneath, following no link.
fn remove_tree(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let fd = open_dir_at(dir, Path::new(name), true)?;
    let children: Vec<OsString> = rustix::fs::Dir::read_from(fd.as_fd())?
        .filter_map(Result::ok)
        .map(|e| OsString::from_vec(e.file_name().to_bytes().to_vec()))
        .filter(|n| n != "." && n != "..")
        .collect();
    for child in children {
        match lstat_kind(fd.as_fd(), &child)? {
            Some(Kind::Dir) => remove_tree(fd.as_fd(), &child)?,
            Some(Kind::Other) => rustix::fs::unlinkat(fd.as_fd(), child.as_os_str(), AtFlags::empty())?,
            None => {}
        }
    }
    Ok(rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?)
}

/// Permission bits as rustix takes them: its `RawMode` is `u32` on Linux and `u16` on
/// macOS, where the bits kept here (`0o7777` at most) fit as well.
#[allow(clippy::unnecessary_cast)]
fn permissions(bits: u32) -> Mode {
    Mode::from_raw_mode((bits & 0o7777) as rustix::fs::RawMode)
}
