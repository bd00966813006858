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
//!   `TMPDIR`, the shared `/tmp` (`crate::sandbox::SHARED_TMP` says why; not when the
//!   service keeps its output files under it: `Resolved::shared_tmp`), its terminal
//!   (by its descriptor: the one `/dev/pts` entry that is the job's own, so writing to
//!   another terminal's device path is refused) and `/dev/{null,zero,full,tty}`
//!   (`/dev/tty` opens only the caller's own terminal).
//! - Network (ABI 4): TCP bind and connect are handled unless the network is allowed;
//!   the allowed ports get a rule each (any address: Landlock filters ports only).
//! - Scoping (ABI 6): signals and abstract unix sockets reach only processes of the
//!   job's own domain (what the job started), never anything outside.
//!
//! The project root, the `write` and `read` paths and the TMPDIR are rules on the
//! descriptors held since they were resolved (`crate::sandbox::Anchor`), never on names
//! looked up at the spawn: nothing a job did since changes what a later job's rules
//! reach.
//!
//! Everything is asked as a hard requirement of the probed ABI: a right the kernel
//! refuses is an error (the job does not start), never a silent loosening.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathFd, Ruleset, RulesetAttr, Scope, ABI,
};

use crate::sandbox::{
    effective_network, next_spare, on_helper, system_read_paths, Anchor, FileId, JobSandbox, Network, Resolved,
    Support, ABI_SCOPE, ABI_TCP, ABI_UNIX, SHARED_TMP, WRITABLE_DEVICES,
};

/// Devices readable even when nothing else of `/dev` is.
const READABLE_DEVICES: &[&str] = &["/dev/random", "/dev/urandom"];

fn error(what: &str, e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("sandbox: {what}: {e}"))
}

/// The job's ruleset, and whether it was built ahead; returns its descriptor
/// (close-on-exec, as the kernel makes every ruleset descriptor). Everything but the
/// terminal's rule is usually built ahead, on the TMPDIR helper thread, for the spare
/// this job was given (`Ahead`): the spawn then adds one rule. Otherwise (the first
/// job, a run's own sandbox, a spare the helper had not reached yet) it is built here.
/// `after_launch` hands the descriptor back once the child is confined.
pub fn ruleset(job: &JobSandbox<'_>, terminal: Option<BorrowedFd<'_>>) -> io::Result<(OwnedFd, bool)> {
    let abi = abi_of(&job.support);
    let tmpdir = job
        .tmpdir
        .anchor()
        .ok_or_else(|| error("the job's TMPDIR", "it was handed back already"))?;
    let ahead = Ahead::take(job.resolved.id, tmpdir.id());
    let built_ahead = ahead.is_some();
    let fd = match ahead {
        Some(fd) => fd,
        None => job_rules(job.resolved, &job.support, tmpdir.fd())?,
    };
    let mut rules = Rules { fd, abi };
    if let Some(terminal) = terminal {
        rules.add(
            terminal,
            AccessFs::from_all(abi) & AccessFs::from_file(abi),
            "the terminal",
        )?;
    }
    Ok((rules.fd, built_ahead))
}

/// After the launch (the child confined, or failed): the job's ruleset is freed and the
/// next job's built, both on the TMPDIR helper thread, in one hand-over, off the
/// spawn's path. A run's own sandbox (`Resolved::per_run`) is resolved again at every
/// run, so no later job can use rules built for it: none are built, and its ruleset
/// is closed here.
pub fn after_launch(used: OwnedFd, resolved: &Arc<Resolved>, support: Support) {
    if resolved.per_run {
        drop(used);
        return;
    }
    let resolved = resolved.clone();
    on_helper(move || {
        drop(used);
        Ahead::prepare_next(&resolved, &support);
    });
}

fn abi_of(support: &Support) -> ABI {
    ABI::from(support.abi.min(i32::MAX as u32) as i32)
}

/// A ruleset built ahead, for the spare TMPDIR the next job will most likely be given,
/// and the sandbox of the job before: used only by a job of that very sandbox
/// (`Resolved::id`) given that very directory (device and inode), else dropped. One for
/// the process: services that take turns just build theirs at the spawn. Nothing a
/// job can write reaches it: it is built from the descriptors the sandbox holds and
/// the spare's, held since the spare was made in the private base
/// (`crate::sandbox::JobTmpDir`), and the spare's identity is checked again when it is
/// handed out (`JobTmpDir::take`) before it is compared here.
struct Ahead {
    resolved: u64,
    tmpdir: FileId,
    fd: OwnedFd,
}

