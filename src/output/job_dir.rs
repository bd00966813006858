//! A job folder's names: the files it holds, and the first free name for a new one
//! (`<handle>`, `<handle>-2`, ...), shared by a new folder (`persist.rs`) and a spare
//! taken as one (`spare_dir.rs`).

use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use super::private_files::open_private_with;

pub const STDOUT_FILE: &str = "stdout.txt";
pub const STDERR_FILE: &str = "stderr.txt";
pub const INFO_FILE: &str = "info.json";
pub const INFO_TMP_FILE: &str = ".info.json.tmp";
/// What the temporary file of a job's next `info.json` holds while it waits
/// (`JobFiles::spare_info`): the first byte of every `info.json`, which is a JSON
/// object. The rewrite then writes over a byte the file has already, in the page the
/// file has already: on ext4 that write took 2.5 µs where the first write into an
/// empty file took 10 (it allocates the page and reserves the block; measured here),
/// on the path from a job's exit to its result.
pub const INFO_TMP_START: &[u8] = b"{";
/// Every name a job's folder holds (`retention::is_job_dir`).
pub const JOB_FILES: [&str; 4] = [STDOUT_FILE, STDERR_FILE, INFO_FILE, INFO_TMP_FILE];
/// Names tried for one job directory before persistence gives up for that job.
pub const MAX_DIR_ATTEMPTS: u32 = 1000;

/// The job's folder under `session_dir`, made by `make` at the first name it can take:
/// `<handle>`, then `<handle>-2`, `<handle>-3`, ... while `make` finds the name taken
/// (`AlreadyExists`); any other failure is returned.
pub fn first_free_name(session_dir: &Path, handle: u32, make: impl Fn(&Path) -> io::Result<()>) -> io::Result<PathBuf> {
    (1..=MAX_DIR_ATTEMPTS)
        .map(|n| match n {
            1 => session_dir.join(handle.to_string()),
            n => session_dir.join(format!("{handle}-{n}")),
        })
        .find_map(|dir| match make(&dir) {
            Ok(()) => Some(Ok(dir)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => None,
            Err(e) => Some(Err(e)),
        })
        .unwrap_or_else(|| Err(io::Error::other("no free job directory name")))
}

/// Makes `path` a file holding `INFO_TMP_START` only (see `JobFiles::spare_info` in
/// `super::persist`): made if missing, never through a link.
///
/// A finished job's `info.json`, made this file by `super::spare_dir`, starts so
/// already: it is cut to that byte, not emptied and written again. ext4 writes a file
/// cut to nothing back to the disk when it is closed (its guard for
/// replace-by-truncate): a disk write for every job, which made the next spawns 40 µs
/// slower here. Cut to one byte it stays in memory until the exit's rewrite.
pub fn prime_info_tmp(path: &Path) -> io::Result<()> {
    let mut file = open_private_with(path, false)?;
    let len = file.metadata()?.len();
    if len > 0 {
        let mut first = [0u8; 1];
        if file.read(&mut first)? == 1 && first == INFO_TMP_START {
            return if len > 1 { file.set_len(1) } else { Ok(()) };
        }
        file.set_len(0)?;
        file.seek(io::SeekFrom::Start(0))?;
    }
    file.write_all(INFO_TMP_START)
}
