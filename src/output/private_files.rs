//! The service's own files and folders: made for the user alone (0600, 0700; on
//! Windows, the ACL of the folder under the user's profile), never through a link
//! planted where they go, and told apart by identity (device and inode), not by name.
//! Used by the job files (`persist.rs`) and the session leases (`retention.rs`).

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Write};
#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

/// Creates `dir` and its missing parents with mode 0700.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    private_dir_builder().recursive(true).create(dir)
}

/// Mode 0700 on Unix. Windows has no mode: a new directory takes the ACL of its parent
/// (under the user's profile, where `ioDir` is by default, only the user and the system).
pub(super) fn private_dir_builder() -> DirBuilder {
    #[allow(unused_mut)]
    let mut builder = DirBuilder::new();
    #[cfg(unix)]
    builder.mode(0o700);
    builder
}

pub(super) fn open_private(path: &Path) -> io::Result<File> {
    open_private_with(path, true)
}

/// What tells one file from another of the same name: its device, its inode, and its
/// birth time where the file system keeps one (statx). The inode alone is not enough:
/// ext4 and tmpfs give a freed inode's number to the next file made, so a file removed
/// and another made at its name often has the same (device, inode).
pub(super) type FileIdentity = (u64, u64, Option<std::time::SystemTime>);

#[cfg(unix)]
pub(super) fn file_identity(file: &File) -> Option<FileIdentity> {
    file.metadata().ok().as_ref().and_then(metadata_identity)
}

#[cfg(unix)]
pub(super) fn metadata_identity(meta: &fs::Metadata) -> Option<FileIdentity> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino(), meta.created().ok()))
}

/// Windows: std gives no stable file id; a file removed is still seen (`check`).
#[cfg(windows)]
pub(super) fn file_identity(_file: &File) -> Option<FileIdentity> {
    None
}

#[cfg(windows)]
pub(super) fn metadata_identity(_meta: &fs::Metadata) -> Option<FileIdentity> {
    None
}

/// Opened to read as well: `job_dir::prime_info_tmp` looks at what a file starts with.
#[cfg(unix)]
pub(super) fn open_private_with(path: &Path, truncate: bool) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(truncate)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// A file made by `open_private` before, opened again to write: never created here
/// (a file removed since stays removed), never through a link (`O_NOFOLLOW`).
#[cfg(unix)]
pub(super) fn open_existing_private(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Windows: as `open_private_with`, but only a file that exists.
#[cfg(windows)]
pub(super) fn open_existing_private(path: &Path) -> io::Result<File> {
    use std::os::windows::fs::OpenOptionsExt;
    use windows_sys::Win32::Storage::FileSystem::FILE_FLAG_OPEN_REPARSE_POINT;
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)?;
    if file.metadata()?.file_type().is_symlink() {
        return Err(io::Error::other(format!("{} is a link", path.display())));
    }
    Ok(file)
}

/// Windows: a symlink (or junction) at `path` is opened as itself, never followed
/// (FILE_FLAG_OPEN_REPARSE_POINT, the counterpart of O_NOFOLLOW), and refused. Handles
/// are not inherited unless asked for (std), the counterpart of O_CLOEXEC; the file
/// takes its directory's ACL (see `private_dir_builder`).
#[cfg(windows)]
pub(super) fn open_private_with(path: &Path, truncate: bool) -> io::Result<File> {
    use std::os::windows::fs::OpenOptionsExt;
    use windows_sys::Win32::Storage::FileSystem::FILE_FLAG_OPEN_REPARSE_POINT;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(truncate)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)?;
    if file.metadata()?.file_type().is_symlink() {
        return Err(io::Error::other(format!("{} is a link", path.display())));
    }
    Ok(file)
}

/// What `rename_as` does besides a rename.
pub(super) enum Rename {
    /// Never replaces what is at `to` (a folder, a file, a link): `AlreadyExists`.
    NoReplace,
    /// Swaps the two, both of which must exist.
    Exchange,
}

/// `from` renamed to `to` as `how` says (`renameat2`). Linux only: elsewhere
/// `Unsupported`, and the callers do without.
#[cfg(target_os = "linux")]
pub(super) fn rename_as(from: &Path, to: &Path, how: Rename) -> io::Result<()> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    let flags = match how {
        Rename::NoReplace => RenameFlags::NOREPLACE,
        Rename::Exchange => RenameFlags::EXCHANGE,
    };
    renameat_with(CWD, from, CWD, to, flags).map_err(io::Error::from)
}

#[cfg(not(target_os = "linux"))]
pub(super) fn rename_as(_from: &Path, _to: &Path, _how: Rename) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Writes `bytes` as far as the file takes them: how many it took, and the error that
/// stopped it (a full disk takes part of a write, then refuses the rest).
pub(super) fn write_counted(file: &mut File, bytes: &[u8]) -> (usize, Option<io::Error>) {
    let mut took = 0;
    while took < bytes.len() {
        match file.write(&bytes[took..]) {
            Ok(0) => return (took, Some(io::ErrorKind::WriteZero.into())),
            Ok(n) => took += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (took, Some(e)),
        }
    }
    (took, None)
}
