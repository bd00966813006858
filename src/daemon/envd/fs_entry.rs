//! What envd's file calls share (filesystem.rs, the Connect service; files.rs, GET/POST
//! /files): the absolute path a request's path names and an `EntryInfo` of what is there
//! (failures: fs_error.rs).
//!
//! Paths are the daemon's user's: there is no user switching (envd runs as root and acts
//! as the user a request names; the daemon is one user's and acts as that user, so the
//! `username` a request carries is accepted and ignored). Nothing confines paths to the
//! project root: whoever may call these may `commands.run` anything as the same user, so
//! a fence here would stop nothing (docs/remote.md says so).

use std::fs::Metadata;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use super::fs_error::{FsCode, FsError};
use super::proto::filesystem::{EntryInfo, FileType};

/// Where relative paths start and `~` points.
#[derive(Debug, Clone)]
pub struct Bases {
    /// The user's home (`~`); also where relative paths start without a project root.
    pub home: PathBuf,
    /// `--project-root`, where relative paths start when given (envd's default workdir).
    pub workdir: Option<PathBuf>,
}

impl Bases {
    /// The daemon's: $HOME (or `/`), and the project root if one was given.
    pub fn of_daemon(project_root: Option<&Path>) -> Self {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute())
            .unwrap_or_else(|| PathBuf::from("/"));
        Self {
            home,
            workdir: project_root.map(Path::to_path_buf),
        }
    }

    /// The absolute, lexically clean path `requested` names: `~` and `~/x` are under the
    /// home, a relative path under the workdir (else the home), `.` and `..` are folded as
    /// written (like envd; symlinks are not resolved here). An empty path is the start
    /// directory itself. A NUL byte is refused (no file system path holds one).
    pub fn resolve(&self, requested: &str) -> Result<PathBuf, FsError> {
        if requested.contains('\0') {
            return Err(FsError::new(FsCode::InvalidArgument, "the path contains a NUL byte"));
        }
        let start = self.workdir.as_deref().unwrap_or(&self.home);
        let joined = if requested == "~" {
            self.home.clone()
        } else if let Some(rest) = requested.strip_prefix("~/") {
            self.home.join(rest)
        } else if requested.starts_with('/') {
            PathBuf::from(requested)
        } else {
            start.join(requested)
        };
        Ok(clean(&joined))
    }
}

/// Folds `.` and `..` (`..` at the root stays at the root), as Go's filepath.Clean.
fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for part in path.components() {
        match part {
            Component::Normal(name) => out.push(name),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// The entry at `path` itself: a symlink is described by its own name, size and
/// permission string, but with the type and mode of what it points at (envd's rule).
pub fn entry_at(path: &Path) -> Result<EntryInfo, FsError> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| FsError::io(&e, "cannot read", path))?;
    Ok(entry_of(path, &meta))
}

/// An `EntryInfo` of `path` from its (not followed) metadata, as envd builds it
/// (packages/shared/pkg/filesystem in e2b-dev/infra, read for its fields):
/// - `type` and `mode` are those of what a symlink resolves to (`FILE_TYPE_UNSPECIFIED`
///   and mode 0 when it dangles or loops), `mode` being the nine rwx bits only;
/// - `symlink_target` is the link resolved to an absolute path with every symlink
///   followed (the link's own path when that fails), not the raw link text;
/// - `permissions` is Go's `FileMode.String()` of the entry itself (`Lrwxrwxrwx` for a
///   symlink, `dtrwxrwxrwx` for a sticky directory): fs_mode.rs.
/// - `size`, `modified_time`, `owner` and `group` are the entry's own (not followed);
/// - `metadata` is what an upload's `X-Metadata-*` headers left (file_metadata.rs).
pub fn entry_of(path: &Path, meta: &Metadata) -> EntryInfo {
    let kind = meta.file_type();
    let (file_type, mode, symlink_target) = if kind.is_symlink() {
        let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let (file_type, mode) = match std::fs::metadata(&resolved) {
            Ok(target) => (type_of(&target), target.permissions().mode() & 0o777),
            Err(_) => (FileType::Unspecified, 0),
        };
        (file_type, mode, Some(resolved.display().to_string()))
    } else {
        (type_of(meta), meta.permissions().mode() & 0o777, None)
    };
    EntryInfo {
        name: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "/".into()),
        r#type: file_type as i32,
        path: path.display().to_string(),
        size: i64::try_from(meta.len()).unwrap_or(i64::MAX),
        mode,
        permissions: super::fs_mode::go_mode_string(meta.mode()),
        owner: crate::platform::user_name(meta.uid()).unwrap_or_else(|| meta.uid().to_string()),
        group: crate::platform::group_name(meta.gid()).unwrap_or_else(|| meta.gid().to_string()),
        modified_time: Some(pbjson_types::Timestamp {
            seconds: meta.mtime(),
            nanos: i32::try_from(meta.mtime_nsec()).unwrap_or(0),
        }),
        symlink_target,
        metadata: super::file_metadata::read(path),
        is_symlink: kind.is_symlink(),
    }
}

