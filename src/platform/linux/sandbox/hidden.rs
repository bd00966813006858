//! The Landlock layer that keeps a sandbox's hidden paths unreadable
//! (`crate::sandbox::Resolved::hidden`: the credential stores, `readDeny`, the
//! service's output folders) while the rest stays as the job's own rules say.
//!
//! Landlock only grants, and a right granted on a directory holds for everything
//! beneath it. So this is a second layer (layers intersect: a file is read only if
//! every layer allows it) that handles reading files only and grants it on everything
//! but the hidden paths: each entry of `/`, going down only into the directories a
//! hidden path lies beneath (`/home`, the home directory, `~/.config`...), granting
//! their other entries (`crate::sandbox::readable_except`). It also grants whole what
//! jobs must read whatever is hidden: the project root and the `write` paths (their
//! own files: `Resolved::read_whole` says why they cannot be cut), the shared `/tmp`,
//! the `readAllow` paths, the `read` paths that hold no hidden path, and the private
//! directory the jobs' TMPDIRs are made in (the job's own rules narrow it to its own).
//!
//! Made once per resolved sandbox, at its first job, and kept with it
//! (`Resolved::read_layer`): a spawn adds one `landlock_restrict_self`, nothing else.
//! An entry made afterwards in a walked directory is not readable by the sandbox's jobs
//! (fail closed) until a new sandbox is resolved. Listing stays allowed (`ls ~/.ssh`
//! shows names), and so do the job's other rights: writing there is the job's own
//! rules' to refuse (they do, outside the project and the `write` paths).

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;

use landlock::{AccessFs, BitFlags, CompatLevel, Compatible, PathFd, Ruleset, RulesetAttr};

use super::path_rule::add;
use crate::sandbox::{base_dir, readable_except, Anchor, Resolved, SHARED_TMP};

/// The layer of `resolved`, made at the first call and kept with it; `None` when
/// nothing is hidden.
pub fn layer(resolved: &Resolved) -> io::Result<Option<&OwnedFd>> {
    resolved
        .read_layer
        .get_or_init(|| make(resolved).map_err(|e| e.to_string()))
        .as_ref()
        .map(Option::as_ref)
        .map_err(|e| io::Error::other(format!("sandbox: the layer that hides credentials and output: {e}")))
}

fn make(resolved: &Resolved) -> io::Result<Option<OwnedFd>> {
    if resolved.hidden.is_empty() {
        return Ok(None);
    }
    let read_file: BitFlags<AccessFs> = AccessFs::ReadFile.into();
    let refer = reparenting();
    let created: Option<OwnedFd> = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(read_file | refer)
        .map_err(io::Error::other)?
        .create()
        .map_err(io::Error::other)?
        .into();
    let fd = created.ok_or_else(|| io::Error::other("the kernel made no ruleset"))?;
    let grant = |file: BorrowedFd<'_>| add(&fd, file, read_file.bits());
    let top = Anchor::open(Path::new("/"))?;
    add(&fd, top.fd(), refer.bits())?;
    readable_except(&top, &resolved.hidden, &[], &mut |entry| grant(entry.fd()))?;
    grant(resolved.root.fd())?;
    for anchor in &resolved.write {
        grant(anchor.fd())?;
    }
    for anchor in &resolved.read_allow {
        grant(anchor.fd())?;
    }
    for anchor in resolved.read.iter().flatten() {
        let holds_hidden = resolved
            .hidden
            .iter()
            .any(|h| h.as_path() != anchor.path() && h.starts_with(anchor.path()));
        if !holds_hidden {
            grant(anchor.fd())?;
        }
    }
    if resolved.shared_tmp {
        if let Ok(tmp) = PathFd::new(SHARED_TMP) {
            grant(std::os::fd::AsFd::as_fd(&tmp))?;
        }
    }
    grant(base_dir()?.fd())?;
    Ok(Some(fd))
}

