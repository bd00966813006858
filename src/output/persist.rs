//! Output on disk: `<ioDir>/<sessionId>/<handle>/{stdout.txt, stderr.txt, info.json}`.
//!
//! Text is written as each line completes, straight to the file (no user-space
//! buffer), so a crash loses at most the line being written. Files are 0600 and
//! directories 0700: output can hold secrets. A per-job cap keeps a runaway job from
//! filling the disk; what the cap refused is counted and named in a marker.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Write};
#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

pub const DEFAULT_DISK_CAP_BYTES: u64 = 64 * 1024 * 1024;
pub const DEFAULT_KEEP_JOB_DIRS: usize = 100;
const INFO_FILE: &str = "info.json";
const INFO_TMP_FILE: &str = ".info.json.tmp";
/// Names tried for one job directory before persistence gives up for that job.
const MAX_DIR_ATTEMPTS: u32 = 1000;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Stream {
    Stdout,
    Stderr,
}

pub struct JobFiles {
    dir: PathBuf,
    /// `None` once closed (the job's output has ended).
    stdout: Option<File>,
    stderr: Option<File>,
    cap: u64,
    written: u64,
    /// Of `written`, the bytes in `stdout.txt`: text a reader can find there by offset.
    stdout_written: u64,
    refused: u64,
    failed: bool,
    /// The temporary file of the next `info.json` rewrite exists already (made empty,
    /// then closed, so no descriptor is held per job). Creating a file is the slow
    /// part of a rewrite (an inode: ~0.2 ms here), and the rewrite at the exit is on
    /// the path of every caller waiting for that exit; made with the first `info.json`
    /// of a job that runs on, it costs nothing there.
    spare_info: bool,
    /// `info.json` exists (a later write replaces it).
    info_written: bool,
}

/// The metadata kept current in `info.json`.
#[derive(Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct JobInfo {
    pub handle: u32,
    pub pid: Option<u32>,
    pub command: String,
    pub args: Option<Vec<String>>,
    pub description: Option<String>,
    pub directory: String,
    pub mode: &'static str,
    pub status: &'static str,
    pub start_time: u64,
    pub end_time: Option<u64>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub error: Option<String>,
}

/// Creates `dir` and its missing parents with mode 0700.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    private_dir_builder().recursive(true).create(dir)
}

/// Mode 0700 on Unix. Windows has no mode: a new directory takes the ACL of its parent
/// (under the user's profile, where `ioDir` is by default, only the user and the system).
fn private_dir_builder() -> DirBuilder {
    #[allow(unused_mut)]
    let mut builder = DirBuilder::new();
    #[cfg(unix)]
    builder.mode(0o700);
    builder
}

