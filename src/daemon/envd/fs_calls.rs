//! The calls of envd's `filesystem.Filesystem` (served by filesystem.rs) on the daemon's
//! file system: Stat, ListDir, MakeDir, Move and Remove, which the e2b SDKs'
//! files.list/exists/getInfo/makeDir/rename/remove make. Paths and codes: fs_entry.rs.
//! Each is plain blocking file system work: filesystem.rs runs it on a blocking thread.

use std::path::{Path, PathBuf};

use super::fs_entry::{entry_at, entry_of, Bases};
use super::fs_error::{FsCode, FsError};
use super::proto::filesystem::{
    EntryInfo, ListDirRequest, ListDirResponse, MakeDirRequest, MakeDirResponse, MoveRequest, MoveResponse,
    RemoveRequest, RemoveResponse, StatRequest, StatResponse,
};

/// The most entries one ListDir returns: a deep listing of `/` would otherwise build a
/// reply of any size in the daemon's memory.
pub const MAX_LIST_ENTRIES: usize = 100_000;

pub fn stat(bases: &Bases, req: &StatRequest) -> Result<StatResponse, FsError> {
    let path = bases.resolve(&req.path)?;
    Ok(StatResponse {
        entry: Some(entry_at(&path)?),
    })
}

/// The entries under a directory, `depth` levels down (0 counts as 1), depth first in
/// name order, not following symlinks below the top. The top may be a symlink to a
/// directory; the entries' paths are under the path as requested.
pub fn list_dir(bases: &Bases, req: &ListDirRequest) -> Result<ListDirResponse, FsError> {
    let requested = bases.resolve(&req.path)?;
    let depth = req.depth.max(1);
    let meta = std::fs::metadata(&requested).map_err(|e| FsError::io(&e, "cannot list", &requested))?;
    if !meta.is_dir() {
        return Err(FsError::new(
            FsCode::InvalidArgument,
            format!("path is not a directory: {}", requested.display()),
        ));
    }
    let mut entries = Vec::new();
    walk(&requested, depth, &mut entries)?;
    Ok(ListDirResponse { entries })
}

fn walk(dir: &Path, depth: u32, out: &mut Vec<EntryInfo>) -> Result<(), FsError> {
    let reader = std::fs::read_dir(dir).map_err(|e| FsError::io(&e, "cannot read directory", dir))?;
    let mut names: Vec<PathBuf> = Vec::new();
    for item in reader {
        let item = item.map_err(|e| FsError::io(&e, "cannot read directory", dir))?;
        names.push(item.path());
    }
    names.sort();
    for path in names {
        // An entry removed between readdir and lstat is simply not listed.
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if out.len() >= MAX_LIST_ENTRIES {
            return Err(FsError::new(
                FsCode::ResourceExhausted,
                format!(
                    "more than {MAX_LIST_ENTRIES} entries under {}: ask for a smaller depth",
                    dir.display()
                ),
            ));
        }
        out.push(entry_of(&path, &meta));
        if depth > 1 && meta.is_dir() {
            walk(&path, depth - 1, out)?;
        }
    }
    Ok(())
}

/// Makes the directory and its missing parents. AlreadyExists when it is there (the
/// SDK's makeDir returns false), InvalidArgument when something else is.
pub fn make_dir(bases: &Bases, req: &MakeDirRequest) -> Result<MakeDirResponse, FsError> {
    let path = bases.resolve(&req.path)?;
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_dir() => {
            return Err(FsError::new(
                FsCode::AlreadyExists,
                format!("directory already exists: {}", path.display()),
            ));
        }
        Ok(_) => {
            return Err(FsError::new(
                FsCode::InvalidArgument,
                format!("path already exists but is not a directory: {}", path.display()),
            ));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(FsError::io(&e, "cannot check", &path)),
    }
    std::fs::create_dir_all(&path).map_err(|e| FsError::io(&e, "cannot make directory", &path))?;
    Ok(MakeDirResponse {
        entry: Some(entry_at(&path)?),
    })
}

