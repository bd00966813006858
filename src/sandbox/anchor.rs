//! A directory (or file) the sandbox grants or guards, held open from the moment it was
//! resolved: what every later job's rules are built from, so nothing a job writes
//! afterwards — a symlink put where a configured directory was, a rename, a directory
//! made in its place — changes what a later job may reach.
//!
//! Opened without following any symlink (`openat2` with `RESOLVE_NO_SYMLINKS` on Linux;
//! elsewhere, or on a kernel without `openat2`, one component at a time with
//! `O_NOFOLLOW`, refusing a component that is a symlink). The descriptor is `O_PATH` on
//! Linux (it grants nothing by itself: no reads, no writes; it only names the inode),
//! close-on-exec, so no job inherits it.
//!
//! What happens when the path changes later: the rule keeps the directory it was
//! opened on (its inode), wherever that directory is moved; a symlink or another
//! directory put at the old path gets nothing. The report names the directory where it
//! is now (`current_path`).

#[cfg(unix)]
use std::io;
#[cfg(unix)]
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
#[cfg(unix)]
use std::path::Component;
use std::path::{Path, PathBuf};

/// Device and inode: what a file is, whatever its name.
pub type FileId = (u64, u64);

/// A `stat`'s device and inode.
#[cfg(unix)]
// The field types differ between systems (macOS's `st_dev` is an `i32`).
#[allow(clippy::unnecessary_cast)]
pub fn stat_id(st: &rustix::fs::Stat) -> FileId {
    (st.st_dev as u64, st.st_ino as u64)
}

#[derive(Debug)]
pub struct Anchor {
    /// Where it was when opened, made absolute without following anything.
    path: PathBuf,
    #[cfg(unix)]
    fd: OwnedFd,
    id: FileId,
    dir: bool,
    /// A unix socket's file (`SandboxSpec::unix_sockets`).
    socket: bool,
}

impl PartialEq for Anchor {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.path == other.path
    }
}

impl Eq for Anchor {}

impl Anchor {
    /// The path it was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn id(&self) -> FileId {
        self.id
    }

    pub fn is_dir(&self) -> bool {
        self.dir
    }

    pub fn is_socket(&self) -> bool {
        self.socket
    }

    #[cfg(unix)]
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Where it is now: nothing is held open here (no sandbox), so where it was.
    #[cfg(not(unix))]
    pub fn current_path(&self) -> PathBuf {
        self.path.clone()
    }
}

#[cfg(unix)]
mod unix {
    use super::*;
    use rustix::fs::{fstat, openat, FileType, Mode, OFlags, CWD};
    use rustix::io::Errno;

