//! A sandboxed job's own temporary directory, its `TMPDIR`: made before the job starts
//! (mode 0700), removed with the job.
//!
//! Making and removing a directory costs hundreds of microseconds on some file systems
//! (0.45 ms for mkdir + rmdir on this machine's ext4), more than the rest of a sandboxed
//! spawn. So both happen off the spawn path, on one helper thread: it keeps one
//! directory made ahead for the next job (`JobTmpDir::take` hands it over, then asks for
//! another) and removes the directories of jobs that were dropped. The first job of a
//! process, or one that comes before the spare is ready, makes its own.
//!
//! Why the job gets its own and not `/tmp` alone: see `crate::sandbox::SHARED_TMP`.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, OnceLock};

#[derive(Debug)]
pub struct JobTmpDir {
    path: PathBuf,
}

/// What the helper thread is asked to do.
enum Chore {
    MakeSpare(PathBuf),
    Remove(PathBuf),
}

struct Pool {
    /// The directory made ahead, and the base it was made in.
    spare: Mutex<Option<(PathBuf, JobTmpDir)>>,
    chores: Mutex<Option<Sender<Chore>>>,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let (tx, rx) = channel::<Chore>();
        let started = std::thread::Builder::new()
            .name("native-shell-tmpdirs".into())
            .spawn(move || {
                for chore in rx {
                    match chore {
                        Chore::MakeSpare(base) => {
                            if let Ok(dir) = JobTmpDir::make(&base) {
                                let mut spare = pool().spare.lock().unwrap_or_else(|e| e.into_inner());
                                // A spare for another base is replaced (and removed).
                                *spare = Some((base, dir));
                            }
                        }
                        Chore::Remove(path) => {
                            // std's remove_dir_all does not follow symlinks the job left.
                            let _ = std::fs::remove_dir_all(&path);
                        }
                    }
                }
            })
            .is_ok();
        Pool {
            spare: Mutex::new(None),
            chores: Mutex::new(if started { Some(tx) } else { None }),
        }
    })
}

/// Hands `chore` to the helper thread; false if there is none (then do it here).
fn delegate(chore: Chore) -> Result<(), Chore> {
    let chores = pool().chores.lock().unwrap_or_else(|e| e.into_inner());
    match chores.as_ref() {
        Some(tx) => tx.send(chore).map_err(|e| e.0),
        None => Err(chore),
    }
}

impl JobTmpDir {
    /// A fresh private directory in `base` for one job: the one made ahead if there is
    /// one, else made now. Either way another is made ahead for the next job.
    pub fn take(base: &Path) -> io::Result<Self> {
        let ready = {
            let mut spare = pool().spare.lock().unwrap_or_else(|e| e.into_inner());
            match spare.take() {
                Some((made_in, dir)) if made_in == base => Some(dir),
                other => {
                    // Made for another base (TMPDIR changed): dropped, so removed.
                    drop(other);
                    None
                }
            }
        };
        let dir = match ready {
            Some(dir) => dir,
            None => Self::make(base)?,
        };
        if let Err(Chore::MakeSpare(_)) = delegate(Chore::MakeSpare(base.to_path_buf())) {
            // No helper thread: the next job makes its own.
        }
        Ok(dir)
    }

    /// Makes `<base>/native-shell-<pid>-<n>`, a name no one has (an existing directory
    /// of that name, stale or planted, is skipped, never reused). Mode 0700.
    fn make(base: &Path) -> io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        loop {
            let name = format!(
                "native-shell-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            );
            match Self::create(base, &name) {
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
        Ok(Self { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for JobTmpDir {
    fn drop(&mut self) {
        let path = std::mem::take(&mut self.path);
        if let Err(Chore::Remove(path)) = delegate(Chore::Remove(path)) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eventually(check: impl Fn() -> bool) -> bool {
        for _ in 0..500 {
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
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(dir.path()).expect("meta").permissions().mode();
                assert_eq!(mode & 0o777, 0o700);
            }
            assert!(
                JobTmpDir::create(base.path(), "job-1").is_err(),
                "an existing one is not reused"
            );
            dir.path().to_path_buf()
        };
        assert!(eventually(|| !path.exists()));
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
