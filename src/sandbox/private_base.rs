//! The private base of the jobs' TMPDIRs (src/sandbox/tmpdir.rs says why it exists):
//! `native-shell-<pid>-<n>` (0700, ours), made once per process in the first parent the
//! shared `/tmp`'s rule does not reach; directories made in it by descriptor; and the
//! sweep of the bases that processes killed outright left behind.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{mkdirat, Mode};

use crate::sandbox::{reached_through, Anchor, FileId, SHARED_TMP};

/// The private base, made once for the process.
pub(super) struct Base {
    pub dir: Anchor,
    /// The directories the base is reached through: a sandbox must make none of
    /// them writable (`base_reached_through`).
    pub reached: Vec<FileId>,
}

/// The parents tried for the private base, in order.
fn candidates() -> Vec<PathBuf> {
    let mut list = vec![std::env::temp_dir(), PathBuf::from("/var/tmp")];
    if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR") {
        list.push(PathBuf::from(run));
    }
    if let Some(home) = std::env::var_os("HOME") {
        list.push(PathBuf::from(home).join(".cache"));
    }
    list
}

/// The private base: `native-shell-<pid>-<n>` (a name no one has, 0700, ours) in
/// the first candidate that the shared `/tmp`'s rule does not reach.
pub(super) fn make_base() -> Result<Base, String> {
    use std::os::unix::fs::MetadataExt;
    let tmp = std::fs::metadata(SHARED_TMP).ok().map(|m| (m.dev(), m.ino()));
    let mut tried = Vec::new();
    for parent in candidates() {
        let Ok(parent) = parent.canonicalize() else { continue };
        let Ok(reached) = reached_through(&parent) else {
            continue;
        };
        if tmp.is_some_and(|tmp| reached.contains(&tmp)) {
            tried.push(format!(
                "{} (under {SHARED_TMP}, which jobs may write)",
                parent.display()
            ));
            continue;
        }
        let Ok(parent_dir) = Anchor::open(&parent) else {
            continue;
        };
        sweep(&parent);
        // An existing entry of the name is skipped, never reused: a stale or planted
        // one, or the base of another copy of this addon loaded into the same
        // process (its own counter, the same pid).
        let mut made = Err(io::Error::from(io::ErrorKind::AlreadyExists));
        for _ in 0..64 {
            made = make_in(&parent_dir, &fresh_name("native-shell-", std::process::id()));
            if !matches!(&made, Err(e) if e.kind() == io::ErrorKind::AlreadyExists) {
                break;
            }
        }
        match made {
            Ok(dir) => {
                let mut reached = reached;
                reached.push(dir.id());
                return Ok(Base { dir, reached });
            }
            Err(e) => tried.push(format!("{}: {e}", parent.display())),
        }
    }
    Err(format!(
        "no private directory for the jobs' TMPDIRs could be made (tried {})",
        tried.join("; ")
    ))
}

/// Makes the directory `name` (0700) in `parent` and opens it without following
/// anything; it must be ours. An existing one of that name (stale or planted) is
/// an error: never reused.
pub(super) fn make_in(parent: &Anchor, name: &str) -> io::Result<Anchor> {
    mkdirat(parent.fd(), name, Mode::from_raw_mode(0o700))?;
    let dir = parent.open_beneath(Path::new(name))?;
    let st = rustix::fs::fstat(dir.fd())?;
    // SAFETY: no arguments, no failure.
    if !dir.is_dir() || st.st_uid != unsafe { libc::geteuid() } {
        return Err(io::Error::other(format!(
            "{} is not a directory of ours",
            dir.path().display()
        )));
    }
    Ok(dir)
}

/// `<prefix><pid>-<n>`: a name this process has not used.
pub(super) fn fresh_name(prefix: &str, pid: u32) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("{prefix}{pid}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Once, in the chosen parent: removes the private bases that processes now gone
/// left there (killed before their exit hook ran). Only this user's directories
/// named `native-shell-<pid>-<n>` whose `<pid>` runs no process; a pid reused since
/// by another process keeps its directories until that one is gone too.
fn sweep(parent: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(parent) else { return };
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

/// The pid in `native-shell-<pid>-<n>`, if no process has it now.
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
