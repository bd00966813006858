//! A root job with limited reads: the system's secrets stay unreadable.
//!
//! With `read` set, the system directories stay readable (`crate::sandbox::
//! system_read_paths`), `/etc` among them. For an ordinary user the files there that
//! only their owner may read (`/etc/shadow`, `/etc/gshadow`, `/etc/ssl/private`, host
//! keys, database passwords) are refused by their modes; a job run as uid 0 *is* their
//! owner, and dropping its capabilities (`caps.rs`) does not change that. Landlock
//! cannot take a right back beneath a directory it granted, so the job gets a second
//! Landlock layer (layers intersect: a file is readable only if every layer allows it)
//! that handles reading files only and grants it on every top-level entry but `/etc`,
//! and on everything in `/etc` that others may read, going down into directories that
//! hold anything they may not. Made once for the process (the files are walked once;
//! one made later is not readable: fail closed), applied with one more
//! `landlock_restrict_self` in the spawn child, only for uid 0 with limited reads.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::OnceLock;

use super::path_rule::add;

use landlock::{AccessFs, CompatLevel, Compatible, PathFd, Ruleset, RulesetAttr};

/// How deep `/etc` is walked to find what others may read; a directory deeper than
/// that with something secret inside is left out whole (fail closed).
const MAX_DEPTH: usize = 4;
/// Readable by others: `o+r` (and `o+x` for a directory, to reach what is inside).
const OTHERS_READ: u32 = 0o004;
const OTHERS_SEARCH: u32 = 0o001;

/// The layer's ruleset descriptor, made once (`None`: not for this process's uid).
pub fn layer() -> io::Result<Option<&'static OwnedFd>> {
    static LAYER: OnceLock<Result<Option<OwnedFd>, String>> = OnceLock::new();
    LAYER
        .get_or_init(|| {
            // SAFETY: a query without arguments.
            if unsafe { libc::geteuid() } != 0 {
                return Ok(None);
            }
            make().map(Some).map_err(|e| e.to_string())
        })
        .as_ref()
        .map(Option::as_ref)
        .map_err(|e| io::Error::other(format!("sandbox: the layer for root's reads: {e}")))
}

fn make() -> io::Result<OwnedFd> {
    let read_file: landlock::BitFlags<AccessFs> = AccessFs::ReadFile.into();
    // Renames across directories: left to the job's own rules (`hidden::reparenting`).
    let refer = super::hidden::reparenting();
    let error = |e: &dyn std::fmt::Display| io::Error::other(e.to_string());
    let created: Option<OwnedFd> = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(read_file | refer)
        .map_err(|e| error(&e))?
        .create()
        .map_err(|e| error(&e))?
        .into();
    let fd = created.ok_or_else(|| io::Error::other("the kernel made no ruleset"))?;
    if !refer.is_empty() {
        add(&fd, PathFd::new("/").map_err(|e| error(&e))?.as_fd(), refer.bits())?;
    }
    let mut granted = Vec::new();
    for entry in std::fs::read_dir("/")? {
        let path = entry?.path();
        if path != Path::new("/etc") {
            granted.push(path);
        }
    }
    public_parts(Path::new("/etc"), 0, &mut granted)?;
    for path in granted {
        // A path that went away in between is simply not granted (fail closed).
        let Ok(file) = PathFd::new(&path) else { continue };
        add(&fd, file.as_fd(), read_file.bits())?;
    }
    Ok(fd)
}

/// Adds to `out` what of `dir` others may read: entries whole when nothing beneath is
/// secret, else their public parts.
fn public_parts(dir: &Path, depth: usize, out: &mut Vec<std::path::PathBuf>) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        // Followed, as a read through the link would be (a link in `/etc` is root's).
        let Ok(meta) = std::fs::metadata(&path) else { continue };
        let mode = meta.permissions().mode();
        if meta.is_dir() {
            if mode & OTHERS_READ == 0 || mode & OTHERS_SEARCH == 0 {
                continue;
            }
            if all_public(&path, depth + 1) {
                out.push(path);
            } else if depth + 1 < MAX_DEPTH {
                public_parts(&path, depth + 1, out)?;
            }
        } else if mode & OTHERS_READ != 0 {
            out.push(path);
        }
    }
    Ok(())
}

/// Whether everything under `dir` is readable by others (false when too deep to tell).
fn all_public(dir: &Path, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.into_iter().all(|entry| {
        let Ok(entry) = entry else { return false };
        let path = entry.path();
        let Ok(meta) = std::fs::metadata(&path) else {
            return true;
        };
        let mode = meta.permissions().mode();
        if meta.is_dir() {
            mode & OTHERS_READ != 0 && mode & OTHERS_SEARCH != 0 && all_public(&path, depth + 1)
        } else {
            mode & OTHERS_READ != 0
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root job with limited reads renames and links across directories as its own
    /// rules allow (`cargo build` moves its `.rmeta` so): this layer, about reads, does
    /// not refuse it (it did, `EXDEV`, before it granted reparenting). Root only.
    #[test]
    fn a_rename_across_directories_passes_this_layer() {
        let Some(layer) = layer().expect("layer") else {
            return; // not root: no such layer
        };
        let dir = tempfile::tempdir_in("/var/tmp").expect("tempdir");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir(&a).expect("mkdir");
        std::fs::create_dir(&b).expect("mkdir");
        std::fs::write(a.join("f"), "x").expect("write");
        assert!(super::super::hidden::tests::renamed(layer, &a.join("f"), &b.join("f")));
        assert!(b.join("f").exists());
    }
}