/// Renames `source` to `destination` (making the destination's missing parents), as
/// rename(2): a file replaces a file there.
pub fn rename(bases: &Bases, req: &MoveRequest) -> Result<MoveResponse, FsError> {
    let source = bases.resolve(&req.source)?;
    let destination = bases.resolve(&req.destination)?;
    std::fs::symlink_metadata(&source).map_err(|e| FsError::io(&e, "cannot move", &source))?;
    if let Some(parent) = destination.parent() {
        std::fs::create_dir_all(parent).map_err(|e| FsError::io(&e, "cannot make directory", parent))?;
    }
    std::fs::rename(&source, &destination).map_err(|e| FsError::io(&e, "cannot move to", &destination))?;
    Ok(MoveResponse {
        entry: Some(entry_at(&destination)?),
    })
}

/// Removes a file, a symlink (not what it points at) or a directory with everything in
/// it. Nothing there is success, as envd's `os.RemoveAll` has it (the SDKs' `remove` of
/// a missing path does not throw), and so is an entry that vanishes meanwhile.
pub fn remove(bases: &Bases, req: &RemoveRequest) -> Result<RemoveResponse, FsError> {
    let path = bases.resolve(&req.path)?;
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RemoveResponse {}),
        Err(e) => return Err(FsError::io(&e, "cannot remove", &path)),
    };
    let done = if meta.is_dir() {
        std::fs::remove_dir_all(&path)
    } else {
        std::fs::remove_file(&path)
    };
    match done {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(FsError::io(&e, "cannot remove", &path)),
        _ => Ok(RemoveResponse {}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::envd::proto::filesystem::FileType;

    fn in_dir() -> (tempfile::TempDir, Bases) {
        let dir = tempfile::tempdir().unwrap();
        let bases = Bases {
            home: dir.path().to_path_buf(),
            workdir: None,
        };
        (dir, bases)
    }

    #[test]
    fn lists_to_the_depth_asked_in_name_order() {
        let (dir, b) = in_dir();
        std::fs::create_dir_all(dir.path().join("b/c/d")).unwrap();
        std::fs::write(dir.path().join("a.txt"), "x").unwrap();
        let names = |depth| {
            list_dir(
                &b,
                &ListDirRequest {
                    path: String::new(),
                    depth,
                },
            )
            .unwrap()
            .entries
            .into_iter()
            .map(|e| {
                e.path
                    .strip_prefix(&dir.path().display().to_string())
                    .unwrap()
                    .to_string()
            })
            .collect::<Vec<_>>()
        };
        assert_eq!(names(0), ["/a.txt", "/b"]);
        assert_eq!(names(2), ["/a.txt", "/b", "/b/c"]);
        let err = list_dir(
            &b,
            &ListDirRequest {
                path: "a.txt".into(),
                depth: 1,
            },
        )
        .unwrap_err();
        assert_eq!(err.code, FsCode::InvalidArgument);
        let err = list_dir(
            &b,
            &ListDirRequest {
                path: "none".into(),
                depth: 1,
            },
        )
        .unwrap_err();
        assert_eq!(err.code, FsCode::NotFound);
    }

    #[test]
    fn makes_moves_and_removes() {
        let (dir, b) = in_dir();
        let made = make_dir(&b, &MakeDirRequest { path: "x/y".into() })
            .unwrap()
            .entry
            .unwrap();
        assert_eq!(made.r#type, FileType::Directory as i32);
        assert_eq!(
            make_dir(&b, &MakeDirRequest { path: "x/y".into() }).unwrap_err().code,
            FsCode::AlreadyExists
        );
        std::fs::write(dir.path().join("f"), "1").unwrap();
        assert_eq!(
            make_dir(&b, &MakeDirRequest { path: "f".into() }).unwrap_err().code,
            FsCode::InvalidArgument
        );
        let moved = rename(
            &b,
            &MoveRequest {
                source: "f".into(),
                destination: "n/g".into(),
            },
        )
        .unwrap()
        .entry
        .unwrap();
        assert_eq!(moved.path, dir.path().join("n/g").display().to_string());
        assert_eq!(
            stat(&b, &StatRequest { path: "f".into() }).unwrap_err().code,
            FsCode::NotFound
        );
        remove(&b, &RemoveRequest { path: "x".into() }).unwrap();
        assert!(!dir.path().join("x").exists());
        // Nothing there: success, as envd's os.RemoveAll.
        remove(&b, &RemoveRequest { path: "x".into() }).unwrap();
    }
}
