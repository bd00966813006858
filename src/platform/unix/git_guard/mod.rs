//! What a sandboxed job may not leave behind in a writable project: git's hooks and
//! configuration, which run unconfined at the user's next `git commit`.
//!
//! Landlock grants a right on a whole tree and cannot take it back beneath, so a job
//! allowed to write the project may write `.git/hooks/pre-commit` or add
//! `core.fsmonitor` / an alias / a filter to `.git/config`: code the user's own git
//! then runs outside any sandbox. Granting the project's entries one by one instead of
//! its root would leave `.git` out, but then no job could create or remove anything at
//! the project's top level (`npm install` making `node_modules`, `cargo` making
//! `target`), and a mount namespace costs a user namespace and a copy of the mount
//! table per job. So the service checks instead: when the first of a project's
//! sandboxed jobs starts it records `.git/config`, `.git/config.worktree`, every entry
//! of `.git/hooks` and of a `core.hooksPath` inside the project (contents, modes, link
//! targets); when each job's main process exits, and when the last process of the last
//! of them has ended, whatever differs is put back and named in the job's result
//! (`sandbox.restored`). Everything is done through descriptors opened without
//! following symbolic links (`openat` with `O_NOFOLLOW` from the project's directory),
//! so a job that swaps a directory for a link while the service restores cannot point
//! the service's writes elsewhere.
//!
//! What it costs and what stays open (docs/sandbox.md): reading those files (some
//! dozen small ones) before the first sandboxed job starts; a change made by the user
//! (or an unconfined job) while a sandboxed job runs is undone as well; a process a job
//! left running may change them after the last check, until the next sandboxed job
//! ends; a `.git` the job replaced (by a link or a `gitdir:` file) is moved aside, not
//! rebuilt; repositories nested deeper in the project are not guarded; and a hook
//! the user already has that runs project files (a link into the work tree, the
//! `pre-commit` framework's `.pre-commit-config.yaml`) runs what the job may change.

#[cfg(target_os = "linux")]
mod carry;
mod tree;

#[cfg(target_os = "linux")]
pub use carry::{CarriedGitGuard, CarriedGitHold};

/// A file's bytes as base64 text in the hand-over's JSON (`carry.rs`).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
mod bytes_as_base64 {
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(text.as_bytes())
            .map_err(serde::de::Error::custom)
    }
}

use std::ffi::OsStr;
use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tree::{
    lstat_kind, open_dir_at, open_path, put, read_bounded, reread, same, settled_before, split, Kind, Node, Parents,
    MAX_ENTRIES,
};

/// The guarded paths, relative to the project root.
#[derive(Clone, Debug)]
struct Snapshot {
    /// Empty: `.git` is not a directory, nothing is guarded.
    paths: Vec<(PathBuf, Node)>,
    /// When it was recorded (wall clock, as file times are).
    at: std::time::SystemTime,
}

/// One per project root with a `.git` directory: the record and how many sandboxed
/// jobs that may write the project hold it.
pub struct GitGuard {
    root: PathBuf,
    state: Mutex<State>,
}

struct State {
    holders: usize,
    baseline: Option<Result<Snapshot, String>>,
}

/// A sandboxed job's hold on the guard: checked at its main process's exit
/// (`check`), released when nothing of it runs (`release`, or when dropped).
pub struct GitHold {
    guard: Arc<GitGuard>,
    released: std::sync::atomic::AtomicBool,
    restored: Mutex<Vec<String>>,
}

impl GitGuard {
    /// A guard for `root` (canonical); it records nothing until a job holds it.
    pub fn new(root: &Path) -> Arc<Self> {
        Arc::new(Self {
            root: root.to_path_buf(),
            state: Mutex::new(State {
                holders: 0,
                baseline: None,
            }),
        })
    }

