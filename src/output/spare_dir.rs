//! Job folders recycled instead of removed: a finished folder past the service's
//! `keep` becomes a spare (emptied, off the spawn's path), and the next job's folder is
//! that spare renamed to the job's name.
//!
//! Why: on ext4 without a journal (this project's CI machines, and many VMs) making a
//! folder and two files costs 0.3 to 1 ms of CPU a job (the inode allocator passes over
//! every inode freed in the last minutes), and removing them 100 jobs later as much
//! again with `discard`. A job that reuses a spare makes no inode and frees none: its
//! folder is one `rename` on the reader's path.
//!
//! What stays as with a new folder: the name is taken exclusively (`RENAME_NOREPLACE`:
//! a name already taken or a link planted there moves the job to `<handle>-2`, as
//! `mkdir` does in `persist.rs`), the files are 0600 in a 0700 folder and told by their
//! identity (device, inode, birth time) from then on, and the job's files start empty.
//! A finished job's name is gone the moment its folder is taken to become a spare (the
//! first step is the rename), so nothing reading by that name sees the next job's
//! output. Linux only; elsewhere folders are removed as before.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

#[cfg(target_os = "linux")]
use super::job_dir::{prime_info_tmp, INFO_FILE, INFO_TMP_FILE, JOB_FILES, STDERR_FILE, STDOUT_FILE};
#[cfg(target_os = "linux")]
use super::private_files::{file_identity, open_private_with};
use super::private_files::{rename_as, FileIdentity, Rename};

/// The spares' names start so, then the service's token: not a job folder's name
/// (`retention::is_job_dir`), so never counted nor listed as one.
pub const SPARE_PREFIX: &str = ".spare-";

/// An emptied job folder waiting for a job: `stdout.txt`, empty, and `.info.json.tmp`
/// (the first `info.json`'s temporary file, see `JobFiles::spare_info`), holding only
/// `INFO_TMP_START`.
#[derive(Debug)]
pub struct SpareDir {
    dir: PathBuf,
    stdout: Option<FileIdentity>,
}

impl SpareDir {
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// What `stdout.txt` is, as it was emptied.
    pub(super) fn stdout_identity(&self) -> Option<FileIdentity> {
        self.stdout
    }
}

/// Makes the finished job folder `dir` the spare `spare` (a free name in the same
/// session folder): renamed first, then checked to hold nothing but a job's files,
/// `stderr.txt` removed (a job in pipes mode makes its own), `info.json` turned into
/// the temporary file of the next one, `stdout.txt` emptied. `None` if any step
/// fails: nothing is left then, neither at `dir`'s name nor at `spare`'s.
///
/// Emptying a file here, not on the job's path, matters on ext4: a file truncated to
/// zero is written back when it is next closed (its guard for replace-by-truncate), and
/// that close is this thread's.
#[cfg(target_os = "linux")]
pub fn scrub(dir: &Path, spare: &Path) -> Option<SpareDir> {
    if rename_as(dir, spare, Rename::NoReplace).is_err() {
        let _ = fs::remove_dir_all(dir);
        return None;
    }
    let emptied = empty_files(spare);
    if emptied.is_none() {
        let _ = fs::remove_dir_all(spare);
    }
    emptied
}

#[cfg(not(target_os = "linux"))]
pub fn scrub(dir: &Path, _spare: &Path) -> Option<SpareDir> {
    let _ = fs::remove_dir_all(dir);
    None
}

#[cfg(target_os = "linux")]
fn empty_files(spare: &Path) -> Option<SpareDir> {
    // Only a job's files, as files (not links, not folders): anything else there was
    // put by someone else, and goes with the folder instead of into the next job's.
    for entry in fs::read_dir(spare).ok()? {
        let entry = entry.ok()?;
        let is_file = entry.file_type().ok()?.is_file();
        if !is_file || !entry.file_name().to_str().is_some_and(|n| JOB_FILES.contains(&n)) {
            return None;
        }
    }
    match fs::remove_file(spare.join(STDERR_FILE)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return None,
        _ => {}
    }
    let info = spare.join(INFO_FILE);
    let info_tmp = spare.join(INFO_TMP_FILE);
    match fs::rename(&info, &info_tmp) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return None,
        _ => {}
    }
    let emptied = |path: &Path| -> Option<Option<FileIdentity>> {
        // Made if missing (a job whose files failed part way), never through a link.
        let file = open_private_with(path, false).ok()?;
        if file.metadata().ok()?.len() > 0 {
            file.set_len(0).ok()?;
        }
        Some(file_identity(&file))
    };
    prime_info_tmp(&info_tmp).ok()?;
    let stdout = emptied(&spare.join(STDOUT_FILE))?;
    // A file whose identity cannot be told (no birth time) is never reused: a later
    // check could not tell it from one put at its name since.
    stdout.and_then(|(_, _, born)| born)?;
    Some(SpareDir {
        dir: spare.to_path_buf(),
        stdout,
    })
}

/// Takes the spare as the folder `<session_dir>/<handle>` (or `<handle>-<n>`, the
/// first free one, as `JobFiles::create` names a new folder). On a failure other than
/// a taken name the spare is removed and the error returned: the caller makes a new
/// folder instead.
pub(super) fn claim(spare: &SpareDir, session_dir: &Path, handle: u32) -> io::Result<PathBuf> {
    let claimed =
        super::job_dir::first_free_name(session_dir, handle, |dir| rename_as(&spare.dir, dir, Rename::NoReplace));
    if claimed.is_err() {
        let _ = fs::remove_dir_all(&spare.dir);
    }
    claimed
}

/// Removes the spares a service left in `session_dir` (it ended without `shutdown`, or
/// died): called only for a session no live service holds (`prune_dead_sessions`).
pub fn remove_left_spares(session_dir: &Path) {
    let Ok(entries) = fs::read_dir(session_dir) else { return };
    for entry in entries.flatten() {
        let named = entry.file_name().to_str().is_some_and(|n| n.starts_with(SPARE_PREFIX));
        // The entry's own type: a link is never followed into.
        if named && entry.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
#[path = "spare_dir_tests.rs"]
mod tests;