/// Landlock counts reparenting (a rename or a hard link into another directory,
/// `REFER`, ABI 2) as handled by every ruleset, whatever it says it handles: a layer
/// that does not grant it refuses every such rename (`EXDEV`: `cargo build` moving its
/// `.rmeta` into place). So a layer about reads handles it and grants it on `/`,
/// leaving renames to the job's own rules; a file renamed out of a hidden directory
/// into a readable one would gain the read (the kernel compares the rights of both
/// places), so that stays refused. Empty before ABI 2 (no renames across directories
/// at all there, whatever the layers say).
pub(super) fn reparenting() -> BitFlags<AccessFs> {
    match super::support() {
        Ok(support) if support.abi >= 2 => AccessFs::Refer.into(),
        _ => BitFlags::empty(),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::sync::Arc;

    /// Which of `files` a child confined by `layer` alone can open for reading (bit i
    /// for `files[i]`); judged by the kernel.
    fn readable(layer: &OwnedFd, files: &[&Path]) -> u32 {
        let files: Vec<CString> = files
            .iter()
            .map(|f| CString::new(f.as_os_str().as_bytes()).expect("path"))
            .collect();
        let bits = super::super::confined_child::answer(layer, || {
            let mut bits = 0;
            for (i, file) in files.iter().enumerate() {
                // SAFETY: a NUL-terminated path made before the fork.
                let fd = unsafe { libc::open(file.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
                if fd >= 0 {
                    bits |= 1 << i;
                    // SAFETY: the descriptor just opened.
                    unsafe { libc::close(fd) };
                }
            }
            bits
        });
        bits as u32
    }

    /// Whether a child confined by `layer` alone can rename `from` to `to`.
    pub(in crate::platform::linux::sandbox) fn renamed(layer: &OwnedFd, from: &Path, to: &Path) -> bool {
        let from = CString::new(from.as_os_str().as_bytes()).expect("path");
        let to = CString::new(to.as_os_str().as_bytes()).expect("path");
        // SAFETY: NUL-terminated paths made before the fork.
        super::super::confined_child::answer(layer, || {
            i32::from(unsafe { libc::rename(from.as_ptr(), to.as_ptr()) } == 0)
        }) == 1
    }

    /// A hidden directory and file are unreadable through the layer, their siblings and
    /// the project (inside a hidden directory's parent) are readable; a symlink made
    /// beside them to the hidden file reaches nothing; and the same files are readable
    /// unconfined (the check can fail).
    #[test]
    fn the_layer_hides_what_is_hidden_and_nothing_else() {
        super::super::support().expect("Landlock");
        let dir = tempfile::Builder::new()
            .prefix("nss-hidden-")
            .tempdir_in("/var/tmp")
            .expect("tempdir");
        let home = dir.path().canonicalize().expect("canonical");
        for d in [".ssh", ".config/gcloud", ".config/nvim", "project"] {
            std::fs::create_dir_all(home.join(d)).expect("mkdir");
        }
        let files = [
            home.join(".ssh/id_ed25519"),
            home.join(".config/gcloud/token"),
            home.join(".netrc"),
            home.join(".config/nvim/init.vim"),
            home.join(".profile"),
            home.join("project/main.rs"),
            home.join("link-to-key"),
        ];
        for f in &files[..6] {
            std::fs::write(f, "x").expect("write");
        }
        std::os::unix::fs::symlink(&files[0], &files[6]).expect("symlink");
        let root = Arc::new(Anchor::open(&home.join("project")).expect("root"));
        let mut resolved = crate::sandbox::resolve(&Default::default(), &root).expect("resolve");
        for hidden in [".ssh", ".config/gcloud", ".netrc"] {
            resolved.hide(&home.join(hidden));
        }
        let layer = layer(&resolved).expect("layer").expect("something is hidden");
        let paths: Vec<&Path> = files.iter().map(|f| f.as_path()).collect();
        assert_eq!(readable(layer, &paths), 0b011_1000, "{paths:?}");
        assert!(resolved.read_denied.contains(&home.join(".ssh").display().to_string()));
        for f in &files {
            std::fs::read(f).expect("unconfined: readable");
        }
        // Renames across directories are the job's own rules' to judge (`reparenting`):
        // inside the project they pass this layer; out of a hidden directory into a
        // readable one they do not (the file would gain the read).
        std::fs::create_dir(home.join("project/b")).expect("mkdir");
        assert!(
            renamed(layer, &files[5], &home.join("project/b/main.rs")),
            "within the project"
        );
        assert!(!renamed(layer, &files[0], &home.join("project/stolen")), "out of .ssh");
        assert!(files[0].exists());
    }
}

/// What the layer costs, printed (not asserted: timing under load is not a test's to
/// judge): `cargo test --release --lib hidden_layer_cost -- --ignored --nocapture`.
/// The walk and the rules, paid once per resolved sandbox (at each run for a run's own
/// `sandbox` object), and the extra `landlock_restrict_self` every spawn of a sandbox
/// pays, timed in forked children.
#[cfg(test)]
mod cost {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    #[ignore = "a measurement, printed"]
    fn hidden_layer_cost() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = Arc::new(Anchor::open(&dir.path().canonicalize().expect("canonical")).expect("root"));
        let mut builds = Vec::new();
        let mut rules = 0;
        for _ in 0..20 {
            let started = Instant::now();
            let resolved = crate::sandbox::resolve(&Default::default(), &root).expect("resolve");
            let resolved_at = started.elapsed();
            layer(&resolved).expect("layer");
            builds.push((resolved_at, started.elapsed()));
            let top = Anchor::open(Path::new("/")).expect("/");
            rules = 0;
            readable_except(&top, &resolved.hidden, &[], &mut |_| {
                rules += 1;
                Ok(())
            })
            .expect("walk");
        }
        builds.sort();
        let resolved = crate::sandbox::resolve(&Default::default(), &root).expect("resolve");
        let fd = layer(&resolved).expect("layer").expect("a layer");
        let mut restricts: Vec<u128> = (0..200)
            .map(|_| {
                // SAFETY: the child makes system calls only and leaves with `_exit`.
                unsafe {
                    let pid = libc::fork();
                    if pid == 0 {
                        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0);
                        let mut a: libc::timespec = std::mem::zeroed();
                        let mut b: libc::timespec = std::mem::zeroed();
                        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut a);
                        libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32);
                        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut b);
                        let ns = (b.tv_sec - a.tv_sec) * 1_000_000_000 + (b.tv_nsec - a.tv_nsec);
                        libc::_exit((ns / 1000).min(250) as i32);
                    }
                    let mut status = 0;
                    libc::waitpid(pid, &mut status, 0);
                    libc::WEXITSTATUS(status) as u128
                }
            })
            .collect();
        restricts.sort();
        println!(
            "hidden paths: {} ({} rules); resolve median {:?}, resolve + walk + rules median {:?}; \
             landlock_restrict_self of the layer: median {} µs, p90 {} µs (200 forks)",
            resolved.hidden.len(),
            rules,
            builds[10].0,
            builds[10].1,
            restricts[100],
            restricts[180]
        );
    }
}