static AHEAD: Mutex<Option<Ahead>> = Mutex::new(None);

impl Ahead {
    fn take(resolved: u64, tmpdir: FileId) -> Option<OwnedFd> {
        let mut slot = AHEAD.lock().unwrap_or_else(|e| e.into_inner());
        match slot.take() {
            Some(ahead) if ahead.resolved == resolved && ahead.tmpdir == tmpdir => Some(ahead.fd),
            _ => None,
        }
    }

    /// On the TMPDIR helper thread, after the spares the last `take` asked for: the
    /// rules of the next job of `resolved`, for the spare it will be given.
    fn prepare_next(resolved: &Resolved, support: &Support) {
        let Some(spare) = next_spare() else { return };
        if let Ok(rules) = job_rules(resolved, support, spare.fd()) {
            let mut slot = AHEAD.lock().unwrap_or_else(|e| e.into_inner());
            *slot = Some(Ahead {
                resolved: resolved.id,
                tmpdir: spare.id(),
                fd: rules,
            });
        }
    }
}

/// Every rule of a job of `resolved` whose TMPDIR is the directory `tmpdir`, but its
/// terminal's.
fn job_rules(resolved: &Resolved, support: &Support, tmpdir: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    let abi = abi_of(support);
    let fs_all = AccessFs::from_all(abi);
    let fs_read = AccessFs::from_read(abi);
    let network = effective_network(&resolved.network, support);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(fs_all)
        .map_err(|e| error("file system rights", e))?;
    if network != Network::On && support.abi >= ABI_TCP {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(|e| error("network rights", e))?;
    }
    if support.abi >= ABI_SCOPE {
        ruleset = ruleset.scope(Scope::from_all(abi)).map_err(|e| error("scoping", e))?;
    }
    let created: Option<OwnedFd> = ruleset.create().map_err(|e| error("creating the ruleset", e))?.into();
    let mut rules = Rules {
        fd: created.ok_or_else(|| error("ruleset", "the kernel made none"))?,
        abi,
    };
    let limited = resolved.read.is_some();
    for rule in shared_rules(limited, abi)? {
        rules.add(rule.fd.as_fd(), rule.access, &rule.path)?;
    }
    if resolved.shared_tmp {
        if let Some(tmp) = shared_tmp_rule(abi)? {
            rules.add(tmp.fd.as_fd(), tmp.access, &tmp.path)?;
        }
    }
    // From the descriptors held since the paths were resolved (`crate::sandbox::Anchor`),
    // never from names: nothing a job did since changes what these rules reach.
    if let Some(extra) = &resolved.read {
        for anchor in extra {
            rules.anchor(anchor, fs_read)?;
        }
        // Read whatever else is hidden or limited (`hidden.rs` grants them too).
        for anchor in &resolved.read_allow {
            rules.anchor(anchor, fs_read)?;
        }
    }
    let root_access = if resolved.read_only { fs_read } else { no_devices(abi) };
    rules.anchor(&resolved.root, root_access)?;
    for anchor in &resolved.write {
        rules.anchor(anchor, no_device_nodes(abi))?;
    }
    // The TMPDIR (a directory made by `crate::sandbox::JobTmpDir`, held since).
    rules.add(tmpdir, no_devices(abi), "the job's TMPDIR")?;
    // `unixSockets` (ABI 9: connecting to them; below, the supervisor decides and the
    // right is not handled). Each is the socket file held since it was resolved.
    if support.abi >= ABI_UNIX {
        for socket in &resolved.unix_sockets {
            rules.anchor(socket, AccessFs::ResolveUnix.into())?;
        }
    }
    if let Network::TcpPorts(ports) = &network {
        for &port in ports {
            rules.port(port, AccessNet::from_all(abi).bits())?;
        }
    }
    Ok(rules.fd)
}

/// Every right but making device nodes: what a `write` path grants. A block device
/// made in a writable directory (`mknod` of the disk under `$HOME`, or a loop device)
/// would read and write files past every rule, a character device (`/dev/kmsg`, `/dev/mem`)
/// reach the kernel; root's `CAP_MKNOD` is dropped too (`caps.rs`), this holds without
/// it. Linking or renaming an existing device node in needs the same rights, so none
/// can be brought in either. Device ioctls stay: a `write` path may be a device
/// directory the user gave on purpose (`/dev/pts` for `tmux`, docs/sandbox.md).
fn no_device_nodes(abi: ABI) -> BitFlags<AccessFs> {
    let mut access = AccessFs::from_all(abi);
    access.remove(AccessFs::MakeBlock | AccessFs::MakeChar);
    access
}

