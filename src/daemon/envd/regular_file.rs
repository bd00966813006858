//! Opening a caller-named path for GET and POST `/files` (files.rs) so that only a
//! regular file is ever read or written, and the open itself never waits.
//!
//! What it stops: an `open(2)` of a FIFO blocks until the other end is opened (a read
//! until a writer comes, a write until a reader comes), and a device or socket is no
//! file to transfer at all. One blocked open holds one of the runtime's blocking
//! threads for ever; a few hundred of them (`GET /files?path=<a FIFO>`) held every
//! thread, so every file call hung and, on a daemon without a token, so did every new
//! connection, whose owner check runs on the same threads (src/daemon/http/auth.rs).
//!
//! How: the path is first looked at (`stat`, following symlinks as envd does), and
//! anything but a regular file is refused without being opened (an open of some devices
//! acts: a tape rewinds, a modem line is raised). The open that follows carries
//! `O_NONBLOCK` and `O_NOCTTY`, and what it opened is checked again with `fstat`: a FIFO
//! or device swapped in between the two is opened without waiting (or refused by the
//! kernel with ENXIO) and then refused the same way. Every refusal is
//! `InvalidArgument` (envd's `{"code": 400, "message"}`), the message naming the kind.

use std::fs::{File, Metadata, OpenOptions};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use super::fs_error::{FsCode, FsError};

/// The file at `path` (symlinks followed), opened for reading, and its length.
pub fn open_for_read(path: &Path) -> Result<(File, u64), FsError> {
    let before = std::fs::metadata(path).map_err(|e| FsError::io(&e, "cannot read", path))?;
    refuse_unless_regular(&before, path)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| open_error(&e, "cannot open", path))?;
    let opened = file.metadata().map_err(|e| FsError::io(&e, "cannot read", path))?;
    refuse_unless_regular(&opened, path)?;
    Ok((file, opened.len()))
}

/// The file at `path` opened for writing from its start (made if missing, emptied if
/// there); its missing parent directories are made first.
pub fn open_for_write(path: &Path) -> Result<File, FsError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| FsError::io(&e, "cannot make directory", parent))?;
    }
    match std::fs::metadata(path) {
        Ok(before) => refuse_unless_regular(&before, path)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(FsError::io(&e, "cannot write", path)),
    }
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| open_error(&e, "cannot write", path))?;
    let opened = file.metadata().map_err(|e| FsError::io(&e, "cannot write", path))?;
    refuse_unless_regular(&opened, path)?;
    Ok(file)
}

/// InvalidArgument for anything but a regular file, saying what it is.
fn refuse_unless_regular(meta: &Metadata, path: &Path) -> Result<(), FsError> {
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(());
    }
    let what = if kind.is_dir() {
        return Err(FsError::new(
            FsCode::InvalidArgument,
            format!("path '{}' is a directory", path.display()),
        ));
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "not a file"
    };
    Err(FsError::new(
        FsCode::InvalidArgument,
        format!(
            "path '{}' is {what}: only regular files are read or written here",
            path.display()
        ),
    ))
}

/// An open's failure; ENXIO is what a non-blocking write-open of a FIFO without a
/// reader (or of a socket) gives: the same refusal as a FIFO seen by `stat`.
fn open_error(err: &std::io::Error, doing: &str, path: &Path) -> FsError {
    if err.raw_os_error() == Some(libc::ENXIO) {
        return FsError::new(
            FsCode::InvalidArgument,
            format!(
                "path '{}' is not a regular file: only regular files are read or written here",
                path.display()
            ),
        );
    }
    FsError::io(err, doing, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fifo(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("pipe");
        // libc's mkfifo: rustix has `mkfifoat` on Linux only, and this runs on macOS too.
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
        path
    }

    #[test]
    fn a_fifo_is_refused_without_waiting_for_its_other_end() {
        let dir = tempfile::tempdir().unwrap();
        let pipe = fifo(dir.path());
        // No writer and no reader: a plain open would block here for ever.
        assert_eq!(open_for_read(&pipe).unwrap_err().code, FsCode::InvalidArgument);
        assert_eq!(open_for_write(&pipe).unwrap_err().code, FsCode::InvalidArgument);
        // Through a symlink, the same.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&pipe, &link).unwrap();
        let err = open_for_read(&link).unwrap_err();
        assert!(err.message.contains("a FIFO"), "{}", err.message);
        assert_eq!(
            open_for_read(Path::new("/dev/null")).unwrap_err().code,
            FsCode::InvalidArgument
        );
        assert_eq!(open_for_read(dir.path()).unwrap_err().code, FsCode::InvalidArgument);
    }

    #[test]
    fn regular_files_are_read_and_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b.txt");
        use std::io::Write;
        open_for_write(&path).unwrap().write_all(b"hello").unwrap();
        let (_, len) = open_for_read(&path).unwrap();
        assert_eq!(len, 5);
        assert_eq!(
            open_for_read(&dir.path().join("none")).unwrap_err().code,
            FsCode::NotFound
        );
    }
}
