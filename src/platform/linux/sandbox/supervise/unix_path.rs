//! A pathname unix socket a job asks for: found, judged, and reached only through the
//! file found.
//!
//! The path (copied out of the job) is opened `O_PATH` by the supervisor, from the
//! job's working directory when it is relative, following symlinks as the kernel's
//! `connect` does. The file found is then judged by identity (device and inode), never
//! by name, and the call is made on `/proc/self/fd/N` of that very descriptor: a
//! rename, a symlink or a new file put at the path after this point changes nothing.
//!
//! Allowed are the sockets Landlock ABI 9 would let the job reach: those beneath the
//! job's writable directories (its own servers: in the project, a `write` path, its
//! TMPDIR; not the shared `/tmp`, where other programs keep theirs), and the
//! `sandbox.unixSockets` files, by the identity they had when the sandbox was made.

use std::ffi::CString;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{fstat, openat, FileType, Mode, OFlags};

use super::job::{Caller, Outcome, Refused};
use super::Policy;
use crate::sandbox::{stat_id, FileId};

/// The socket file `path` names for `caller`, opened `O_PATH`; `Err` with the errno
/// the kernel would give the job (`ENOENT` for a path that names nothing: Landlock
/// hides no file's existence either, and clients that wait for a server retry on it).
pub fn open(caller: &Caller<'_>, path: &[u8]) -> Outcome<OwnedFd> {
    let path = CString::new(path).map_err(|_| Refused::Errno(libc::EINVAL))?;
    let from = if path.as_bytes().first() == Some(&b'/') {
        None
    } else {
        Some(caller.cwd()?)
    };
    let dir = from.as_ref().map_or(libc::AT_FDCWD, |fd| fd.as_raw_fd());
    // SAFETY: a directory (or the current one, unused for an absolute path), a path.
    let fd = unsafe { libc::openat(dir, path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(Refused::Errno(
            std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO),
        ));
    }
    // SAFETY: just opened.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Whether the job may reach the file `socket` (`open`'s): `Err(ECONNREFUSED)` for a
/// file that is no socket (the kernel's answer), `Err(EACCES)` for a socket it may not
/// reach (Landlock's).
pub fn judge(socket: BorrowedFd<'_>, policy: &Policy) -> Outcome<()> {
    let st = fstat(socket).map_err(|e| Refused::Errno(e.raw_os_error()))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::Socket {
        return Err(Refused::Errno(libc::ECONNREFUSED));
    }
    let id = stat_id(&st);
    if policy.allowed.contains(&id) || beneath(socket, id, &policy.writable) {
        Ok(())
    } else {
        Err(Refused::Errno(libc::EACCES))
    }
}

/// The socket file `socket` (identity `id`) lies in one of the directories `writable`
/// (or is one of the files), walking up from the directory it is in now, as Landlock
/// walks from the file. Where it is now is what the kernel says of the descriptor;
/// its directory is opened from that name and checked to hold the same file, so a
/// rename in between ends in a refusal, not in another directory's walk.
fn beneath(socket: BorrowedFd<'_>, id: FileId, writable: &[FileId]) -> bool {
    if writable.contains(&id) {
        return true;
    }
    let Ok(now) = std::fs::read_link(format!("/proc/self/fd/{}", socket.as_raw_fd())) else {
        return false;
    };
    let (Some(parent), Some(name)) = (now.parent(), now.file_name()) else {
        return false;
    };
    if !now.is_absolute() || now.as_os_str().as_bytes().ends_with(b" (deleted)") {
        return false;
    }
    let hold = OFlags::PATH | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    let Ok(mut here) = rustix::fs::open(parent, hold | OFlags::DIRECTORY, Mode::empty()) else {
        return false;
    };
    let same = openat(&here, name, hold, Mode::empty())
        .and_then(|fd| fstat(&fd))
        .is_ok_and(|st| stat_id(&st) == id);
    if !same {
        return false;
    }
    // Bounded as `Anchor::ancestry` is.
    let mut last = None;
    for _ in 0..4096 {
        let Ok(st) = fstat(&here) else { return false };
        let dir = stat_id(&st);
        if writable.contains(&dir) {
            return true;
        }
        if last == Some(dir) {
            return false;
        }
        last = Some(dir);
        match openat(&here, "..", hold | OFlags::DIRECTORY, Mode::empty()) {
            Ok(up) => here = up,
            Err(_) => return false,
        }
    }
    false
}

/// The address that reaches exactly the file `socket`: its descriptor's entry in
/// `/proc/self/fd` (the kernel follows it to that file, whatever its path now is).
pub fn through_descriptor(socket: BorrowedFd<'_>) -> Vec<u8> {
    let path = format!("/proc/self/fd/{}", socket.as_raw_fd());
    let mut address = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
    address.extend_from_slice(path.as_bytes());
    address.push(0);
    address
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Network;
    use std::os::fd::AsFd;

    fn id(path: &std::path::Path) -> FileId {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).expect("metadata");
        (m.dev(), m.ino())
    }

    fn opened(path: &std::path::Path) -> OwnedFd {
        rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).expect("open")
    }

    /// A socket is reached when it is listed by identity or lies (at any depth) in a
    /// writable directory; a plain file is no socket; anything else is refused.
    #[test]
    fn sockets_are_judged_by_identity_and_place() {
        let base = tempfile::tempdir().expect("tempdir");
        let (mine, other) = (base.path().join("mine"), base.path().join("other"));
        std::fs::create_dir_all(mine.join("deep")).expect("mkdir");
        std::fs::create_dir(&other).expect("mkdir");
        let inside = mine.join("deep/s.sock");
        let outside = other.join("s.sock");
        let _servers = [
            std::os::unix::net::UnixListener::bind(&inside).expect("bind"),
            std::os::unix::net::UnixListener::bind(&outside).expect("bind"),
        ];
        std::fs::write(mine.join("file"), "x").expect("write");
        let policy = |allowed: Vec<FileId>| Policy {
            allowed,
            writable: vec![id(&mine)],
            network: Network::Off,
        };
        assert_eq!(judge(opened(&inside).as_fd(), &policy(vec![])), Ok(()));
        assert_eq!(
            judge(opened(&outside).as_fd(), &policy(vec![])),
            Err(Refused::Errno(libc::EACCES))
        );
        assert_eq!(judge(opened(&outside).as_fd(), &policy(vec![id(&outside)])), Ok(()));
        assert_eq!(
            judge(opened(&mine.join("file")).as_fd(), &policy(vec![])),
            Err(Refused::Errno(libc::ECONNREFUSED))
        );
        // Moved out of the writable directory after it was opened: judged where it is now.
        let held = opened(&inside);
        std::fs::rename(&inside, other.join("moved.sock")).expect("rename");
        assert_eq!(judge(held.as_fd(), &policy(vec![])), Err(Refused::Errno(libc::EACCES)));
        let address = through_descriptor(held.as_fd());
        assert!(address.ends_with(format!("/proc/self/fd/{}\0", held.as_raw_fd()).as_bytes()));
    }
}
