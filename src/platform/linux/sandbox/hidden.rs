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
//! A hidden path inside one of those stays readable (the report notes it), so the walk
//! does not go down to it (`walked_to`): its siblings would only be rules beneath a
//! grant, which every spawn copies all the same.
//!
//! Made once per resolved sandbox, at its first job, and kept with it
//! (`Resolved::read_layer`): a spawn adds one `landlock_restrict_self`, nothing else.
//! An entry made afterwards in a walked directory is not readable by the sandbox's jobs
//! (fail closed) until a new sandbox is resolved. Listing stays allowed (`ls ~/.ssh`
//! shows names), and so do the job's other rights: writing there is the job's own
//! rules' to refuse (they do, outside the project and the `write` paths).

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use landlock::{AccessFs, BitFlags, CompatLevel, Compatible, PathFd, Ruleset, RulesetAttr};

use super::path_rule::add;
use crate::sandbox::{base_dir, readable_except, within, Anchor, Resolved, SHARED_TMP};

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
    let shared_tmp = match resolved.shared_tmp {
        true => PathFd::new(SHARED_TMP).ok(),
        false => None,
    };
    let whole = whole(resolved, shared_tmp.as_ref(), base_dir()?);
    let walked = walked_to(&resolved.hidden, &whole);
    if walked.is_empty() {
        // Nothing is hidden, or all of it lies where the layer grants whole: a layer
        // would grant every read, so none is made.
        return Ok(None);
    }
    build(&walked, &whole).map(Some)
}

