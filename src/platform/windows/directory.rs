//! Opening a job's working directory, and naming an open directory.
//!
//! The handle is held while the job starts, without delete sharing, so the directory
//! that was checked cannot be removed or renamed away (and something else put in its
//! place) before the process has made it its current directory — the counterpart of
//! entering it by descriptor on Unix.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::ffi::OsStringExt;
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};

use windows_sys::Win32::Storage::FileSystem::{
    GetFinalPathNameByHandleW, FILE_FLAG_BACKUP_SEMANTICS, FILE_NAME_NORMALIZED, FILE_SHARE_READ, FILE_SHARE_WRITE,
    VOLUME_NAME_DOS,
};

pub fn open_directory(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        // Without it a directory cannot be opened at all.
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
        .open(path)?;
    if !file.metadata()?.is_dir() {
        return Err(io::Error::new(io::ErrorKind::NotADirectory, "not a directory"));
    }
    Ok(file)
}

/// The path of an open file as the system names it now, links resolved, in the same
/// `\\?\C:\...` form `std::fs::canonicalize` gives (so the two compare).
pub fn opened_path(file: &File) -> Option<PathBuf> {
    let mut buf = vec![0u16; 512];
    loop {
        // SAFETY: the handle is open (borrowed from `file`); the pointer and length
        // describe `buf`.
        let n = unsafe {
            GetFinalPathNameByHandleW(
                file.as_raw_handle(),
                buf.as_mut_ptr(),
                buf.len() as u32,
                FILE_NAME_NORMALIZED | VOLUME_NAME_DOS,
            )
        } as usize;
        match n {
            0 => return None,
            // Too small: `n` is the size needed, with its NUL.
            n if n >= buf.len() => buf.resize(n + 1, 0),
            n => return Some(PathBuf::from(OsString::from_wide(&buf[..n]))),
        }
    }
}