    /// Before a sandboxed job that may write the project starts. `Ok(None)`: the
    /// project has no `.git` directory, nothing to guard. `Err`: what could not be
    /// recorded (the job still runs; its report says so).
    pub fn hold(self: &Arc<Self>) -> Result<Option<Arc<GitHold>>, String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.holders == 0 {
            // Between jobs the user may have changed them: that is the new record. What
            // kept its stamp is not read again (the cost of a spawn: docs/sandbox.md).
            let fresh = match state.baseline.take() {
                Some(Ok(old)) if !old.paths.is_empty() => refresh(&self.root, old),
                _ => record(&self.root),
            };
            state.baseline = Some(fresh.map_err(|e| e.to_string()));
        }
        match state.baseline.as_ref() {
            Some(Ok(snapshot)) if snapshot.paths.is_empty() => return Ok(None),
            Some(Err(e)) => return Err(format!("the project's .git could not be recorded: {e}")),
            _ => {}
        }
        state.holders += 1;
        Ok(Some(Arc::new(GitHold {
            guard: self.clone(),
            released: false.into(),
            restored: Mutex::new(Vec::new()),
        })))
    }

    /// Puts back what differs from the record; returns what was put back.
    fn restore(&self, state: &State) -> Vec<String> {
        let Some(Ok(baseline)) = &state.baseline else {
            return Vec::new();
        };
        let mut restored = Vec::new();
        let Ok(root) = open_dir_at(rustix::fs::CWD, &self.root, false) else {
            return restored;
        };
        // `.git` replaced by a link or a `gitdir:` file (pointing at hooks elsewhere):
        // moved aside, so no git runs through it; the repository itself is not rebuilt.
        let git = OsStr::new(".git");
        match lstat_kind(root.as_fd(), git) {
            Ok(Some(Kind::Dir)) => {}
            Ok(None) => {
                restored.push(".git (gone: not rebuilt)".to_string());
                return restored;
            }
            _ => {
                let aside = format!(".git.replaced-by-sandboxed-job-{}", std::process::id());
                let _ = rustix::fs::renameat(root.as_fd(), git, root.as_fd(), aside.as_str());
                restored.push(format!(".git (replaced: moved to {aside})"));
                return restored;
            }
        }
        let settled = settled_before(baseline.at);
        let mut parents = Parents::default();
        for (path, node) in &baseline.paths {
            let Some((parent, name)) = split(path) else { continue };
            let Ok(dir) = parents.open(root.as_fd(), &parent) else {
                continue;
            };
            let samples = path == Path::new(".git/hooks");
            let current = match reread(dir.as_fd(), name, node, settled, samples, 0) {
                Ok(None) => continue,
                Ok(Some(current)) => current,
                Err(_) => Node::Other,
            };
            if !same(&current, node) {
                put(
                    dir.as_fd(),
                    name,
                    node,
                    &current,
                    &path.display().to_string(),
                    &mut restored,
                );
            }
        }
        restored
    }
}

impl GitHold {
    /// At the job's main process's exit: puts back what differs, remembers it for the
    /// job's report.
    pub fn check(&self) {
        let state = self.guard.state.lock().unwrap_or_else(|e| e.into_inner());
        let restored = self.guard.restore(&state);
        drop(state);
        self.restored.lock().unwrap_or_else(|e| e.into_inner()).extend(restored);
    }

    /// Once nothing of the job runs: a last check, and the hold is given up (with the
    /// last one, the record is taken again at the next job's start, so a change the
    /// user makes between jobs stays).
    pub fn release(&self) {
        if self.released.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return;
        }
        let mut state = self.guard.state.lock().unwrap_or_else(|e| e.into_inner());
        let restored = self.guard.restore(&state);
        state.holders = state.holders.saturating_sub(1);
        drop(state);
        self.restored.lock().unwrap_or_else(|e| e.into_inner()).extend(restored);
    }

    /// What was put back so far (paths relative to the project).
    pub fn restored(&self) -> Vec<String> {
        self.restored.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl std::fmt::Debug for GitHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitHold").field("root", &self.guard.root).finish()
    }
}

impl Drop for GitHold {
    fn drop(&mut self) {
        self.release();
    }
}

/// Records the guarded paths of `root`; none when `.git` is not a directory.
fn record(root: &Path) -> io::Result<Snapshot> {
    let at = std::time::SystemTime::now();
    // No `.git` at all (a project that is not a repository, recorded again before every
    // job): one `lstat`, not the root opened, `.git` tried and the root closed. Any
    // other answer (a directory, or an error that may hide one) takes the full way.
    if std::fs::symlink_metadata(root.join(".git")).is_err_and(|e| e.kind() == io::ErrorKind::NotFound) {
        return Ok(Snapshot { paths: Vec::new(), at });
    }
    let root = open_dir_at(rustix::fs::CWD, root, false)?;
    let Ok(git) = open_dir_at(root.as_fd(), Path::new(".git"), true) else {
        return Ok(Snapshot { paths: Vec::new(), at });
    };
    let mut paths = Vec::new();
    let mut budget = MAX_ENTRIES;
    for name in ["config", "config.worktree", "hooks"] {
        let node = read_bounded(git.as_fd(), OsStr::new(name), &mut budget)?;
        if name == "config" {
            if let Node::File { bytes, .. } = &node {
                if let Some(hooks) = hooks_path(bytes) {
                    let dir = open_path(root.as_fd(), hooks.parent().unwrap_or(Path::new("")));
                    let node = match (dir, hooks.file_name()) {
                        (Ok(dir), Some(name)) => read_bounded(dir.as_fd(), name, &mut budget)?,
                        _ => Node::Absent,
                    };
                    paths.push((hooks, node));
                }
            }
        }
        paths.push((Path::new(".git").join(name), node));
    }
    Ok(Snapshot { paths, at })
}

