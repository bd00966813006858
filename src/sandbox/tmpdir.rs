//! A sandboxed job's own temporary directory, its `TMPDIR`: made before the job starts
//! (mode 0700), gone from its path with the job.
//!
//! Making and removing a directory is the costliest part of a sandboxed spawn: ext4
//! scans its recently deleted inodes on every allocation (0.45 ms for mkdir + rmdir on
//! this machine, more than Landlock and seccomp together). So it happens off the spawn
//! path, on one helper thread, and mostly not at all: the directory of a finished job
//! that left it empty (most jobs never use `TMPDIR`) is renamed to a new name and kept
//! as a spare for a later job, instead of removed and made again. A job takes a spare
//! (`JobTmpDir::take`); the helper makes one ahead only when none is left; a directory
//! with anything in it is removed with its contents. The first job of a process, or one
//! that comes before a spare is ready, makes its own.
//!
//! The rename is what keeps the next job's directory its own: the finished job's path
//! is gone before the directory is looked at, so a process that job left behind cannot
//! reach the new owner's directory by its old name. (One holding the directory open
//! could still write into it; so could any job into the shared `/tmp`, which is why
//! this is tidiness, not a wall between jobs: see `crate::sandbox::SHARED_TMP`.)
//!
//! Nothing is left behind: when the process exits, the directories of the jobs still
//! kept and the spares are removed (`remove_all_now`, from the exit hook); those of a
//! process killed outright are removed by the next process that makes one in the same
//! place (`sweep`: its own user's `native-shell-<pid>-<n>` whose process is gone).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// How many empty directories are kept for later jobs: enough for a burst of jobs
/// started together to find theirs made.
const MAX_SPARES: usize = 8;

#[derive(Debug)]
pub struct JobTmpDir {
    path: PathBuf,
    /// The temporary directory it was made in, as asked for (before symlinks).
    base: PathBuf,
    /// Handed back already (`release`): when the job's last process ended, before the
    /// job itself is forgotten.
    released: std::sync::atomic::AtomicBool,
}

/// What the helper thread is asked to do.
enum Chore {
    MakeSpare(PathBuf),
    /// A finished job's directory (its path, its base): kept as a spare if empty.
    Recycle(PathBuf, PathBuf),
}

/// Empty directories ready for jobs, each with the base it was made in, oldest first.
type Spares = Vec<(PathBuf, PathBuf)>;

struct Pool {
    spares: Mutex<Spares>,
    /// Every directory this process made that is neither a spare nor gone: those jobs
    /// hold, and those in the helper's hands. What the exit removes (`remove_all_now`).
    unsettled: Mutex<std::collections::HashSet<PathBuf>>,
    /// The bases already swept of dead processes' directories.
    swept: Mutex<Vec<PathBuf>>,
    chores: Mutex<Option<Sender<Chore>>>,
}

static POOL: OnceLock<Pool> = OnceLock::new();

fn pool() -> &'static Pool {
    POOL.get_or_init(|| {
        let (tx, rx) = channel::<Chore>();
        let started = std::thread::Builder::new()
            .name("native-shell-tmpdirs".into())
            .spawn(move || {
                for chore in rx {
                    match chore {
                        Chore::MakeSpare(base) => make_spare(&base),
                        Chore::Recycle(path, base) => recycle(&path, &base),
                    }
                }
            })
            .is_ok();
        Pool {
            spares: Mutex::new(Vec::new()),
            unsettled: Mutex::new(Default::default()),
            swept: Mutex::new(Vec::new()),
            chores: Mutex::new(if started { Some(tx) } else { None }),
        }
    })
}

fn spares() -> MutexGuard<'static, Spares> {
    pool().spares.lock().unwrap_or_else(|e| e.into_inner())
}

fn unsettled() -> MutexGuard<'static, std::collections::HashSet<PathBuf>> {
    pool().unsettled.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counted as unsettled from before it exists until it is a spare or gone, so the exit
/// finds every directory whatever it interrupts.
fn track(path: &Path) {
    unsettled().insert(path.to_path_buf());
}

fn untrack(path: &Path) {
    unsettled().remove(path);
}

/// Hands `chore` to the helper thread; false if there is none (then do it here).
fn delegate(chore: Chore) -> Result<(), Chore> {
    let chores = pool().chores.lock().unwrap_or_else(|e| e.into_inner());
    match chores.as_ref() {
        Some(tx) => tx.send(chore).map_err(|e| e.0),
        None => Err(chore),
    }
}

/// On the helper thread: a directory made ahead, unless a spare for `base` is there.
fn make_spare(base: &Path) {
    sweep(base);
    if spares().iter().any(|(made_in, _)| made_in == base) {
        return;
    }
    if let Ok(dir) = JobTmpDir::make(base) {
        let (path, _) = dir.into_parts();
        keep(path.clone(), base);
        untrack(&path);
    }
}