    /// How every component is opened: a descriptor that names the file and follows no
    /// symlink. `O_PATH` on Linux; elsewhere a read-only open (macOS has no `O_PATH`)
    /// that neither waits (a FIFO) nor takes a terminal as the controlling one.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const HOLD: OFlags = OFlags::PATH.union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    const HOLD: OFlags = OFlags::RDONLY
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC)
        .union(OFlags::NONBLOCK)
        .union(OFlags::NOCTTY);

    impl Anchor {
        /// Opens the absolute `path`; a symlink anywhere in it is refused (`ELOOP`).
        pub fn open(path: &Path) -> io::Result<Self> {
            if !path.is_absolute() {
                return Err(io::Error::new(io::ErrorKind::InvalidInput, "not an absolute path"));
            }
            let fd = open_no_symlinks(CWD, path)?;
            Self::from_fd(normalize(path), fd)
        }

        /// Opens `rel` from this directory (`..` allowed, as the kernel resolves it);
        /// a symlink anywhere in it is refused (`ELOOP`). Absolute `rel` is `open`.
        pub fn open_beneath(&self, rel: &Path) -> io::Result<Self> {
            if rel.is_absolute() {
                return Self::open(rel);
            }
            // This directory itself (a path that named it, `strip_prefix` left empty).
            let rel = if rel.as_os_str().is_empty() {
                Path::new(".")
            } else {
                rel
            };
            let fd = open_no_symlinks(self.fd.as_fd(), rel)?;
            Self::from_fd(normalize(&self.path.join(rel)), fd)
        }

        /// A file carried by a restart in place (src/sandbox/tmpdir_carry.rs): its
        /// descriptor, inherited, must still be the file `id` named in the hand-over.
        pub fn carried(path: PathBuf, fd: OwnedFd, id: FileId) -> io::Result<Self> {
            let anchor = Self::from_fd(path, fd)?;
            if anchor.id != id {
                return Err(io::Error::other(format!(
                    "{}: the carried descriptor is another file",
                    anchor.path.display()
                )));
            }
            Ok(anchor)
        }

        fn from_fd(path: PathBuf, fd: OwnedFd) -> io::Result<Self> {
            let st = fstat(&fd)?;
            Ok(Self {
                path,
                fd,
                id: stat_id(&st),
                dir: FileType::from_raw_mode(st.st_mode) == FileType::Directory,
                socket: FileType::from_raw_mode(st.st_mode) == FileType::Socket,
            })
        }

        /// Where the file is now: the path it was opened at while that still names it
        /// (one `lstat`), else where the kernel says it went (Linux), else the old path
        /// marked as moved.
        pub fn current_path(&self) -> PathBuf {
            use std::os::unix::fs::MetadataExt;
            if std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.id) {
                return self.path.clone();
            }
            #[cfg(target_os = "linux")]
            {
                use std::os::fd::AsRawFd;
                if let Ok(now) = std::fs::read_link(format!("/proc/self/fd/{}", self.fd.as_raw_fd())) {
                    return now;
                }
            }
            let mut moved = self.path.clone().into_os_string();
            moved.push(" (moved)");
            moved.into()
        }

        /// The identities of this directory and of every directory above it, up to `/`
        /// (by `..`, as the kernel walks it, across mount points): what a rule on any of
        /// them would reach this one through.
        pub fn ancestry(&self) -> io::Result<Vec<FileId>> {
            let mut ids = vec![self.id];
            let mut here = openat(&self.fd, ".", HOLD | OFlags::DIRECTORY, Mode::empty())?;
            // Bounded: a file system deeper than this is not one we hold anything in.
            for _ in 0..4096 {
                let up = openat(&here, "..", HOLD | OFlags::DIRECTORY, Mode::empty())?;
                let st = fstat(&up)?;
                let id = stat_id(&st);
                if ids.last() == Some(&id) {
                    return Ok(ids);
                }
                ids.push(id);
                here = up;
            }
            Err(io::Error::other("directory too deep"))
        }
    }

    /// `path` from `start`, following no symlink.
    fn open_no_symlinks(start: BorrowedFd<'_>, path: &Path) -> io::Result<OwnedFd> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            use rustix::fs::{openat2, ResolveFlags};
            let how = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            match openat2(start, path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty(), how) {
                // Linux before 5.6, or a seccomp policy (a container's) that refuses it.
                Err(Errno::NOSYS) | Err(Errno::PERM) => {}
                done => return done.map_err(io::Error::from),
            }
        }
        walk(start, path)
    }

    /// One component at a time, each opened with `O_NOFOLLOW` and checked: a component
    /// that is a symlink is refused, never followed (the portable form of
    /// `RESOLVE_NO_SYMLINKS`).
    pub(super) fn walk(start: BorrowedFd<'_>, path: &Path) -> io::Result<OwnedFd> {
        let mut here = openat(start, ".", HOLD | OFlags::DIRECTORY, Mode::empty())?;
        for component in path.components() {
            here = match component {
                Component::RootDir => openat(CWD, "/", HOLD | OFlags::DIRECTORY, Mode::empty())?,
                Component::CurDir => continue,
                Component::ParentDir => openat(&here, "..", HOLD | OFlags::DIRECTORY, Mode::empty())?,
                Component::Normal(name) => {
                    let next = openat(&here, name, HOLD, Mode::empty())?;
                    if FileType::from_raw_mode(fstat(&next)?.st_mode) == FileType::Symlink {
                        return Err(Errno::LOOP.into());
                    }
                    next
                }
                Component::Prefix(_) => return Err(Errno::INVAL.into()),
            };
        }
        Ok(here)
    }
}