/// The project root, the job's `TMPDIR` and `/tmp`: no device nodes, and no device
/// ioctls either (no device of the job's lives there: its terminal and the null
/// devices have rules of their own).
fn no_devices(abi: ABI) -> BitFlags<AccessFs> {
    let mut access = no_device_nodes(abi);
    access.remove(AccessFs::IoctlDev);
    access
}

/// A rule every job of a kind gets, its path opened once for the process.
struct SharedRule {
    fd: PathFd,
    access: BitFlags<AccessFs>,
    path: String,
}

/// The rules that name the same paths for every job (system directories, devices):
/// their `O_PATH` descriptors are opened once and kept (close-on-exec, about thirty),
/// so a spawn only adds them to its ruleset. `limited`: reads are limited.
fn shared_rules(limited: bool, abi: ABI) -> io::Result<&'static [SharedRule]> {
    static ALL: OnceLock<Result<Vec<SharedRule>, String>> = OnceLock::new();
    static LIMITED: OnceLock<Result<Vec<SharedRule>, String>> = OnceLock::new();
    let cell = if limited { &LIMITED } else { &ALL };
    cell.get_or_init(|| open_shared_rules(limited, abi).map_err(|e| e.to_string()))
        .as_deref()
        .map_err(|e| io::Error::other(e.clone()))
}

fn open_shared_rules(limited: bool, abi: ABI) -> io::Result<Vec<SharedRule>> {
    let (fs_all, fs_read) = (AccessFs::from_all(abi), AccessFs::from_read(abi));
    let mut wanted: Vec<(PathBuf, BitFlags<AccessFs>)> = Vec::new();
    if limited {
        // The system paths include the readable devices.
        wanted.extend(system_read_paths().iter().map(|p| (PathBuf::from(p), fs_read)));
    } else {
        wanted.extend(top_level_entries().iter().map(|p| (p.clone(), fs_read)));
        // Listing any directory (`ls /`, `/dev`, `/home`): names, not contents.
        wanted.push((PathBuf::from("/"), AccessFs::ReadDir.into()));
        wanted.extend(READABLE_DEVICES.iter().map(|d| (PathBuf::from(d), fs_read)));
    }
    wanted.extend(WRITABLE_DEVICES.iter().map(|d| (PathBuf::from(d), fs_all)));
    let mut rules = Vec::new();
    for (path, access) in wanted {
        rules.extend(open_shared_rule(&path, access, abi)?);
    }
    Ok(rules)
}

/// The shared `/tmp`'s rule (see `crate::sandbox::SHARED_TMP` for why it is writable),
/// opened once; from ABI 9 without its unix sockets (X11's, other programs' servers).
/// Not given to a sandbox whose service keeps its files under `/tmp`
/// (`Resolved::shared_tmp`).
fn shared_tmp_rule(abi: ABI) -> io::Result<Option<&'static SharedRule>> {
    static TMP: OnceLock<Result<Option<SharedRule>, String>> = OnceLock::new();
    let rule = TMP.get_or_init(|| {
        let mut access = no_devices(abi);
        access.remove(AccessFs::ResolveUnix);
        open_shared_rule(Path::new(SHARED_TMP), access, abi).map_err(|e| e.to_string())
    });
    rule.as_ref()
        .map(Option::as_ref)
        .map_err(|e| io::Error::other(e.clone()))
}

/// A rule on `path` if it exists (system directories differ between systems: what is
/// missing is left out).
fn open_shared_rule(path: &Path, access: BitFlags<AccessFs>, abi: ABI) -> io::Result<Option<SharedRule>> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(None);
    };
    let access = if meta.is_dir() {
        access
    } else {
        access & AccessFs::from_file(abi)
    };
    let fd = PathFd::new(path).map_err(|e| error(&path.display().to_string(), e))?;
    Ok(Some(SharedRule {
        fd,
        access,
        path: path.display().to_string(),
    }))
}

/// Adding rules. The `landlock` crate builds the ruleset (which rights each ABI has,
/// checked as a hard requirement) and opens the path descriptors; the rules themselves
/// are added here with `landlock_add_rule`, because the crate checks each descriptor's
/// type with an `fstat` on every add, which doubled the system calls of a spawn: the
/// types are known here (checked once, when the shared descriptors are opened).
struct Rules {
    fd: OwnedFd,
    abi: ABI,
}