/// On the helper thread: a finished job's directory, renamed away from the path that
/// job knew, then kept if nothing is in it, else removed with its contents.
fn recycle(path: &Path, base: &Path) {
    let renamed = path.parent().and_then(|parent| {
        let fresh = parent.join(fresh_name());
        track(&fresh);
        let moved = std::fs::rename(path, &fresh).is_ok();
        if !moved {
            untrack(&fresh);
        }
        moved.then_some(fresh)
    });
    let Some(renamed) = renamed else {
        let _ = std::fs::remove_dir_all(path);
        untrack(path);
        return;
    };
    untrack(path);
    match std::fs::read_dir(&renamed).map(|mut entries| entries.next().is_none()) {
        Ok(true) => keep(renamed.clone(), base),
        // std's remove_dir_all does not follow symlinks the job left.
        _ => {
            let _ = std::fs::remove_dir_all(&renamed);
        }
    }
    untrack(&renamed);
}

/// Keeps the empty directory `path` (made in `base`) as a spare; when there are enough,
/// the oldest is removed (one of a `TMPDIR` no longer used goes that way).
fn keep(path: PathBuf, base: &Path) {
    let mut spares = spares();
    spares.push((base.to_path_buf(), path));
    if spares.len() > MAX_SPARES {
        let (_, oldest) = spares.remove(0);
        drop(spares);
        let _ = std::fs::remove_dir(oldest);
    }
}

/// On the helper thread, once per base: removes the directories that processes now gone
/// left in `base` (killed before their exit hook ran). Only this user's directories
/// named `native-shell-<pid>-<n>` whose `<pid>` runs no process; a pid reused since by
/// another process keeps its directories until that one is gone too.
fn sweep(base: &Path) {
    {
        let mut swept = pool().swept.lock().unwrap_or_else(|e| e.into_inner());
        if swept.iter().any(|b| b == base) {
            return;
        }
        swept.push(base.to_path_buf());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Ok(entries) = std::fs::read_dir(base) else { return };
        // SAFETY: no arguments, no failure.
        let me = unsafe { libc::geteuid() };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(dead_owner) else {
                continue;
            };
            let path = entry.path();
            // lstat: a symlink of that name is not a directory of ours.
            let ours = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir() && m.uid() == me);
            if ours && pid != std::process::id() {
                let _ = std::fs::remove_dir_all(&path);
            }
        }
    }
}

