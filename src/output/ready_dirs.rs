//! Job directories made ahead of need.
//!
//! A job's files are a directory, `stdout.txt` and `info.json` (written through a
//! temporary file, and again at the exit). Creating an inode is the slow part: ~0.17 ms
//! on a tidy ext4, several times that in a block group full of recently deleted inodes
//! (measured: spawn→exit of `true` 1.6 ms in one directory of /tmp, 4.2 ms in another,
//! the time inside ext4's inode allocator). So a few directories with those files already
//! in them are kept ready in the session directory, made on a blocking thread; a new job
//! takes one by renaming it to its own name, which allocates nothing.
//!
//! A ready directory is `.ready-<pid>-<n>`, mode 0700, holding `stdout.txt`,
//! `.info.json.tmp` and `.info.json.next` (empty, 0600). Those of this process are removed
//! when the service goes; those of a process that died are removed by the next process
//! that makes ready directories in the same session directory.

use std::fs::{self, DirBuilder};
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::persist::{create_session_dir, open_private, INFO_NEXT_FILE, INFO_TMP_FILE, STDOUT_FILE};

/// How many are kept ready: enough for a burst of jobs started together.
const READY_TARGET: usize = 4;
const PREFIX: &str = ".ready-";

pub struct ReadyDirs {
    session_dir: PathBuf,
    ready: Mutex<Vec<PathBuf>>,
    refilling: AtomicBool,
    next: AtomicU64,
    stale_checked: AtomicBool,
    /// Set by `discard`: nothing more is made or handed out.
    closed: AtomicBool,
}

impl ReadyDirs {
    pub fn new(session_dir: PathBuf) -> Arc<Self> {
        Arc::new(Self {
            session_dir,
            ready: Mutex::new(Vec::new()),
            refilling: AtomicBool::new(false),
            next: AtomicU64::new(1),
            stale_checked: AtomicBool::new(false),
            closed: AtomicBool::new(false),
        })
    }

    /// A ready directory, if one is left; the caller renames it to its own name.
    pub fn take(&self) -> Option<PathBuf> {
        self.ready.lock().unwrap_or_else(|p| p.into_inner()).pop()
    }

    /// Tops the supply up on a blocking thread, unless that is under way already.
    /// Must run inside a tokio runtime.
    pub fn refill_in_background(self: &Arc<Self>) {
        if self.closed.load(Ordering::Acquire) || self.refilling.swap(true, Ordering::AcqRel) {
            return;
        }
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            this.refill();
            this.refilling.store(false, Ordering::Release);
        });
    }

    fn refill(&self) {
        if !self.stale_checked.swap(true, Ordering::AcqRel) {
            remove_stale(&self.session_dir);
        }
        while self.ready.lock().unwrap_or_else(|p| p.into_inner()).len() < READY_TARGET {
            // A full disk or a missing ioDir: jobs make their own, as without this.
            let Ok(dir) = self.make_one() else { return };
            let mut ready = self.ready.lock().unwrap_or_else(|p| p.into_inner());
            // Checked under the lock `discard` takes, so nothing is left behind by a race.
            if self.closed.load(Ordering::Acquire) {
                drop(ready);
                let _ = fs::remove_dir_all(dir);
                return;
            }
            ready.push(dir);
        }
    }

    fn make_one(&self) -> io::Result<PathBuf> {
        create_session_dir(&self.session_dir)?;
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let dir = self.session_dir.join(format!("{PREFIX}{}-{n}", std::process::id()));
        DirBuilder::new().mode(0o700).create(&dir)?;
        for file in [STDOUT_FILE, INFO_TMP_FILE, INFO_NEXT_FILE] {
            if let Err(e) = open_private(&dir.join(file)) {
                let _ = fs::remove_dir_all(&dir);
                return Err(e);
            }
        }
        Ok(dir)
    }

    /// Removes the directories still ready (the service is going).
    pub fn discard(&self) {
        let dirs = {
            let mut ready = self.ready.lock().unwrap_or_else(|p| p.into_inner());
            self.closed.store(true, Ordering::Release);
            std::mem::take(&mut *ready)
        };
        for dir in dirs {
            let _ = fs::remove_dir_all(dir);
        }
    }
}

impl Drop for ReadyDirs {
    fn drop(&mut self) {
        self.discard();
    }
}

/// Removes ready directories left by processes that no longer exist.
fn remove_stale(session_dir: &Path) {
    let Ok(entries) = fs::read_dir(session_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: kill with signal 0 only checks whether the pid exists.
        let alive = owner > 0
            && (unsafe { libc::kill(owner, 0) } == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM));
        let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
        if !alive && is_dir {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    #[test]
    fn makes_private_directories_with_the_files_a_job_needs_and_removes_them() {
        let tmp = tempfile::tempdir().unwrap();
        let session = tmp.path().join("sess");
        let ready = ReadyDirs::new(session.clone());
        ready.refill();
        let dirs = names(&session);
        assert_eq!(dirs.len(), READY_TARGET);
        let one = ready.take().unwrap();
        assert_eq!(names(&one), [".info.json.next", ".info.json.tmp", "stdout.txt"]);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(fs::metadata(&one).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(
            fs::metadata(one.join("stdout.txt")).unwrap().permissions().mode() & 0o777,
            0o600
        );
        ready.discard();
        // The one taken is the caller's; the rest are gone.
        assert_eq!(
            names(&session),
            [one.file_name().unwrap().to_string_lossy().into_owned()]
        );
    }

    #[test]
    fn a_job_takes_a_ready_directory_by_name_never_replacing_one() {
        use crate::output::persist::{JobFiles, JobInfo};
        let tmp = tempfile::tempdir().unwrap();
        let session = tmp.path().join("sess");
        let ready = ReadyDirs::new(session.clone());
        ready.refill();
        // Handle 1's name is taken (a symlink planted there): the job becomes 1-2.
        let outside = tmp.path().join("outside");
        fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, session.join("1")).unwrap();
        let mut files = JobFiles::create(&session, 1, false, 100, ready.take()).unwrap();
        assert_eq!(files.dir(), session.join("1-2"));
        assert!(names(&outside).is_empty());
        let info = JobInfo {
            handle: 1,
            pid: None,
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
        assert_eq!(names(files.dir()), [".info.json.tmp", "info.json", "stdout.txt"]);
        files.write_info(&info).unwrap();
        assert_eq!(names(files.dir()), ["info.json", "stdout.txt"]);
        // Three ready directories are left, and nothing else but the two job names.
        let left = names(&session);
        assert_eq!(left.iter().filter(|n| n.starts_with(PREFIX)).count(), READY_TARGET - 1);
        assert!(left.contains(&"1".to_string()) && left.contains(&"1-2".to_string()));
    }

    #[test]
    fn a_dead_process_leftovers_are_removed_and_a_live_one_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let session = tmp.path().join("sess");
        fs::create_dir_all(&session).unwrap();
        // pid 2^22 + 1 is above Linux's pid_max limit, so it never names a process.
        let dead = session.join(format!("{PREFIX}4194305-1"));
        let live = session.join(format!("{PREFIX}{}-99", std::process::id()));
        let foreign = session.join("not-ours");
        for dir in [&dead, &live, &foreign] {
            fs::create_dir(dir).unwrap();
        }
        remove_stale(&session);
        assert!(!dead.exists());
        assert!(live.exists());
        assert!(foreign.exists());
    }
}
