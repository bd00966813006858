//! The per-job sandbox, without anything of an operating system: what a caller asks
//! for (`SandboxSpec`), the same resolved against the project root (`Resolved`), what
//! the running platform can enforce (`Support`) and what a job's result reports
//! (`Enforced`). The platform applies it (src/platform/linux/sandbox/ on Linux,
//! src/platform/macos/seatbelt.rs on macOS); docs/sandbox.md says what holds where.
//!
//! A leaf module: it imports only `error`. A sandboxed job never runs unconfined: a
//! platform that cannot confine it refuses with `SANDBOX_UNAVAILABLE`.
//!
//! Nothing a job can write decides a later job's rules: the paths are resolved once,
//! when the service's sandbox (or a run's own) is made, to descriptors held from then
//! on (`anchor.rs`), and every rule is built from those; the jobs' TMPDIRs are made in
//! a directory of the service's own that no job can write (`tmpdir.rs`).

mod anchor;
#[cfg(unix)]
pub mod carry;
mod enforcement;
mod env;
mod hidden;
#[cfg(unix)]
mod private_base;
#[cfg(unix)]
pub mod resolved_carry;
mod tmpdir;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::base::error::{ErrorCode, Result, ServiceError};

#[cfg(unix)]
pub use anchor::{reached_through, stat_id};
pub use anchor::{Anchor, FileId};
pub use enforcement::*;
pub use env::sanitize as sanitize_env;
pub use hidden::{credential_stores, homes, LayerSlot, CREDENTIAL_STORES};
#[cfg(unix)]
pub use hidden::{readable_except, within};
pub use tmpdir::JobTmpDir;
#[cfg(unix)]
pub use tmpdir::{base_dir, base_id, base_reached_through, next_spare, on_helper};

/// What a job may reach beyond the project, as the caller asks it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SandboxSpec {
    /// Writable besides the project root: absolute, or relative to the project root.
    pub write: Vec<String>,
    /// The project root is read-only too.
    pub read_only: bool,
    pub network: Network,
    /// When set, reads are limited to the system directories, the project root, the
    /// writable paths and these; the home directory is otherwise unreadable.
    pub read: Option<Vec<String>>,
    /// Environment variables passed to the job although their names or values look
    /// like credentials (`env.rs` drops those by default).
    pub env: Vec<String>,
    /// Not readable, besides the credential stores (`hidden.rs`): absolute, `~/...`,
    /// or relative to the project root; need not exist.
    pub read_deny: Vec<String>,
    /// Readable although hidden (a credential store one run needs): absolute, `~/...`,
    /// or relative to the project root; must exist.
    pub read_allow: Vec<String>,
    /// System V IPC (shared memory, semaphores, message queues) is allowed.
    pub sysv_ipc: bool,
    /// Pathname unix sockets outside the job's writable paths it may connect to (the
    /// D-Bus bus, an ssh-agent): each resolved once, to the socket file found then.
    pub unix_sockets: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Network {
    /// No TCP, no UDP, no other internet socket.
    #[default]
    Off,
    /// TCP bind and connect on these ports only (on any address).
    TcpPorts(Vec<u16>),
    /// Unconfined.
    On,
}

/// A run's choice: the service's sandbox, none, or one of its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SandboxChoice {
    /// The service's sandbox (`ServiceOptions.sandbox`), or none if it has none.
    #[default]
    ServiceDefault,
    /// The service's sandbox, or the default one if it has none (`sandbox: true`).
    On,
    /// Unconfined (`sandbox: false`).
    Off,
    Custom(SandboxSpec),
}