/// The record taken again, reading only what changed since `old` (a changed
/// `core.hooksPath` makes it whole again).
fn refresh(root_path: &Path, old: Snapshot) -> io::Result<Snapshot> {
    let at = std::time::SystemTime::now();
    let settled = settled_before(old.at);
    let root = open_dir_at(rustix::fs::CWD, root_path, false)?;
    let mut paths = Vec::with_capacity(old.paths.len());
    let mut parents = Parents::default();
    for (path, node) in old.paths {
        let Some((parent, name)) = split(&path) else { continue };
        let dir = parents.open(root.as_fd(), &parent)?;
        match reread(dir, name, &node, settled, path == Path::new(".git/hooks"), 0)? {
            None => paths.push((path, node)),
            Some(_) if path == Path::new(".git/config") => return record(root_path),
            Some(fresh) => paths.push((path, fresh)),
        }
    }
    if !matches!(lstat_kind(root.as_fd(), OsStr::new(".git")), Ok(Some(Kind::Dir))) {
        return record(root_path);
    }
    Ok(Snapshot { paths, at })
}

/// `core.hooksPath` of a git config file, when it is a relative path without `..`
/// (relative to the work tree: inside the project). An absolute one outside the
/// project is not writable by a job; one inside it is not followed (rare: stated).
fn hooks_path(config: &[u8]) -> Option<PathBuf> {
    let text = String::from_utf8_lossy(config);
    let mut in_core = false;
    let mut found = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_core = line
                .trim_start_matches('[')
                .trim_end_matches(']')
                .trim()
                .eq_ignore_ascii_case("core");
            continue;
        }
        if !in_core {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim().eq_ignore_ascii_case("hookspath") {
            found = Some(value.trim().trim_matches('"').to_string());
        }
    }
    let path = PathBuf::from(found?);
    let inside = path.is_relative()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir));
    inside.then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_hook_and_an_edited_config_are_put_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let git = root.join(".git");
        std::fs::create_dir_all(git.join("hooks")).expect("mkdir");
        std::fs::write(git.join("config"), "[core]\n\thooksPath = .husky\n").expect("config");
        std::fs::write(git.join("hooks/pre-push.sample"), "#!/bin/sh\n").expect("sample");
        std::fs::create_dir(root.join(".husky")).expect("husky");
        let guard = GitGuard::new(&root);
        let hold = guard.hold().expect("records").expect("a repository");
        std::fs::write(git.join("hooks/pre-commit"), "evil").expect("plant");
        std::fs::write(git.join("config"), "[core]\n\tfsmonitor = evil\n").expect("edit");
        std::fs::write(root.join(".husky/pre-commit"), "evil").expect("plant");
        std::fs::remove_file(git.join("hooks/pre-push.sample")).expect("remove");
        std::os::unix::fs::symlink("/etc/passwd", git.join("hooks/pre-push.sample")).expect("link");
        hold.check();
        let mut restored = hold.restored();
        restored.sort();
        assert_eq!(
            restored,
            [
                ".git/config",
                ".git/hooks/pre-commit",
                ".git/hooks/pre-push.sample",
                ".husky/pre-commit"
            ]
        );
        assert!(!git.join("hooks/pre-commit").exists());
        assert!(!root.join(".husky/pre-commit").exists());
        assert_eq!(
            std::fs::read_to_string(git.join("config")).unwrap(),
            "[core]\n\thooksPath = .husky\n"
        );
        assert_eq!(
            std::fs::read_to_string(git.join("hooks/pre-push.sample")).unwrap(),
            "#!/bin/sh\n"
        );
        drop(hold);
        // With no job holding it, the user's own change stays.
        std::fs::write(git.join("hooks/pre-commit"), "mine").expect("user");
        let hold = guard.hold().expect("records").expect("a repository");
        drop(hold);
        assert_eq!(std::fs::read_to_string(git.join("hooks/pre-commit")).unwrap(), "mine");
    }

    #[test]
    fn a_project_without_git_needs_no_guard() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(GitGuard::new(dir.path()).hold().expect("fine").is_none());
    }
}
