//! Which job folders under `ioDir` may be removed, and by whom.
//!
//! Many services share one `ioDir` (two CLI windows on `~/.gemini/io`, each its own
//! process and session). A service proves it is alive with a [`SessionLease`]: a shared
//! advisory lock on `<session>/.live-<service token>`, held as long as the service
//! exists. The lock is the proof because the kernel lets go of it when its holder dies,
//! however it dies (a crash, SIGKILL, a power loss ends the file's locks with the
//! machine): a pid file could name a pid reused since, a heartbeat would need a timer.
//! A pruner takes each lock of a session exclusively without waiting: if any is held,
//! the session is live and nothing in it is touched. Its own finished folders a live
//! service removes itself (`service/retention.rs`).
//!
//! The lock is `std::fs::File::try_lock` (flock(2) on Linux and macOS, LockFileEx on
//! Windows): locks per open file, so two services of one process exclude each other
//! as two processes do.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::job_dir::JOB_FILES;
use super::private_files::{create_private_dir, open_private_with};

/// Finished job folders kept: a service keeps this many of its own, and start-up
/// pruning this many of the sessions no live service holds.
pub const DEFAULT_KEEP_JOB_DIRS: usize = 100;
/// The lease files' names start so (`.live-<service token>`).
const LEASE_PREFIX: &str = ".live-";
/// Times a lease is made again after a pruner removed it under us (see `acquire`).
const LEASE_ATTEMPTS: u32 = 8;

/// The proof that a service lives: a shared lock held on a file of its session's
/// folder. Dropped with the service: the file is removed, and the session's folder too
/// once nothing else is in it.
pub struct SessionLease {
    file: File,
    path: PathBuf,
    session_dir: PathBuf,
}

impl SessionLease {
    /// Makes `<session_dir>/.live-<token>` and locks it (shared). The name is this
    /// service's alone; the only other party that opens it is a pruner, which removes
    /// it only while it holds the exclusive lock, so a pruner that saw the file before
    /// we locked it may have removed it: the lock is then on a file no longer there,
    /// and the lease is made again.
    pub fn acquire(session_dir: &Path, token: &str) -> io::Result<Self> {
        let path = session_dir.join(format!("{LEASE_PREFIX}{token}"));
        Ok(Self {
            file: lock_at(session_dir, &path)?,
            path,
            session_dir: session_dir.to_path_buf(),
        })
    }

    /// The locked file's descriptor: a restart in place (src/daemon/upgrade/) keeps it
    /// open across the exec, so the session is never without its lock meanwhile (a
    /// pruner would take it for dead and remove its folders under running jobs).
    #[cfg(unix)]
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.file)
    }

    /// The lease of this process's previous image, inherited locked: taken if it is
    /// still the file at its name, else made again.
    pub fn adopt(file: File, session_dir: &Path, token: &str) -> io::Result<Self> {
        let path = session_dir.join(format!("{LEASE_PREFIX}{token}"));
        if same_file(&file, &path) {
            return Ok(Self {
                file,
                path,
                session_dir: session_dir.to_path_buf(),
            });
        }
        Self::acquire(session_dir, token)
    }

    /// Whether the lease file is still where pruners look for it (the ioDir may have
    /// been removed under a running service); made again if not. Called before each
    /// job's folder is made, so a job folder never exists without its session's lease.
    pub fn renew(&mut self) -> io::Result<()> {
        if !same_file(&self.file, &self.path) {
            // The old lock goes with the file it was on, which no one can find.
            self.file = lock_at(&self.session_dir, &self.path)?;
        }
        Ok(())
    }
}

/// Makes the file at `path` (and its folder) and locks it shared; made again if a
/// pruner removed it before the lock was taken (see `SessionLease::acquire`).
fn lock_at(session_dir: &Path, path: &Path) -> io::Result<File> {
    let mut last = io::Error::other("no attempt made");
    for _ in 0..LEASE_ATTEMPTS {
        let file = match create_private_dir(session_dir).and_then(|()| open_private_with(path, false)) {
            Ok(file) => file,
            Err(e) => {
                last = e;
                continue;
            }
        };
        // Waits only while a pruner holds it exclusively: the moment it decides.
        file.lock_shared()?;
        if same_file(&file, path) {
            return Ok(file);
        }
        last = io::Error::new(io::ErrorKind::NotFound, "the lease was removed as it was made");
    }
    Err(last)
}