/// A new `Resolved::id`, different from every other of this process (sandboxes are
/// resolved on Unix only).
#[cfg(unix)]
pub(crate) fn next_resolution_id() -> u64 {
    static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A `SandboxSpec` with its paths resolved to open directories (each must exist: the
/// kernel's rules name open files, not strings), once: `anchor.rs` says why.
#[derive(Debug, PartialEq, Eq)]
pub struct Resolved {
    /// Different for every resolution in the process: what a ruleset built ahead for
    /// this sandbox is recognized by (`platform::linux::sandbox::rules`).
    pub id: u64,
    pub root: Arc<Anchor>,
    pub read_only: bool,
    pub write: Vec<Anchor>,
    pub read: Option<Vec<Anchor>>,
    pub network: Network,
    /// The shared `/tmp` is writable (`SHARED_TMP`): not when the service keeps its own
    /// files under it (`withhold_shared_tmp`).
    pub shared_tmp: bool,
    /// What differs from what was asked because of where the service's files lie.
    pub notes: Vec<String>,
    /// `SandboxSpec::env`: the credential-like variables the job may still get.
    pub env: Vec<String>,
    /// A run's own sandbox (`RunRequest::sandbox` as an object), resolved again at
    /// every run: no later job has it, so nothing is built ahead for it.
    pub per_run: bool,
    /// What jobs may not read (`hidden.rs`): canonical, whether it exists or not.
    pub hidden: Vec<PathBuf>,
    /// `SandboxSpec::read_allow`, held open: readable whatever `hidden` says.
    pub read_allow: Vec<Anchor>,
    /// The hidden paths that exist and that no directory jobs read whole holds: what
    /// the report's `readDenied` lists.
    pub read_denied: Vec<String>,
    /// Hidden paths that stay readable, and why (a directory jobs read whole holds them).
    pub hidden_notes: Vec<String>,
    pub sysv_ipc: bool,
    /// The platform's rules for `hidden`, made once for this sandbox (Linux: a Landlock
    /// layer, src/platform/linux/sandbox/hidden.rs).
    pub read_layer: LayerSlot,
    /// `SandboxSpec::unix_sockets`: the socket files, held open since they were found.
    pub unix_sockets: Vec<Anchor>,
}

/// Resolves `spec`'s paths against the project root `root` (held open since the
/// service was made). A path inside the project (relative, or absolute under the
/// root) or under the shared `/tmp` is opened without following any symlink: jobs may
/// write there, so a symlink there may be one a job put in place of a directory.
/// Another absolute path is the caller's naming: its symlinks are followed as they are
/// now (`canonicalize`), and the directory found is opened without following any
/// symlink, so what is held is what was found.
#[cfg(unix)]
pub fn resolve(spec: &SandboxSpec, root: &Arc<Anchor>) -> Result<Resolved> {
    resolve_within(spec, root, &[])
}

/// `resolve`, with more directories jobs may write (the service's sandbox's `write`
/// paths, when a run makes its own): a path under one of them is opened from it without
/// following any symlink, as one inside the project is.
#[cfg(unix)]
pub fn resolve_within(spec: &SandboxSpec, root: &Arc<Anchor>, writable: &[&Anchor]) -> Result<Resolved> {
    let paths = |list: &[String], what: &str| -> Result<Vec<Anchor>> {
        list.iter().map(|p| resolve_path(p, root, writable, what)).collect()
    };
    if let Network::TcpPorts(ports) = &spec.network {
        if ports.contains(&0) {
            return Err(ServiceError::invalid("sandbox tcpPorts must be 1 to 65535"));
        }
    }
    if let Some(bad) = spec
        .env
        .iter()
        .find(|n| n.is_empty() || n.contains('=') || n.contains('\0'))
    {
        return Err(ServiceError::invalid(format!(
            "sandbox env names variables to pass: {bad:?} is not a variable name"
        )));
    }
    let named = |list: &[String], what: &str| -> Result<Vec<String>> {
        list.iter()
            .map(|p| {
                if p.is_empty() || p.contains('\0') {
                    return Err(ServiceError::invalid(format!(
                        "sandbox {what} path {p:?} must be a non-empty path without NUL bytes"
                    )));
                }
                Ok(hidden::expand_home(p).display().to_string())
            })
            .collect()
    };
    let read_allow = paths(&named(&spec.read_allow, "readAllow")?, "readAllow")?;
    let mut hidden = hidden::credential_stores(&hidden::homes());
    for denied in named(&spec.read_deny, "readDeny")? {
        hidden.push(hidden::canonical_lenient(&anchor::normalize(&root.path().join(denied))));
    }
    let mut resolved = Resolved {
        id: next_resolution_id(),
        env: spec.env.clone(),
        root: root.clone(),
        read_only: spec.read_only,
        write: paths(&spec.write, "write")?,
        read: spec.read.as_deref().map(|r| paths(r, "read")).transpose()?,
        network: spec.network.clone(),
        shared_tmp: present().shared_tmp,
        notes: Vec::new(),
        per_run: false,
        hidden,
        read_allow,
        read_denied: Vec::new(),
        hidden_notes: Vec::new(),
        sysv_ipc: spec.sysv_ipc,
        read_layer: LayerSlot::default(),
        unix_sockets: spec
            .unix_sockets
            .iter()
            .map(|p| resolve_unix_socket(p, root))
            .collect::<Result<_>>()?,
    };
    resolved.settle_hidden();
    Ok(resolved)
}

/// A socket a job may connect to (`SandboxSpec::unix_sockets`), as the caller names it
/// now: relative to the project root, its symlinks followed (`SSH_AUTH_SOCK` may be
/// one), the socket file found opened and held. Only its identity decides later, never
/// the name: a job that replaces the file makes a new one, which is not allowed.
#[cfg(unix)]
fn resolve_unix_socket(path: &str, root: &Anchor) -> Result<Anchor> {
    let invalid = |why: String| ServiceError::invalid(format!("sandbox unixSockets path {path:?} {why}"));
    if path.is_empty() || path.contains('\0') {
        return Err(invalid("must be a non-empty path without NUL bytes".to_string()));
    }
    let found = root
        .path()
        .join(path)
        .canonicalize()
        .map_err(|e| invalid(format!("cannot be used: {e}")))?;
    let anchor = Anchor::open(&found).map_err(|e| invalid(format!("cannot be used: {e}")))?;
    if !anchor.is_socket() {
        return Err(invalid(format!("is not a unix socket ({})", found.display())));
    }
    // The daemon's own socket runs any command unconfined for whoever connects: given to
    // a job, it would undo the sandbox. (A daemon on a socket elsewhere refuses a
    // connection its jobs' supervisor made for them: src/daemon/peer.rs.)
    let daemon_dir = crate::base::places::daemon_dir();
    if found.starts_with(daemon_dir.canonicalize().unwrap_or(daemon_dir)) {
        return Err(invalid(
            "is this product's daemon socket, which would run a job's commands outside its sandbox".to_string(),
        ));
    }
    Ok(anchor)
}

/// No descriptors to hold: no sandbox here (the platform said so before this is asked).
#[cfg(not(unix))]
pub fn resolve(_spec: &SandboxSpec, _root: &Arc<Anchor>) -> Result<Resolved> {
    Err(unavailable("no sandbox on this platform"))
}

#[cfg(not(unix))]
pub fn resolve_within(_spec: &SandboxSpec, _root: &Arc<Anchor>, _writable: &[&Anchor]) -> Result<Resolved> {
    Err(unavailable("no sandbox on this platform"))
}

#[cfg(unix)]
fn resolve_path(path: &str, root: &Anchor, writable: &[&Anchor], what: &str) -> Result<Anchor> {
    if path.is_empty() || path.contains('\0') {
        return Err(ServiceError::invalid(format!(
            "sandbox {what} path {path:?} must be a non-empty path without NUL bytes"
        )));
    }
    let given = Path::new(path);
    let lexical = anchor::normalize(&root.path().join(given));
    let under_writable = writable
        .iter()
        .filter(|dir| dir.is_dir())
        .find_map(|dir| lexical.strip_prefix(dir.path()).ok().map(|rest| (dir, rest)));
    let opened = if let Ok(inside) = lexical.strip_prefix(root.path()) {
        root.open_beneath(inside)
    } else if let Some(under_tmp) = under_shared_tmp(&lexical) {
        Anchor::open(&under_tmp)
    } else if let Some((dir, rest)) = under_writable {
        dir.open_beneath(rest)
    } else {
        root.path()
            .join(given)
            .canonicalize()
            .and_then(|found| Anchor::open(&found))
    };
    opened.map_err(|e| {
        let shown = root.path().join(given);
        let why = if e.raw_os_error() == Some(libc::ELOOP) {
            "a symbolic link is in the way: a path inside the project, /tmp or another writable path \
             is opened without following symlinks (one there may be a job's); name the directory it \
             points to instead"
                .to_string()
        } else {
            e.to_string()
        };
        ServiceError::invalid(format!("sandbox {what} path {} cannot be used: {why}", shown.display()))
    })
}

/// `path` (lexical) under the shared `/tmp`, with `/tmp` itself canonical (macOS's is
/// a symlink), when it lies there.
#[cfg(unix)]
fn under_shared_tmp(path: &Path) -> Option<std::path::PathBuf> {
    let rest = path.strip_prefix(SHARED_TMP).ok()?;
    let tmp = Path::new(SHARED_TMP).canonicalize().ok()?;
    Some(tmp.join(rest))
}

impl Resolved {
    /// The first writable directory of this sandbox among `ids` (see
    /// `anchor::reached_through`): a job could then change what lies under it. The
    /// shared `/tmp` is not counted (see `withhold_shared_tmp`).
    pub fn covers(&self, ids: &[FileId]) -> Option<&Path> {
        let root = (!self.read_only).then_some(&*self.root);
        root.into_iter()
            .chain(&self.write)
            .find(|a| ids.contains(&a.id()))
            .map(|a| a.path())
    }

    /// The first writable path of this sandbox that is one of the directories `ids` or
    /// lies inside one (by identity, walking up from each), with that directory: a job
    /// could write there.
    #[cfg(unix)]
    pub fn reaches_into(&self, ids: &[FileId]) -> std::io::Result<Option<(&Path, FileId)>> {
        let root = (!self.read_only).then_some(&*self.root);
        for anchor in root.into_iter().chain(&self.write) {
            let chain = if anchor.is_dir() {
                anchor.ancestry()?
            } else {
                // A file names no directory of its own to walk up from: its parent, as
                // named when it was resolved.
                let parent = anchor.path().parent().unwrap_or(Path::new("/"));
                Anchor::open(parent)?.ancestry()?
            };
            if let Some(id) = ids.iter().find(|id| chain.contains(id)) {
                return Ok(Some((anchor.path(), *id)));
            }
        }
        Ok(None)
    }

    /// True when the shared `/tmp` is among `ids`.
    pub fn shared_tmp_covers(&self, ids: &[FileId]) -> bool {
        self.shared_tmp && present().shared_tmp_id.is_some_and(|id| ids.contains(&id))
    }

    /// `/tmp` not writable for this sandbox's jobs, saying why: the service's output
    /// folders lie under it, and a job could otherwise forge another job's output.
    pub fn withhold_shared_tmp(&mut self, why: &str) {
        if self.shared_tmp {
            self.shared_tmp = false;
            self.notes.push(format!("{SHARED_TMP} is not writable: {why}"));
            self.settle_hidden();
        }
    }

    /// `path` not readable by this sandbox's jobs either (the service's `ioDir`: the
    /// other jobs' output files), unless `readAllow` names it or a directory above it.
    pub fn hide(&mut self, path: &Path) {
        self.hidden.push(hidden::canonical_lenient(path));
        self.settle_hidden();
    }

    /// The directories jobs read whole, whatever is hidden: Landlock cannot take a
    /// right back beneath a directory it grants, and cutting the project root or a
    /// writable path into its entries would leave what a job makes there later
    /// unreadable to it. The project root, the `write` paths and the shared `/tmp`.
    pub fn read_whole(&self) -> Vec<(&Path, &'static str)> {
        let mut whole = vec![(self.root.path(), "the project root")];
        whole.extend(self.write.iter().map(|a| (a.path(), "the write path")));
        if self.shared_tmp && present().shared_tmp {
            whole.push((Path::new(SHARED_TMP), "the shared"));
        }
        whole
    }

    /// After `hidden`, `read_allow` or the writable paths changed: what `readAllow`
    /// names is not hidden; what a directory jobs read whole holds is said in a note;
    /// the rest that exists is what the report lists as left out.
    fn settle_hidden(&mut self) {
        let allowed: Vec<PathBuf> = self.read_allow.iter().map(|a| a.path().to_path_buf()).collect();
        self.hidden.retain(|h| !allowed.iter().any(|a| hidden::within(h, a)));
        let mut unique: Vec<PathBuf> = Vec::new();
        for h in self.hidden.drain(..) {
            if !unique.contains(&h) {
                unique.push(h);
            }
        }
        self.hidden = unique;
        let mut denied = Vec::new();
        let mut notes = Vec::new();
        let whole = self.read_whole();
        for h in &self.hidden {
            if std::fs::symlink_metadata(h).is_err() {
                continue;
            }
            match whole.iter().find(|(dir, _)| hidden::within(h, dir)) {
                Some((dir, what)) => notes.push(format!(
                    "{} stays readable: it lies inside {what} {}, which jobs read whole",
                    h.display(),
                    dir.display()
                )),
                None => denied.push(h.display().to_string()),
            }
        }
        self.read_denied = denied;
        self.hidden_notes = notes;
    }
}

/// What stays readable when `read` limits reads: the system's programs, libraries and
/// configuration, and the kernel's views of processes. Not `/home`, `/root`, `/tmp`,
/// `/var` or `/run` (other programs' files, sockets and secrets live there).
/// What of the fixed paths exists on this system, looked up once for the process (as
/// the Linux rules for them are made once: `platform::linux::sandbox::rules`), so the
/// report matches the rules and a spawn does not look again.
struct Present {
    system_read_paths: Vec<&'static str>,
    shared_tmp: bool,
    /// What `/tmp` is (following a symlink, as its rule does).
    shared_tmp_id: Option<FileId>,
}

fn present() -> &'static Present {
    static PRESENT: std::sync::OnceLock<Present> = std::sync::OnceLock::new();
    PRESENT.get_or_init(|| Present {
        system_read_paths: system_read_paths()
            .iter()
            .copied()
            .filter(|p| Path::new(p).exists())
            .collect(),
        shared_tmp: Path::new(SHARED_TMP).is_dir(),
        shared_tmp_id: file_id(Path::new(SHARED_TMP)),
    })
}

#[cfg(unix)]
fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_path: &Path) -> Option<FileId> {
    None
}