/// The layer: every entry the walk down to `walked` reaches, and `whole`.
fn build(walked: &[PathBuf], whole: &[(&Path, BorrowedFd<'_>)]) -> io::Result<OwnedFd> {
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
    readable_except(&top, walked, &[], &mut |entry| grant(entry.fd()))?;
    for (_, dir) in whole {
        grant(*dir)?;
    }
    Ok(fd)
}

/// What the layer grants whole, whatever is hidden (the module's comment says why): the
/// project root, the `write` paths, the `readAllow` paths, the `read` paths that hold no
/// hidden path, the shared `/tmp` (`shared_tmp`, when jobs have it) and the private
/// directory of the TMPDIRs (`base`). Each with the path it was resolved as.
fn whole<'a>(
    resolved: &'a Resolved,
    shared_tmp: Option<&'a PathFd>,
    base: &'a Anchor,
) -> Vec<(&'a Path, BorrowedFd<'a>)> {
    let mut whole: Vec<(&Path, BorrowedFd<'_>)> = vec![(resolved.root.path(), resolved.root.fd())];
    whole.extend(resolved.write.iter().map(|a| (a.path(), a.fd())));
    whole.extend(resolved.read_allow.iter().map(|a| (a.path(), a.fd())));
    for anchor in resolved.read.iter().flatten() {
        let holds_hidden = resolved
            .hidden
            .iter()
            .any(|h| h.as_path() != anchor.path() && h.starts_with(anchor.path()));
        if !holds_hidden {
            whole.push((anchor.path(), anchor.fd()));
        }
    }
    if let Some(tmp) = shared_tmp {
        whole.push((Path::new(SHARED_TMP), std::os::fd::AsFd::as_fd(tmp)));
    }
    whole.push((base.path(), base.fd()));
    whole
}

/// The hidden paths the walk goes down to: those outside every directory the layer
/// grants whole (`whole`). One inside such a directory stays readable whatever the
/// walk does (a rule on the directory covers all beneath it; `Resolved::settle_hidden`
/// notes it), so walking down to it would only add a rule for each of its siblings, all
/// beneath that grant: the daemon's directory under a crowded `/tmp` made the layer
/// hundreds of rules, and every spawn copies each of them (`landlock_restrict_self`
/// builds the job's domain from its layers' rules). Compared by name: the paths are
/// canonical (the anchors' since they were resolved, the hidden paths' too), and what
/// is left out is no more than what the report says stays readable.
fn walked_to(hidden: &[PathBuf], whole: &[(&Path, BorrowedFd<'_>)]) -> Vec<PathBuf> {
    hidden
        .iter()
        .filter(|h| !whole.iter().any(|(dir, _)| within(h, dir)))
        .cloned()
        .collect()
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

    /// A hidden path inside a directory the layer grants whole (here the project root)
    /// is not walked to: it stays readable, as the report says, and its siblings get no
    /// rules of their own. One outside (`~/.ssh`) is walked to and stays hidden. A
    /// sandbox whose every hidden path lies in such a directory gets no layer. Judged
    /// by the kernel, in a child confined by the layer.
    #[test]
    fn hidden_paths_inside_what_is_granted_whole_are_not_walked_to() {
        super::super::support().expect("Landlock");
        let dir = tempfile::Builder::new()
            .prefix("nss-hidden-")
            .tempdir_in("/var/tmp")
            .expect("tempdir");
        let home = dir.path().canonicalize().expect("canonical");
        for d in [".ssh", "project/.out"] {
            std::fs::create_dir_all(home.join(d)).expect("mkdir");
        }
        let files = [
            home.join(".ssh/id_ed25519"),
            home.join("project/.out/log"),
            home.join("project/main.rs"),
        ];
        for f in &files {
            std::fs::write(f, "x").expect("write");
        }
        let root = Arc::new(Anchor::open(&home.join("project")).expect("root"));
        let resolve = || crate::sandbox::resolve(&Default::default(), &root).expect("resolve");
        let mut resolved = resolve();
        resolved.hide(&home.join(".ssh"));
        resolved.hide(&home.join("project/.out"));
        let base = base_dir().expect("base");
        let walked = walked_to(&resolved.hidden, &whole(&resolved, None, base));
        assert!(walked.contains(&home.join(".ssh")), "{walked:?}");
        assert!(!walked.contains(&home.join("project/.out")), "{walked:?}");
        let layer_fd = layer(&resolved).expect("layer").expect("~/.ssh is hidden");
        let paths: Vec<&Path> = files.iter().map(|f| f.as_path()).collect();
        assert_eq!(readable(layer_fd, &paths), 0b110, "{paths:?}");
        let mut inside_only = resolve();
        inside_only.hidden = vec![home.join("project/.out")];
        assert!(layer(&inside_only).expect("layer").is_none());
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
        let resolve = || {
            let mut resolved = crate::sandbox::resolve(&Default::default(), &root).expect("resolve");
            // As the service hides it (src/service/sandbox.rs): under `/tmp` when
            // `XDG_RUNTIME_DIR` is not set.
            resolved.hide(&crate::base::places::daemon_dir());
            resolved
        };
        let mut builds = Vec::new();
        for _ in 0..20 {
            let started = Instant::now();
            let resolved = resolve();
            let resolved_at = started.elapsed();
            layer(&resolved).expect("layer");
            builds.push((resolved_at, started.elapsed()));
        }
        builds.sort();
        let resolved = resolve();
        let tmp = PathFd::new(SHARED_TMP).ok();
        let whole = whole(&resolved, tmp.as_ref(), base_dir().expect("base"));
        let count = |walked: &[PathBuf]| {
            let top = Anchor::open(Path::new("/")).expect("/");
            let mut rules = 1 + whole.len();
            readable_except(&top, walked, &[], &mut |_| {
                rules += 1;
                Ok(())
            })
            .expect("walk");
            rules
        };
        // The layer as it is made, and as it was made before the walk left out what
        // lies where the layer grants whole (every hidden path walked to).
        let walked = walked_to(&resolved.hidden, &whole);
        let now = build(&walked, &whole).expect("layer");
        let before = build(&resolved.hidden, &whole).expect("layer");
        let restricts = |fd: &OwnedFd| {
            let mut times: Vec<u128> = (0..200)
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
            times.sort();
            (times[100], times[180])
        };
        let (now_median, now_p90) = restricts(&now);
        let (before_median, before_p90) = restricts(&before);
        println!(
            "hidden paths: {} ({} walked to: {} rules; {} rules walking to all); resolve median {:?}, \
             resolve + walk + rules median {:?}; landlock_restrict_self of the layer (200 forks): \
             median {} µs, p90 {} µs ({} µs, {} µs walking to all)",
            resolved.hidden.len(),
            walked.len(),
            count(&walked),
            count(&resolved.hidden),
            builds[10].0,
            builds[10].1,
            now_median,
            now_p90,
            before_median,
            before_p90,
        );
    }
}
