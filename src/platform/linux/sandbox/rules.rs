//! The Landlock half of a Linux sandbox: the ruleset, made in the parent (it allocates:
//! the `landlock` crate's builders, errors, the path descriptors), handed to the spawn
//! child as one descriptor for `landlock_restrict_self`.
//!
//! Landlock rules are allow-lists on file hierarchies: a right granted on a directory
//! holds for everything beneath it, and nothing beneath can take it back. So:
//! - Handled (refused unless a rule grants it): every file system right the kernel's
//!   ABI knows: reads, execution, writes, removal, creation of every kind of file,
//!   linking and renaming across directories (`REFER`, ABI 2: a hard link or rename
//!   cannot move a file out of or into a writable tree), truncation (ABI 3), device
//!   ioctls (ABI 5), and from ABI 9 connecting to pathname unix sockets.
//! - Reads and execution: without `read`, every top-level directory but `/dev` (whose
//!   other devices are the user's other terminals, whose input could be read), plus
//!   listing any directory; with `read`, only the system directories
//!   (`crate::sandbox::system_read_paths`), the project root, the write paths and the
//!   `read` paths: the home directory's secrets are not readable.
//! - Writes: the project root (unless read-only), the `write` paths, the job's own
//!   `TMPDIR`, the shared `/tmp` (`crate::sandbox::SHARED_TMP` says why), its terminal (by its descriptor: the one `/dev/pts` entry that is the
//!   job's own, so writing to another terminal's device path is refused) and
//!   `/dev/{null,zero,full,tty}` (`/dev/tty` opens only the caller's own terminal).
//! - Network (ABI 4): TCP bind and connect are handled unless the network is allowed;
//!   the allowed ports get a rule each (any address: Landlock filters ports only).
//! - Scoping (ABI 6): signals and abstract unix sockets reach only processes of the
//!   job's own domain (what the job started), never anything outside.
//! Everything is asked as a hard requirement of the probed ABI: a right the kernel
//! refuses is an error (the job does not start), never a silent loosening.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope, ABI,
};

use crate::sandbox::{
    effective_network, system_read_paths, JobSandbox, Network, ABI_SCOPE, ABI_TCP, SHARED_TMP, WRITABLE_DEVICES,
};

/// Devices readable even when nothing else of `/dev` is.
const READABLE_DEVICES: &[&str] = &["/dev/random", "/dev/urandom"];

fn error(what: &str, e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("sandbox: {what}: {e}"))
}

/// Builds the job's ruleset; returns its descriptor (close-on-exec, as the kernel
/// makes every ruleset descriptor).
pub fn ruleset(job: &JobSandbox<'_>, terminal: Option<BorrowedFd<'_>>) -> io::Result<OwnedFd> {
    let abi = ABI::from(job.support.abi.min(i32::MAX as u32) as i32);
    let fs_all = AccessFs::from_all(abi);
    let fs_read = AccessFs::from_read(abi);
    let network = effective_network(&job.resolved.network, &job.support);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(fs_all)
        .map_err(|e| error("file system rights", e))?;
    if network != Network::On && job.support.abi >= ABI_TCP {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(|e| error("network rights", e))?;
    }
    if job.support.abi >= ABI_SCOPE {
        ruleset = ruleset
            .scope(Scope::from_all(abi))
            .map_err(|e| error("scoping", e))?;
    }
    let mut rules = Rules {
        created: ruleset.create().map_err(|e| error("creating the ruleset", e))?,
        abi,
    };
    match &job.resolved.read {
        None => {
            for entry in top_level_entries() {
                rules.optional(entry, fs_read)?;
            }
            // Listing any directory (`ls /`, `/dev`, `/home`): names, not contents.
            rules.path(Path::new("/"), AccessFs::ReadDir.into())?;
        }
        Some(extra) => {
            for path in system_read_paths() {
                rules.optional(Path::new(path), fs_read)?;
            }
            for path in extra {
                rules.path(path, fs_read)?;
            }
        }
    }
    for device in READABLE_DEVICES {
        rules.optional(Path::new(device), fs_read)?;
    }
    let root_access = if job.resolved.read_only { fs_read } else { fs_all };
    rules.path(&job.resolved.root, root_access)?;
    for path in &job.resolved.write {
        rules.path(path, fs_all)?;
    }
    rules.path(job.tmpdir, fs_all)?;
    // Shared `/tmp` (see `crate::sandbox::SHARED_TMP` for why it is writable), but
    // from ABI 9 not its unix sockets (X11's, other programs' servers).
    let mut shared_tmp = fs_all;
    shared_tmp.remove(AccessFs::ResolveUnix);
    rules.optional(Path::new(SHARED_TMP), shared_tmp)?;
    for device in WRITABLE_DEVICES {
        rules.optional(Path::new(device), fs_all)?;
    }
    if let Some(terminal) = terminal {
        rules.add(terminal, fs_all & AccessFs::from_file(abi), "the terminal")?;
    }
    if let Network::TcpPorts(ports) = &network {
        for &port in ports {
            (&mut rules.created)
                .add_rule(NetPort::new(port, AccessNet::from_all(abi)))
                .map_err(|e| error(&format!("port {port}"), e))?;
        }
    }
    let fd: Option<OwnedFd> = rules.created.into();
    fd.ok_or_else(|| error("ruleset", "the kernel made none"))
}

struct Rules {
    created: RulesetCreated,
    abi: ABI,
}

impl Rules {
    /// A rule on `path`, which must exist.
    fn path(&mut self, path: &Path, access: BitFlags<AccessFs>) -> io::Result<()> {
        let fd = PathFd::new(path).map_err(|e| error(&path.display().to_string(), e))?;
        let access = if std::fs::metadata(path).map(|m| m.is_dir()).unwrap_or(false) {
            access
        } else {
            access & AccessFs::from_file(self.abi)
        };
        self.add(fd.as_fd(), access, &path.display().to_string())
    }

    /// A rule on `path` if it exists (system directories differ between systems).
    fn optional(&mut self, path: &Path, access: BitFlags<AccessFs>) -> io::Result<()> {
        match std::fs::metadata(path) {
            Ok(_) => self.path(path, access),
            Err(_) => Ok(()),
        }
    }

    fn add(&mut self, fd: BorrowedFd<'_>, access: BitFlags<AccessFs>, what: &str) -> io::Result<()> {
        if access.is_empty() {
            return Ok(());
        }
        (&mut self.created)
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| error(what, e))?;
        Ok(())
    }
}

/// Every entry of `/` but `/dev`, read once: a directory made at the top level later
/// is not readable by jobs (fail closed).
fn top_level_entries() -> &'static [PathBuf] {
    static ENTRIES: OnceLock<Vec<PathBuf>> = OnceLock::new();
    ENTRIES.get_or_init(|| {
        let Ok(dir) = std::fs::read_dir("/") else {
            return Vec::new();
        };
        let mut entries: Vec<PathBuf> = dir
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name() != "dev")
            .map(|e| e.path())
            .collect();
        entries.sort();
        entries
    })
}