/// `struct landlock_path_beneath_attr` (linux/landlock.h): packed.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// `struct landlock_net_port_attr`.
#[repr(C)]
struct NetPortAttr {
    allowed_access: u64,
    port: u64,
}

const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
const LANDLOCK_RULE_NET_PORT: libc::c_int = 2;

impl Rules {
    /// A rule on a held directory or file (its type known since it was opened).
    fn anchor(&mut self, anchor: &Anchor, access: BitFlags<AccessFs>) -> io::Result<()> {
        let access = if anchor.is_dir() {
            access
        } else {
            access & AccessFs::from_file(self.abi)
        };
        // The path only names the rule in an error.
        self.add(anchor.fd(), access, &anchor.path().display().to_string())
    }

    /// A rule on an open file or directory; `access` already fits its type.
    fn add(&mut self, parent: BorrowedFd<'_>, access: BitFlags<AccessFs>, what: &str) -> io::Result<()> {
        if access.is_empty() {
            return Ok(());
        }
        let attr = PathBeneathAttr {
            allowed_access: access.bits(),
            parent_fd: parent.as_raw_fd(),
        };
        self.add_raw(
            LANDLOCK_RULE_PATH_BENEATH,
            (&attr as *const PathBeneathAttr).cast(),
            what,
        )
    }

    fn port(&mut self, port: u16, access: u64) -> io::Result<()> {
        let attr = NetPortAttr {
            allowed_access: access,
            port: u64::from(port),
        };
        self.add_raw(
            LANDLOCK_RULE_NET_PORT,
            (&attr as *const NetPortAttr).cast(),
            &format!("port {port}"),
        )
    }

    fn add_raw(&mut self, kind: libc::c_int, attr: *const libc::c_void, what: &str) -> io::Result<()> {
        // SAFETY: `attr` points to the live attribute of `kind`; the ruleset is ours.
        let done = unsafe { libc::syscall(libc::SYS_landlock_add_rule, self.fd.as_raw_fd(), kind, attr, 0u32) };
        if done < 0 {
            return Err(error(what, io::Error::last_os_error()));
        }
        Ok(())
    }
}