pub fn system_read_paths() -> &'static [&'static str] {
    &[
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/etc",
        "/opt",
        "/proc",
        "/sys",
        "/nix",
        "/snap",
        "/run/systemd/resolve",
        "/dev/random",
        "/dev/urandom",
        "/System",
        "/Library",
        "/Applications",
        "/private/etc",
        "/private/var/db",
    ]
}

/// A job's sandbox as the platform applies it: the resolved spec, its temporary
/// directory (held open since it was made: its rule is built from that), what the
/// kernel supports.
pub struct JobSandbox<'a> {
    pub resolved: &'a Arc<Resolved>,
    pub tmpdir: &'a JobTmpDir,
    pub support: Support,
}

/// The error for a sandbox the platform cannot give.
pub fn unavailable(why: impl Into<String>) -> ServiceError {
    ServiceError::new(ErrorCode::SandboxUnavailable, why)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn paths_resolve_against_the_root_and_must_exist() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root_path = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir(root_path.join("out")).expect("mkdir");
        let root = Arc::new(Anchor::open(&root_path).expect("root"));
        let spec = SandboxSpec {
            write: vec!["out".into()],
            read: Some(vec!["/usr".into()]),
            ..Default::default()
        };
        let resolved = resolve(&spec, &root).expect("resolves");
        assert_eq!(resolved.write[0].path(), root_path.join("out"));
        // The root itself, and a directory named by its absolute path under the root.
        let itself = SandboxSpec {
            write: vec![
                root_path.display().to_string(),
                root_path.join("out").display().to_string(),
            ],
            ..Default::default()
        };
        let both = resolve(&itself, &root).expect("resolves");
        assert_eq!(both.write[0].id(), root.id());
        assert_eq!(both.write[1].path(), root_path.join("out"));
        assert_eq!(
            resolved.read.as_ref().map(|r| r[0].path().to_path_buf()),
            Some(PathBuf::from("/usr"))
        );
        let missing = SandboxSpec {
            write: vec!["nope".into()],
            ..Default::default()
        };
        assert_eq!(
            resolve(&missing, &root).map_err(|e| e.code),
            Err(ErrorCode::InvalidArgument)
        );
        // A symlink inside the project (one a job could have put there) is refused,
        // named relative or absolute.
        std::os::unix::fs::symlink("/usr", root_path.join("link")).expect("symlink");
        for named in ["link".to_string(), root_path.join("link/bin").display().to_string()] {
            let linked = SandboxSpec {
                read: Some(vec![named]),
                ..Default::default()
            };
            let refused = resolve(&linked, &root).expect_err("refused");
            assert_eq!(refused.code, ErrorCode::InvalidArgument);
            assert!(refused.message.contains("symbolic link"), "{}", refused.message);
        }
    }

    #[test]
    fn ports_on_a_kernel_without_tcp_rules_become_no_network() {
        let old = Support {
            mechanism: Mechanism::Landlock,
            abi: 3,
            seccomp: true,
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let resolved = Resolved {
            id: 0,
            root: Arc::new(Anchor::open(&root).expect("root")),
            read_only: false,
            write: vec![],
            read: None,
            network: Network::TcpPorts(vec![3000]),
            shared_tmp: true,
            notes: vec![],
            env: Vec::new(),
            per_run: false,
            hidden: Vec::new(),
            read_allow: Vec::new(),
            read_denied: Vec::new(),
            hidden_notes: Vec::new(),
            sysv_ipc: false,
            read_layer: LayerSlot::default(),
            unix_sockets: Vec::new(),
        };
        let enforced = Enforced::new(&resolved, &old, Path::new("/t"));
        assert_eq!(enforced.network, "none");
        assert!(!enforced.tcp && !enforced.scoping);
        assert_eq!(enforced.notes.len(), 3, "{:?}", enforced.notes);
        assert_eq!(enforced.unix_sockets, "supervised");
        let new = Support { abi: 7, ..old };
        let enforced = Enforced::new(&resolved, &new, Path::new("/t"));
        assert_eq!((enforced.network, enforced.tcp_ports.clone()), ("ports", vec![3000]));
        assert!(enforced.tcp && enforced.scoping);
        assert!(enforced.notes.is_empty(), "{:?}", enforced.notes);
        assert_eq!(enforced.unix_sockets, "supervised");
        let newest = Support { abi: 9, ..old };
        assert_eq!(
            Enforced::new(&resolved, &newest, Path::new("/t")).unix_sockets,
            "landlock"
        );
        assert_eq!(enforced.write[..2], [root.display().to_string(), "/t".to_string()]);
    }
}