/// The pid in `native-shell-<pid>-<n>`, if no process has it now.
#[cfg(unix)]
fn dead_owner(name: &str) -> Option<u32> {
    let (pid, n) = name.strip_prefix("native-shell-")?.split_once('-')?;
    if pid.is_empty() || n.is_empty() || !pid.bytes().chain(n.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let pid: i32 = pid.parse().ok()?;
    // SAFETY: signal 0 only checks whether the process exists.
    let gone = unsafe { libc::kill(pid, 0) } < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
    gone.then_some(pid as u32)
}

/// `native-shell-<pid>-<n>`: a name this process has not used.
fn fresh_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "native-shell-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

impl JobTmpDir {
    /// Removes every job's directory and the spares now: for the process's exit, after
    /// its jobs were killed (`Drop` runs no more then, and chores queued for the helper
    /// may never run). The locks are held only for list changes, never across I/O, so
    /// this waits at most for one such change.
    pub fn remove_all_now() {
        if POOL.get().is_none() {
            return;
        }
        // Taken out under the lock, removed outside it (the helper thread, still
        // running, never waits on a removal).
        let dirs = std::mem::take(&mut *unsettled());
        for dir in dirs {
            let _ = std::fs::remove_dir_all(dir);
        }
        let spares = std::mem::take(&mut *spares());
        for (_, dir) in spares {
            let _ = std::fs::remove_dir(dir);
        }
    }

    /// A private, empty directory in `base` for one job: a spare if there is one, else
    /// made now. When that took the last spare, the helper makes another ahead.
    pub fn take(base: &Path) -> io::Result<Self> {
        let (ready, left) = {
            let mut spares = spares();
            let ready = spares
                .iter()
                .rposition(|(made_in, _)| made_in == base)
                .map(|i| spares.remove(i).1);
            // Tracked before the spares' lock is let go: never in neither list.
            if let Some(path) = &ready {
                track(path);
            }
            (ready, spares.iter().filter(|(made_in, _)| made_in == base).count())
        };
        if left == 0 {
            // No helper thread: the next job makes its own.
            let _ = delegate(Chore::MakeSpare(base.to_path_buf()));
        }
        let dir = match ready {
            Some(path) => Self::new(path, base),
            None => Self::make(base)?,
        };
        Ok(dir)
    }

    /// Makes `<base>/native-shell-<pid>-<n>`, a name no one has (an existing directory
    /// of that name, stale or planted, is skipped, never reused). Mode 0700.
    /// Tracked (see `track`) from before it is made.
    fn make(base: &Path) -> io::Result<Self> {
        loop {
            let name = fresh_name();
            let joined = base.join(&name);
            track(&joined);
            let made = Self::create(base, &name);
            match &made {
                Ok(dir) if dir.path == joined => {}
                Ok(dir) => {
                    track(&dir.path);
                    untrack(&joined);
                }
                Err(_) => untrack(&joined),
            }
            match made {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                other => return other,
            }
        }
    }

    /// Makes `<base>/<name>`, which must not exist yet.
    pub fn create(base: &Path, name: &str) -> io::Result<Self> {
        let path = base.join(name);
        #[cfg_attr(not(unix), allow(unused_mut))]
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&path)?;
        // Canonical, as the rules name it (the base may be a symlink, as macOS's /var).
        let path = path.canonicalize()?;
        Ok(Self::new(path, base))
    }

    fn new(path: PathBuf, base: &Path) -> Self {
        Self {
            path,
            base: base.to_path_buf(),
            released: Default::default(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Hands the directory back (to be kept for a later job if empty, else removed), once:
    /// when nothing of the job runs any more, or at the latest when it is dropped.
    pub fn release(&self) {
        if self.path.as_os_str().is_empty() || self.released.swap(true, Ordering::AcqRel) {
            return;
        }
        let (path, base) = (self.path.clone(), self.base.clone());
        // Stays tracked: the helper settles it (`recycle`).
        if let Err(Chore::Recycle(path, _)) = delegate(Chore::Recycle(path, base)) {
            let _ = std::fs::remove_dir_all(&path);
            untrack(&path);
        }
    }

    /// The path and the base, with nothing left to do at drop.
    fn into_parts(mut self) -> (PathBuf, PathBuf) {
        (std::mem::take(&mut self.path), std::mem::take(&mut self.base))
    }
}

impl Drop for JobTmpDir {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eventually(check: impl Fn() -> bool) -> bool {
        for _ in 0..3000 {
            if check() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        check()
    }

    #[test]
    fn made_private_and_removed_with_its_contents() {
        let base = tempfile::tempdir().expect("tempdir");
        let path = {
            let dir = JobTmpDir::create(base.path(), "job-1").expect("create");
            std::fs::write(dir.path().join("f"), "x").expect("write");
            #[cfg(unix)]
            assert_eq!(mode(dir.path()), 0o700);
            assert!(
                JobTmpDir::create(base.path(), "job-1").is_err(),
                "an existing one is not reused"
            );
            dir.path().to_path_buf()
        };
        assert!(eventually(|| !path.exists()));
    }

    /// Mode bits of a directory (0700 for every job's).
    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).expect("meta").permissions().mode() & 0o777
    }

    #[test]
    fn an_empty_directory_is_renamed_and_kept_for_a_later_job() {
        let base = tempfile::tempdir().expect("tempdir");
        let base = base.path().canonicalize().expect("canonical");
        let spares_in = |base: &Path| spares().iter().filter(|(made_in, _)| made_in == base).count();
        let first = JobTmpDir::take(&base).expect("first");
        let first_path = first.path().to_path_buf();
        // The helper makes one ahead: one spare before the first job ends.
        assert!(eventually(|| spares_in(&base) == 1));
        drop(first);
        // Renamed away from the path the job knew, and kept: two spares, no removal.
        assert!(eventually(|| !first_path.exists() && spares_in(&base) == 2));
        let entries: Vec<PathBuf> = std::fs::read_dir(&base)
            .expect("list")
            .map(|e| e.expect("entry").path())
            .collect();
        assert_eq!(entries.len(), 2, "{entries:?}");
        let second = JobTmpDir::take(&base).expect("second");
        assert_ne!(second.path(), first_path);
        assert!(std::fs::read_dir(second.path()).expect("list").next().is_none());
        #[cfg(unix)]
        assert_eq!(mode(second.path()), 0o700);
        // A directory the job wrote in is removed, contents and all; never a spare.
        std::fs::write(second.path().join("left"), "x").expect("write");
        let second_path = second.path().to_path_buf();
        let before = spares_in(&base);
        // Handed back before the job is dropped (its last process ended); the drop
        // then does nothing more.
        second.release();
        assert!(eventually(|| !second_path.exists()));
        drop(second);
        assert!(eventually(|| std::fs::read_dir(&base).expect("list").count() == before));
        assert!(spares()
            .iter()
            .filter(|(made_in, _)| made_in == &base)
            .all(|(_, dir)| std::fs::read_dir(dir).expect("list").next().is_none()));
    }

    #[test]
    fn each_job_gets_a_directory_of_its_own() {
        let base = tempfile::tempdir().expect("tempdir");
        let base = base.path().canonicalize().expect("canonical");
        let first = JobTmpDir::take(&base).expect("first");
        let second = JobTmpDir::take(&base).expect("second");
        assert_ne!(first.path(), second.path());
        assert!(first.path().starts_with(&base) && second.path().is_dir());
    }
}