impl JobFiles {
    /// Creates the job's directory under `session_dir` and its files. The directory is
    /// made with an exclusive `mkdir`, never reused: a name already taken — by an
    /// earlier process with the same session id, another service sharing it, or a
    /// symlink planted there — moves this job to `<handle>-2`, `<handle>-3`, ... so no
    /// output is overwritten and none is written where someone else pointed.
    pub fn create(session_dir: &Path, handle: u32, separate_stderr: bool, cap: u64) -> io::Result<Self> {
        create_private_dir(session_dir)?;
        if fs::symlink_metadata(session_dir)?.file_type().is_symlink() {
            return Err(io::Error::other("the session directory is a symlink"));
        }
        let dir = (1..=MAX_DIR_ATTEMPTS)
            .map(|n| match n {
                1 => session_dir.join(handle.to_string()),
                n => session_dir.join(format!("{handle}-{n}")),
            })
            .find_map(|dir| match private_dir_builder().create(&dir) {
                Ok(()) => Some(Ok(dir)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => None,
                Err(e) => Some(Err(e)),
            })
            .unwrap_or_else(|| Err(io::Error::other("no free job directory name")))?;
        let stderr = if separate_stderr {
            Some(open_private(&dir.join("stderr.txt"))?)
        } else {
            None
        };
        Ok(Self {
            stdout: Some(open_private(&dir.join("stdout.txt"))?),
            dir,
            stderr,
            cap,
            written: 0,
            stdout_written: 0,
            refused: 0,
            failed: false,
            spare_info: false,
            info_written: false,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn stdout_path(&self) -> PathBuf {
        self.dir.join("stdout.txt")
    }

    /// Bytes of text `stdout.txt` holds from its start (before any cap marker). After a
    /// failed write the file may hold less than it was given: it then counts as none.
    pub fn stdout_text_len(&self) -> u64 {
        if self.failed {
            0
        } else {
            self.stdout_written
        }
    }

    pub fn write(&mut self, stream: Stream, text: &str) {
        if text.is_empty() || self.failed {
            return;
        }
        let room = self.cap.saturating_sub(self.written) as usize;
        let mut take = text.len().min(room);
        while take > 0 && !text.is_char_boundary(take) {
            take -= 1;
        }
        self.refused += (text.len() - take) as u64;
        if take == 0 {
            return;
        }
        let (file, to_stdout) = match (stream, self.stderr.as_mut(), self.stdout.as_mut()) {
            (Stream::Stderr, Some(f), _) => (f, false),
            (_, _, Some(f)) => (f, true),
            _ => return,
        };
        // A full disk or a removed directory must not take the job down: persistence
        // stops, the in-memory views go on.
        if file.write_all(&text.as_bytes()[..take]).is_err() {
            self.failed = true;
            return;
        }
        self.written += take as u64;
        if to_stdout {
            self.stdout_written += take as u64;
        }
    }

    /// Appends the cap marker if anything was refused. Called once, at the end.
    pub fn finish(&mut self) {
        if self.refused > 0 && !self.failed {
            let marker = format!(
                "\n[... the per-job disk cap of {} bytes was reached; {} more bytes were not saved ...]\n",
                self.cap, self.refused
            );
            if let Some(stdout) = self.stdout.as_mut() {
                let _ = stdout.write_all(marker.as_bytes());
            }
        }
    }

    /// Closes the output files; nothing more will be written (info.json still can be).
    pub fn close(&mut self) {
        self.stdout = None;
        self.stderr = None;
    }

    /// Writes `info.json` atomically: readers see the old or the new file, never half.
    pub fn write_info(&mut self, info: &JobInfo) -> io::Result<()> {
        let json = serde_json::to_vec_pretty(info).map_err(io::Error::other)?;
        let tmp = self.dir.join(INFO_TMP_FILE);
        // The spare is ours and empty: opened without truncating it, as truncating makes
        // ext4 write the file back when it is closed (its guard for replace-by-rename).
        // Without a spare the file is created here.
        let mut file = if std::mem::take(&mut self.spare_info) {
            open_private_with(&tmp, false)?
        } else {
            open_private(&tmp)?
        };
        file.write_all(&json)?;
        drop(file);
        fs::rename(&tmp, self.dir.join(INFO_FILE))?;
        self.info_written = true;
        Ok(())
    }

    /// Whether `info.json` has been written yet.
    pub fn info_written(&self) -> bool {
        self.info_written
    }

    /// Makes the temporary file of the next `info.json` rewrite now (see `spare_info`).
    pub fn prepare_info_rewrite(&mut self) {
        if !self.spare_info {
            self.spare_info = open_private(&self.dir.join(INFO_TMP_FILE)).is_ok();
        }
    }
}

impl Drop for JobFiles {
    fn drop(&mut self) {
        // An unused spare would stay behind as an empty hidden file.
        if self.spare_info {
            let _ = fs::remove_file(self.dir.join(INFO_TMP_FILE));
        }
    }
}

fn open_private(path: &Path) -> io::Result<File> {
    open_private_with(path, true)
}

#[cfg(unix)]
fn open_private_with(path: &Path, truncate: bool) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(truncate)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Windows: a symlink (or junction) at `path` is opened as itself, never followed
/// (FILE_FLAG_OPEN_REPARSE_POINT, the counterpart of O_NOFOLLOW), and refused. Handles
/// are not inherited unless asked for (std), the counterpart of O_CLOEXEC; the file
/// takes its directory's ACL (see `private_dir_builder`).
#[cfg(windows)]
fn open_private_with(path: &Path, truncate: bool) -> io::Result<File> {
    use std::os::windows::fs::OpenOptionsExt;
    use windows_sys::Win32::Storage::FileSystem::FILE_FLAG_OPEN_REPARSE_POINT;
    let file = OpenOptions::new()
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

pub fn unix_millis(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Keeps the newest `keep` job directories under `io_dir` (`<session>/<handle>`) and
/// removes the rest. Only directories holding an `info.json` are ours to delete;
/// anything else under `io_dir` is left alone.
pub fn prune_job_dirs(io_dir: &Path, keep: usize) -> io::Result<usize> {
    let mut jobs: Vec<(SystemTime, PathBuf)> = Vec::new();
    let sessions = match fs::read_dir(io_dir) {
        Ok(s) => s,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    for session in sessions.flatten() {
        if !session.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            continue;
        }
        let Ok(handles) = fs::read_dir(session.path()) else {
            continue;
        };
        for job in handles.flatten() {
            let info = job.path().join(INFO_FILE);
            if let Ok(meta) = fs::symlink_metadata(&info) {
                let when = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                jobs.push((when, job.path()));
            }
        }
    }
    if jobs.len() <= keep {
        return Ok(0);
    }
    jobs.sort_by_key(|job| std::cmp::Reverse(job.0));
    let mut removed = 0;
    for (_, dir) in jobs.into_iter().skip(keep) {
        if fs::remove_dir_all(&dir).is_ok() {
            removed += 1;
            if let Some(parent) = dir.parent() {
                // Succeeds only once the session directory is empty.
                let _ = fs::remove_dir(parent);
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn info_rewrites_use_the_spare_made_ahead_and_leave_nothing_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let mut files = JobFiles::create(&tmp.path().join("sess"), 7, false, 100).unwrap();
        let mut info = JobInfo {
            handle: 7,
            pid: Some(1),
            command: "true".into(),
            args: None,
            description: None,
            directory: ".".into(),
            mode: "pty",
            status: "running",
            start_time: 0,
            end_time: None,
            exit_code: None,
            signal: None,
            error: None,
        };
        files.write_info(&info).unwrap();
        files.prepare_info_rewrite();
        let listing = |dir: &Path| {
            let mut names: Vec<String> = fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        assert_eq!(listing(files.dir()), [".info.json.tmp", "info.json", "stdout.txt"]);
        info.status = "exited";
        files.write_info(&info).unwrap();
        assert_eq!(listing(files.dir()), ["info.json", "stdout.txt"]);
        let read = fs::read_to_string(files.dir().join("info.json")).unwrap();
        assert!(read.contains("\"status\": \"exited\""), "{read}");
        // A spare never used (the job was dropped before its exit) is removed.
        files.prepare_info_rewrite();
        let dir = files.dir().to_path_buf();
        drop(files);
        assert_eq!(listing(&dir), ["info.json", "stdout.txt"]);
    }

    #[test]
    fn files_are_private_and_capped() {
        let tmp = tempfile::tempdir().unwrap();
        let mut files = JobFiles::create(&tmp.path().join("s"), 1, true, 10).unwrap();
        let dir = files.dir().to_path_buf();
        assert_eq!(dir, tmp.path().join("s").join("1"));
        files.write(Stream::Stdout, "0123456789abc");
        files.write(Stream::Stderr, "more");
        files.finish();
        let out = fs::read_to_string(dir.join("stdout.txt")).unwrap();
        assert!(out.starts_with("0123456789\n[... the per-job disk cap of 10 bytes was reached; 7 more"));
        #[cfg(unix)]
        assert_eq!(
            fs::metadata(dir.join("stdout.txt")).unwrap().permissions().mode() & 0o777,
            0o600
        );
        #[cfg(unix)]
        assert_eq!(fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
    }

    // Symlinks need a privilege on Windows that tests cannot count on.
    #[cfg(unix)]
    #[test]
    fn a_taken_or_planted_name_is_never_reused() {
        let tmp = tempfile::tempdir().unwrap();
        let session = tmp.path().join("s");
        let first = JobFiles::create(&session, 1, false, 100).unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, session.join("2")).unwrap();
        let again = JobFiles::create(&session, 1, false, 100).unwrap();
        let planted = JobFiles::create(&session, 2, false, 100).unwrap();
        assert_eq!(first.dir(), session.join("1"));
        assert_eq!(again.dir(), session.join("1-2"));
        assert_eq!(planted.dir(), session.join("2-2"));
        assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
    }

    #[test]
    fn prune_keeps_newest_and_ignores_foreign_dirs() {
        let tmp = tempfile::tempdir().unwrap();
        for h in 1..=5u32 {
            let mut files = JobFiles::create(&tmp.path().join("sess"), h, false, 100).unwrap();
            let info = JobInfo {
                handle: h,
                pid: None,
                command: "x".into(),
                args: None,
                description: None,
                directory: ".".into(),
                mode: "pty",
                status: "exited",
                start_time: 0,
                end_time: None,
                exit_code: Some(0),
                signal: None,
                error: None,
            };
            files.write_info(&info).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(15));
        }
        fs::create_dir_all(tmp.path().join("foreign").join("keepme")).unwrap();
        assert_eq!(prune_job_dirs(tmp.path(), 2).unwrap(), 3);
        assert!(tmp.path().join("sess/5").exists());
        assert!(tmp.path().join("sess/4").exists());
        assert!(!tmp.path().join("sess/1").exists());
        assert!(tmp.path().join("foreign/keepme").exists());
    }
}
