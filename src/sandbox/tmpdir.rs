//! A sandboxed job's own temporary directory, its `TMPDIR`: made before the job starts
//! (mode 0700), removed with the job.
//!
//! Why not `/tmp` itself: it is shared with every other program of the user (and of
//! other users). A job that could write there could plant or replace files that
//! unconfined programs later read (predictable names, lock files, sockets), and what it
//! left there would outlive it. Programs that honour `TMPDIR` (mktemp, Python's
//! tempfile, Node's os.tmpdir(), compilers) use this one instead.

use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct JobTmpDir {
    path: PathBuf,
}

impl JobTmpDir {
    /// Makes `<base>/<name>`, which must not exist yet (a stale or planted directory
    /// of that name is an error, not reused).
    pub fn create(base: &Path, name: &str) -> io::Result<Self> {
        let path = base.join(name);
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
        // std's remove_dir_all does not follow symlinks the job left inside.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert!(JobTmpDir::create(base.path(), "job-1").is_err(), "an existing one is not reused");
            dir.path().to_path_buf()
        };
        assert!(!path.exists());
    }
}