/// `path` without `.` and with each `..` taking off the component before it: exact
/// when no component is a symlink (which `Anchor` refuses).
#[cfg(unix)]
pub(super) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The identities of the directories a path is reached through: each existing prefix of
/// `path` (made absolute), as it resolves now, and every directory above the nearest
/// existing one. What the service checks no job can write before it keeps its own files
/// under `path` (see `crate::sandbox::Resolved::covers`): a job that could write any of
/// them could put a symlink or another directory in the path's way.
#[cfg(unix)]
pub fn reached_through(path: &Path) -> io::Result<Vec<FileId>> {
    use std::os::unix::fs::MetadataExt;
    let path = if path.is_absolute() {
        normalize(path)
    } else {
        normalize(&std::env::current_dir()?.join(path))
    };
    let mut ids = Vec::new();
    let mut nearest = None;
    for prefix in path.ancestors() {
        if let Ok(meta) = std::fs::metadata(prefix) {
            ids.push((meta.dev(), meta.ino()));
            if nearest.is_none() {
                nearest = Some(prefix.canonicalize()?);
            }
        }
    }
    if let Some(nearest) = nearest {
        ids.extend(Anchor::open(&nearest)?.ancestry()?);
    }
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(root.join("project/out")).expect("mkdir");
        std::fs::create_dir(root.join("home")).expect("mkdir");
        (dir, root)
    }

    #[test]
    fn a_symlink_anywhere_in_the_path_is_refused() {
        let (_dir, root) = tree();
        std::os::unix::fs::symlink(root.join("home"), root.join("project/link")).expect("symlink");
        let project = Anchor::open(&root.join("project")).expect("project");
        let refused = |r: io::Result<Anchor>| r.expect_err("refused").raw_os_error() == Some(libc::ELOOP);
        assert!(refused(project.open_beneath(Path::new("link"))));
        assert!(refused(Anchor::open(&root.join("project/link"))));
        std::fs::create_dir(root.join("home/sub")).expect("mkdir");
        assert!(
            refused(Anchor::open(&root.join("project/link/sub"))),
            "a middle component"
        );
        // The portable walk refuses the same, for kernels without openat2.
        let walked = unix::walk(project.fd(), Path::new("link/sub"));
        assert_eq!(walked.expect_err("refused").raw_os_error(), Some(libc::ELOOP));
        let out = project
            .open_beneath(Path::new("./out/../out"))
            .expect("no symlink: opened");
        assert_eq!(out.path(), root.join("project/out"));
        assert!(out.is_dir());
        let itself = project.open_beneath(Path::new("")).expect("the directory itself");
        assert_eq!((itself.id(), itself.path()), (project.id(), project.path()));
    }

    #[test]
    fn a_renamed_directory_keeps_its_identity_and_a_replacement_gets_none() {
        let (_dir, root) = tree();
        let project = Anchor::open(&root.join("project")).expect("project");
        let out = project.open_beneath(Path::new("out")).expect("out");
        let id = out.id();
        // What job A could do: move the directory away, put a symlink to home there.
        std::fs::rename(root.join("project/out"), root.join("project/moved")).expect("rename");
        std::os::unix::fs::symlink(root.join("home"), root.join("project/out")).expect("symlink");
        assert_eq!(out.id(), id);
        let st = rustix::fs::fstat(out.fd()).expect("fstat");
        let home = std::fs::metadata(root.join("home")).expect("home");
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            (st.st_dev as u64, st.st_ino as u64),
            id,
            "the descriptor is the old directory"
        );
        assert_ne!((home.dev(), home.ino()), id);
        // The report names where the directory is now, not where the symlink points.
        assert_eq!(out.current_path(), root.join("project/moved"));
    }

    #[test]
    fn ancestry_reaches_the_root_and_reached_through_covers_missing_tails() {
        let (_dir, root) = tree();
        use std::os::unix::fs::MetadataExt;
        let id = |p: &Path| {
            let m = std::fs::metadata(p).expect("meta");
            (m.dev(), m.ino())
        };
        let out = Anchor::open(&root.join("project/out")).expect("out");
        let chain = out.ancestry().expect("ancestry");
        assert_eq!(chain.first(), Some(&id(&root.join("project/out"))));
        assert!(chain.contains(&id(&root)) && chain.contains(&id(Path::new("/"))));
        let through = reached_through(&root.join("project/not/yet")).expect("through");
        assert!(through.contains(&id(&root.join("project"))) && through.contains(&id(&root)));
    }
}