/// Every entry of `/` but `/dev` and the symlinks, read once: a directory made at the
/// top level later is not readable by jobs (fail closed). A symlink there (`/bin` to
/// `usr/bin` on merged-/usr systems) leads under another entry, whose rule covers it
/// (a rule on it would be a second rule on the same tree: one more for every spawn to
/// copy and every file access to look up), or under `/dev`, which is left out on
/// purpose.
fn top_level_entries() -> &'static [PathBuf] {
    static ENTRIES: OnceLock<Vec<PathBuf>> = OnceLock::new();
    ENTRIES.get_or_init(|| {
        let Ok(dir) = std::fs::read_dir("/") else {
            return Vec::new();
        };
        let mut entries: Vec<PathBuf> = dir
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name() != "dev")
            .filter(|e| e.file_type().is_ok_and(|t| !t.is_symlink()))
            .map(|e| e.path())
            .collect();
        entries.sort();
        entries
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::JobTmpDir;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::time::{Duration, Instant};

    /// The tests that fill or empty the one `AHEAD` slot take turns.
    static SLOT: Mutex<()> = Mutex::new(());

    fn serial() -> std::sync::MutexGuard<'static, ()> {
        SLOT.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A ruleset built ahead is used only by a job of the same sandbox given the same
    /// TMPDIR: another sandbox's rules, or rules naming another directory, never.
    #[test]
    fn a_ruleset_built_ahead_goes_only_to_its_own_sandbox_and_directory() {
        let _serial = serial();
        let support = super::super::support().expect("Landlock");
        let dir = tempfile::tempdir().expect("tempdir");
        let root = Arc::new(Anchor::open(&dir.path().canonicalize().expect("canonical")).expect("root"));
        let resolved = crate::sandbox::resolve(&Default::default(), &root).expect("resolve");
        let tmpdir = crate::sandbox::JobTmpDir::take().expect("tmpdir");
        let put = || {
            let fd = job_rules(&resolved, &support, tmpdir.anchor().expect("held").fd()).expect("rules");
            *AHEAD.lock().expect("lock") = Some(Ahead {
                resolved: resolved.id,
                tmpdir: tmpdir.anchor().expect("held").id(),
                fd,
            });
        };
        put();
        assert!(Ahead::take(resolved.id + 1_000_000, tmpdir.anchor().expect("held").id()).is_none());
        assert!(
            Ahead::take(resolved.id, tmpdir.anchor().expect("held").id()).is_none(),
            "dropped once refused"
        );
        put();
        let (dev, ino) = tmpdir.anchor().expect("held").id();
        assert!(Ahead::take(resolved.id, (dev, ino + 1)).is_none());
        put();
        assert!(Ahead::take(resolved.id, tmpdir.anchor().expect("held").id()).is_some());
    }

    /// Whether a new file can be made in each of `dirs` by a process confined by
    /// `ruleset`: a forked child applies it (as the spawn child does) and tries, and
    /// the kernel answers. Bit `i` of the answer is set when `dirs[i]` was writable.
    fn writable_under(ruleset: &OwnedFd, dirs: &[&Path]) -> u32 {
        let files: Vec<CString> = dirs
            .iter()
            .map(|d| CString::new(d.join("made-by-test").as_os_str().as_bytes()).expect("path"))
            .collect();
        let bits = super::super::confined_child::answer(ruleset, || {
            let mut bits = 0;
            for (i, file) in files.iter().enumerate() {
                // SAFETY: a NUL-terminated path made before the fork; the descriptor
                // closed is the one just opened.
                unsafe {
                    let fd = libc::open(file.as_ptr(), libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC, 0o600);
                    if fd >= 0 {
                        bits |= 1 << i;
                        libc::close(fd);
                        libc::unlink(file.as_ptr());
                    }
                }
            }
            bits
        });
        bits as u32
    }

    /// Until the helper thread has put rules of `resolved` in the slot (or 30 s, on a
    /// machine too busy for it: the caller then finds none and builds its own).
    fn wait_for_ahead(resolved: u64) {
        let until = Instant::now() + Duration::from_secs(30);
        while Instant::now() < until {
            if AHEAD
                .lock()
                .expect("lock")
                .as_ref()
                .is_some_and(|a| a.resolved == resolved)
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Jobs of one sandbox started one after another: after the first, each finds its
    /// rules built ahead (the spawn's path adds only the terminal's), and those rules
    /// let it write its own TMPDIR and not another job's, however the TMPDIRs are
    /// handed out: a job given another directory than the one the rules were built
    /// for builds its own, never takes those. Judged by the kernel, in a child
    /// confined by the very ruleset the job would get.
    #[test]
    fn jobs_get_rules_built_ahead_for_their_own_tmpdir_and_no_other() {
        let _serial = serial();
        let support = super::super::support().expect("Landlock");
        let dir = tempfile::tempdir().expect("tempdir");
        let root = Arc::new(Anchor::open(&dir.path().canonicalize().expect("canonical")).expect("root"));
        let resolved = Arc::new(crate::sandbox::resolve(&Default::default(), &root).expect("resolve"));
        let launch = |tmpdir: &JobTmpDir, others: &[&JobTmpDir]| -> bool {
            let job = JobSandbox {
                resolved: &resolved,
                tmpdir,
                support,
            };
            let (fd, ahead) = ruleset(&job, None).expect("ruleset");
            let mut dirs = vec![tmpdir.path()];
            dirs.extend(others.iter().map(|o| o.path()));
            assert_eq!(
                writable_under(&fd, &dirs),
                1,
                "only the job's own TMPDIR is writable (built ahead: {ahead}; {dirs:?})"
            );
            after_launch(fd, &resolved, support);
            ahead
        };
        let first = JobTmpDir::take().expect("tmpdir");
        launch(&first, &[]);
        let mut held = vec![first];
        let mut ahead = 0;
        for _ in 0..6 {
            wait_for_ahead(resolved.id);
            let tmpdir = JobTmpDir::take().expect("tmpdir");
            let others: Vec<&JobTmpDir> = held.iter().collect();
            ahead += usize::from(launch(&tmpdir, &others));
            held.push(tmpdir);
        }
        // Rules built for the next spare, and the spares handed out the other way
        // round: the job given the second never gets the first's rules.
        wait_for_ahead(resolved.id);
        let (a, b) = (JobTmpDir::take().expect("a"), JobTmpDir::take().expect("b"));
        let mut others: Vec<&JobTmpDir> = held.iter().collect();
        others.push(&a);
        assert!(
            !launch(&b, &others),
            "rules built ahead for another directory were used"
        );
        assert!(ahead >= 1, "no job found its rules built ahead");
        // Unconfined (no ruleset at all), each directory is writable: the check can fail.
        for d in held.iter().chain([&a, &b]) {
            let file = d.path().join("made-by-test");
            std::fs::write(&file, b"x").expect("unconfined write");
            std::fs::remove_file(&file).expect("remove");
        }
    }
}