impl Drop for SessionLease {
    fn drop(&mut self) {
        // Removed while still locked, then unlocked by the close: a pruner never sees
        // the file unlocked while this service lives.
        let _ = fs::remove_file(&self.path);
        // Succeeds only once the session's folder is empty.
        let _ = fs::remove_dir(&self.session_dir);
    }
}

/// Whether `file` is the one at `path` (not removed, not replaced).
#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use super::private_files::{file_identity, metadata_identity};
    let named = fs::symlink_metadata(path).ok();
    file_identity(file).is_some_and(|open| named.as_ref().and_then(metadata_identity) == Some(open))
}

/// Windows: std gives no stable file id. The name is this service's alone and a pruner
/// removes it only while holding its exclusive lock (a file removed while open is
/// delete-pending and no longer opens), so a file found at the name is taken for ours.
#[cfg(windows)]
fn same_file(_file: &File, path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

/// Keeps the newest `keep` job folders of the sessions no live service holds and
/// removes the rest; removes the leases their dead services left, and their session
/// folders once empty. Only folders made as job folders are made (see
/// [`is_job_dir`]) are counted or removed; anything else under `io_dir` is left alone.
/// Returns how many job folders were removed.
pub fn prune_dead_sessions(io_dir: &Path, keep: usize) -> io::Result<usize> {
    let entries = match fs::read_dir(io_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut jobs = Vec::new();
    let mut held = Vec::new();
    for entry in entries.flatten() {
        // The entry's own type: a symlink is never followed into.
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let dir = entry.path();
        // The job folders first, the leases after: a job folder is made after its
        // service's lease, so a lease missed by the second listing belongs to no job
        // folder of the first (a listing made while files are added may miss those).
        let session_jobs = job_dirs(&dir);
        if let Some(locks) = lock_leases(&dir) {
            jobs.extend(session_jobs);
            held.push((dir, locks));
        }
    }
    jobs.sort_by_key(|job| std::cmp::Reverse(job.0));
    let mut removed = 0;
    for (_, dir) in jobs.into_iter().skip(keep) {
        if fs::remove_dir_all(&dir).is_ok() {
            removed += 1;
        }
    }
    // The dead services' leases go while their exclusive locks are held, then the
    // session folders that are empty.
    for (dir, locks) in held {
        super::spare_dir::remove_left_spares(&dir);
        for (path, file) in locks {
            let _ = fs::remove_file(&path);
            drop(file);
        }
        let _ = fs::remove_dir(&dir);
    }
    Ok(removed)
}

/// Every lease of the session's folder, locked exclusively: `None` if one is held
/// (a live service), or if one cannot be told (a file system without locks: then
/// nothing is removed, as for a live one).
fn lock_leases(session_dir: &Path) -> Option<Vec<(PathBuf, File)>> {
    let mut locks = Vec::new();
    for entry in fs::read_dir(session_dir).ok()?.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(|n| n.starts_with(LEASE_PREFIX)) || !entry.file_type().is_ok_and(|t| t.is_file())
        {
            continue;
        }
        let path = entry.path();
        let file = match File::open(&path) {
            Ok(file) => file,
            // Removed since the listing: its service ended.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(_) => return None,
        };
        match file.try_lock() {
            Ok(()) => locks.push((path, file)),
            Err(_) => return None,
        }
    }
    Some(locks)
}

/// The session's job folders, each with when it was last written.
fn job_dirs(session_dir: &Path) -> Vec<(SystemTime, PathBuf)> {
    let Ok(entries) = fs::read_dir(session_dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let dir = e.path();
            last_written(&dir).map(|when| (when, dir))
        })
        .collect()
}

/// When the job folder was last written to (the newest of the folder and its files);
/// `None` if it is not a job folder.
fn last_written(dir: &Path) -> Option<SystemTime> {
    if !is_job_dir(dir) {
        return None;
    }
    let mut newest = fs::symlink_metadata(dir).ok()?.modified().ok()?;
    for name in JOB_FILES {
        if let Ok(when) = fs::symlink_metadata(dir.join(name)).and_then(|m| m.modified()) {
            newest = newest.max(when);
        }
    }
    Some(newest)
}

