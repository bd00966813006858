//! The working directory of a job: relative to the project root and never outside it.
//!
//! The directory is opened (on Windows after a check of its resolved path) and the
//! *opened* file is checked, by the name the system gives the open file
//! (`platform::opened_path`): that name has every symlink and `..` resolved.
//! On Unix the child enters it with `fchdir` on that descriptor, so a symlink swapped
//! in after the check changes nothing: the job runs in the directory that was verified.

use std::fs::File;
use std::path::{Component, Path, PathBuf};

use crate::base::error::{ErrorCode, Result, ServiceError};
use crate::platform;

pub struct WorkingDir {
    /// The directory as the caller named it (`.` for the root), for results and lists.
    pub display: String,
    pub path: PathBuf,
    /// Held open until the child has entered it (Unix: by `fchdir` on it).
    pub file: File,
}

fn refuse(message: String) -> ServiceError {
    ServiceError::new(ErrorCode::InvalidDirectory, message)
}

/// The project root as it was when the service was made: its device and inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RootIdentity {
    device: u64,
    inode: u64,
}

impl RootIdentity {
    /// `root`'s identity; `None` where it cannot be had (then every directory is
    /// checked by its name).
    pub fn of(root: &Path) -> Option<Self> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let meta = std::fs::metadata(root).ok()?;
            Some(Self {
                device: meta.dev(),
                inode: meta.ino(),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = root;
            None
        }
    }

    /// Whether the opened directory is the root itself.
    fn is(&self, file: &File) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            file.metadata()
                .is_ok_and(|meta| meta.dev() == self.device && meta.ino() == self.inode)
        }
        #[cfg(not(unix))]
        {
            let _ = file;
            false
        }
    }
}

/// Resolves `requested` against `root` (already canonical; `root_id` its identity).
pub fn resolve(root: &Path, root_id: Option<RootIdentity>, requested: Option<&str>) -> Result<WorkingDir> {
    let requested = requested.unwrap_or("").trim();
    if requested.contains('\0') {
        return Err(refuse("directory contains a NUL byte".into()));
    }
    let relative = Path::new(requested);
    if relative
        .components()
        .any(|c| matches!(c, Component::RootDir | Component::Prefix(_)))
    {
        return Err(refuse(format!(
            "directory must be relative to the project root, not absolute: {requested}"
        )));
    }
    let joined = root.join(relative);
    let file = open_checked(root, &joined, requested)?;
    // The root itself (most jobs run there) is known by its device and inode, a `stat`
    // of the open directory, where its name (`opened_path`) is a read of a `/proc`
    // link: 8–10 µs of the JS thread per spawn, measured. A directory with the root's
    // identity is the root, wherever it has been moved since.
    let opened = if requested.is_empty() && root_id.is_some_and(|id| id.is(&file)) {
        root.to_path_buf()
    } else {
        platform::opened_path(&file).unwrap_or_default()
    };
    ensure_inside(root, &opened, requested)?;
    let display = if requested.is_empty() {
        ".".to_string()
    } else {
        requested.to_string()
    };
    Ok(WorkingDir {
        display,
        path: opened,
        file,
    })
}

/// Unix: the path is opened as it is, the kernel following its symlinks and `..`; the
/// check that matters is the one on the opened directory's name (below, in `resolve`),
/// which is where the job runs. Resolving the path first (`canonicalize`: a `readlink`
/// per component, then an `access`) checked the same thing once more, on the JS
/// thread at every spawn.
#[cfg(unix)]
fn open_checked(_root: &Path, joined: &Path, requested: &str) -> Result<File> {
    platform::open_directory(joined).map_err(|e| refuse(format!("directory {requested:?} cannot be opened: {e}")))
}

/// Windows: resolved and checked before it is opened, as well as after.
#[cfg(not(unix))]
fn open_checked(root: &Path, joined: &Path, requested: &str) -> Result<File> {
    let canonical = joined
        .canonicalize()
        .map_err(|e| refuse(format!("directory {requested:?} cannot be used: {e}")))?;
    ensure_inside(root, &canonical, requested)?;
    platform::open_directory(&canonical).map_err(|e| refuse(format!("directory {requested:?} cannot be opened: {e}")))
}

fn ensure_inside(root: &Path, path: &Path, requested: &str) -> Result<()> {
    if path.starts_with(root) {
        Ok(())
    } else {
        Err(refuse(format!(
            "directory {requested:?} leads outside the project root"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("sub/inner")).unwrap();
        (tmp, root)
    }

    #[test]
    fn accepts_inside() {
        let (_t, root) = root();
        assert_eq!(resolve(&root, RootIdentity::of(&root), None).unwrap().path, root);
        assert_eq!(
            resolve(&root, RootIdentity::of(&root), Some("sub/inner")).unwrap().path,
            root.join("sub/inner")
        );
        assert_eq!(
            resolve(&root, RootIdentity::of(&root), Some("sub/../sub"))
                .unwrap()
                .path,
            root.join("sub")
        );
    }

    #[cfg(unix)]
    #[test]
    fn the_root_is_known_by_identity_and_another_directory_there_by_its_name() {
        let (_t, root) = root();
        let id = RootIdentity::of(&root);
        assert!(id.is_some());
        assert_eq!(resolve(&root, id, None).unwrap().path, root);
        // The root replaced by a new directory: not the same inode, so its name is read.
        std::fs::rename(&root, root.with_extension("old")).unwrap();
        std::fs::create_dir(&root).unwrap();
        let opened = open_checked(&root, &root, "").unwrap();
        assert!(!id.unwrap().is(&opened));
        assert_eq!(resolve(&root, id, None).unwrap().path, root);
    }

    #[cfg(unix)]
    #[test]
    fn refuses_escapes() {
        let (_t, root) = root();
        std::os::unix::fs::symlink("/tmp", root.join("out")).unwrap();
        for bad in ["/tmp", "..", "sub/../..", "out", "missing", "a\0b"] {
            let err = resolve(&root, RootIdentity::of(&root), Some(bad)).err().unwrap();
            assert_eq!(err.code, ErrorCode::InvalidDirectory, "{bad}");
        }
    }

    #[cfg(windows)]
    #[test]
    fn refuses_drive_letters_unc_paths_and_escapes() {
        let (_t, root) = root();
        let bad = [
            r"C:\Windows",
            "C:Windows",
            "C:",
            r"\Windows",
            "/Windows",
            r"\\server\share",
            r"\\?\C:\Windows",
            r"\\.\C:\",
            "..",
            r"sub\..\..",
            "sub/../..",
            "missing",
            "a\0b",
        ];
        for bad in bad {
            let err = resolve(&root, RootIdentity::of(&root), Some(bad)).err().unwrap();
            assert_eq!(err.code, ErrorCode::InvalidDirectory, "{bad}");
        }
        // The opened directory is named as `canonicalize` names the root (`\\?\C:\...`).
        assert_eq!(
            resolve(&root, RootIdentity::of(&root), Some(r"sub\inner"))
                .unwrap()
                .path,
            root.join("sub").join("inner")
        );
    }
}