/// A file, a directory, or neither (sockets, FIFOs, devices: envd's unspecified, which
/// the SDKs list without a type).
fn type_of(meta: &Metadata) -> FileType {
    if meta.is_dir() {
        FileType::Directory
    } else if meta.is_file() {
        FileType::File
    } else {
        FileType::Unspecified
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bases() -> Bases {
        Bases {
            home: "/home/u".into(),
            workdir: Some("/work/p".into()),
        }
    }

    #[test]
    fn resolves_home_relative_and_dot_dot_as_written() {
        let b = bases();
        assert_eq!(b.resolve("~").unwrap(), PathBuf::from("/home/u"));
        assert_eq!(b.resolve("~/a/./b").unwrap(), PathBuf::from("/home/u/a/b"));
        assert_eq!(b.resolve("x/../y").unwrap(), PathBuf::from("/work/p/y"));
        assert_eq!(b.resolve("").unwrap(), PathBuf::from("/work/p"));
        assert_eq!(b.resolve("/../../etc//passwd").unwrap(), PathBuf::from("/etc/passwd"));
        let no_root = Bases {
            workdir: None,
            ..bases()
        };
        assert_eq!(no_root.resolve("a").unwrap(), PathBuf::from("/home/u/a"));
        assert_eq!(b.resolve("a\0b").unwrap_err().code, FsCode::InvalidArgument);
    }

    #[test]
    fn describes_files_directories_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        std::fs::write(&file, b"hello").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("l");
        std::os::unix::fs::symlink("f.txt", &link).unwrap();

        let f = entry_at(&file).unwrap();
        assert_eq!(
            (f.name.as_str(), f.r#type, f.size, f.mode),
            ("f.txt", FileType::File as i32, 5, 0o640)
        );
        assert_eq!(f.permissions, "-rw-r-----");
        assert!(f.modified_time.is_some_and(|t| t.seconds > 0));
        let d = entry_at(dir.path()).unwrap();
        assert_eq!(d.r#type, FileType::Directory as i32);
        assert!(d.permissions.starts_with('d'));
        // A symlink: the target's type and mode, the resolved absolute path, its own
        // permission string.
        let l = entry_at(&link).unwrap();
        let resolved = std::fs::canonicalize(&file).unwrap().display().to_string();
        assert_eq!(
            (
                l.r#type,
                l.mode,
                l.symlink_target.as_deref(),
                l.permissions.as_str(),
                l.is_symlink
            ),
            (
                FileType::File as i32,
                0o640,
                Some(resolved.as_str()),
                "Lrwxrwxrwx",
                true
            )
        );
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink("nowhere", &dangling).unwrap();
        let d = entry_at(&dangling).unwrap();
        assert_eq!(
            (d.r#type, d.mode, d.symlink_target.as_deref()),
            (
                FileType::Unspecified as i32,
                0,
                Some(dangling.display().to_string().as_str())
            )
        );
        assert_eq!(entry_at(&dir.path().join("none")).unwrap_err().code, FsCode::NotFound);
    }
}