/// A folder made by `JobFiles::create`: named `<handle>` or `<handle>-<n>`, holding
/// nothing but a job's files. A folder a person made or put there is never counted.
pub fn is_job_dir(dir: &Path) -> bool {
    let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let named = match name.split_once('-') {
        Some((handle, n)) => digits(handle) && digits(n),
        None => digits(name),
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    named
        && entries.flatten().all(|e| {
            e.file_type().is_ok_and(|t| t.is_file()) && e.file_name().to_str().is_some_and(|n| JOB_FILES.contains(&n))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::persist::{JobFiles, JobInfo, Stream};

    fn finished_job(session: &Path, handle: u32) -> PathBuf {
        let mut files = JobFiles::create(session, handle, false, 100).unwrap();
        files.write(Stream::Stdout, "out\n");
        let info = JobInfo {
            handle,
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
            persist_error: None,
        };
        files.write_info(&info).unwrap();
        files.dir().to_path_buf()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    #[test]
    fn a_live_session_is_never_pruned_a_dead_one_keeps_the_newest() {
        let tmp = tempfile::tempdir().unwrap();
        let io = tmp.path();
        // A live service's session: its lease held (in this process, as another
        // service of this process would hold it: flock locks are per open file).
        let lease = SessionLease::acquire(&io.join("live"), "a-1").unwrap();
        for h in 1..=3 {
            finished_job(&io.join("live"), h);
        }
        // A dead one: a lease left unlocked (its process died), then newer folders.
        fs::create_dir_all(io.join("dead")).unwrap();
        fs::write(io.join("dead").join(".live-b-1"), "").unwrap();
        for h in 1..=5 {
            finished_job(&io.join("dead"), h);
            std::thread::sleep(std::time::Duration::from_millis(15));
        }
        // Not ours: a folder of another name, and one holding a foreign file.
        fs::create_dir_all(io.join("dead").join("notes")).unwrap();
        fs::create_dir_all(io.join("dead").join("9")).unwrap();
        fs::write(io.join("dead").join("9").join("mine.txt"), "keep").unwrap();

        assert_eq!(prune_dead_sessions(io, 2).unwrap(), 3);
        assert_eq!(names(&io.join("live")), [".live-a-1", "1", "2", "3"]);
        // The two newest kept, the dead lease gone, the foreign folders left alone.
        assert_eq!(names(&io.join("dead")), ["4", "5", "9", "notes"]);

        // Once the live service ends, its session is like any other.
        drop(lease);
        assert_eq!(names(&io.join("live")), ["1", "2", "3"]);
        assert_eq!(prune_dead_sessions(io, 0).unwrap(), 5);
        assert!(!io.join("live").exists());
        assert_eq!(names(&io.join("dead")), ["9", "notes"]);
    }

    #[test]
    fn a_lease_removed_under_its_service_is_made_again() {
        let tmp = tempfile::tempdir().unwrap();
        let session = tmp.path().join("io").join("s");
        let mut lease = SessionLease::acquire(&session, "t-1").unwrap();
        fs::remove_dir_all(tmp.path().join("io")).unwrap();
        lease.renew().unwrap();
        assert_eq!(names(&session), [".live-t-1"]);
        // And it is held: a pruner sees the session live.
        finished_job(&session, 1);
        assert_eq!(prune_dead_sessions(&tmp.path().join("io"), 0).unwrap(), 0);
        drop(lease);
        assert_eq!(names(&session), ["1"]);
    }

    #[test]
    fn job_folders_are_told_by_name_and_content() {
        let tmp = tempfile::tempdir().unwrap();
        let job = finished_job(tmp.path(), 7);
        assert!(is_job_dir(&job));
        let again = finished_job(tmp.path(), 7);
        assert!(again.ends_with("7-2") && is_job_dir(&again));
        for name in ["x7", "7-", "-2", "7-2-3", ".7"] {
            let dir = tmp.path().join(name);
            fs::create_dir(&dir).unwrap();
            assert!(!is_job_dir(&dir), "{name}");
        }
        fs::create_dir(job.join("sub")).unwrap();
        assert!(!is_job_dir(&job));
    }
}
