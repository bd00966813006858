//! Containment by cgroup v2: every job runs in a cgroup of its own, so whatever it
//! starts stays in it however it detaches (`setsid`, a cleared environment, a double
//! fork, closed descriptors): a process cannot leave a cgroup by forking, only by
//! writing itself into another one. Ending a job is a write of `1` to its
//! `cgroup.kill` (Linux 5.14+), and the cgroup's `cgroup.procs` names every process it
//! holds. Why cgroups and not a subreaper or pidfds, with the measurements: the section
//! "Containment" of docs/reliability.md.
//!
//! Layout, beneath the cgroup this process runs in (found in `/proc/self/cgroup`, on
//! the cgroup2 mount found in `/proc/self/mountinfo`):
//!
//! ```text
//! <our cgroup>/native-shell-<pid>-<start ticks>/     one per Node process (the "parent")
//!     job-1/  job-2/  ...                             one per job, removed with the job
//! ```
//!
//! The job's first process is created inside its cgroup (`clone3` with
//! `CLONE_INTO_CGROUP`, see `super::clone3`): moving a process by writing
//! `cgroup.procs` waits for an RCU grace period (about 11 ms here, measured), created
//! inside it costs nothing measurable. The watchdog (`super::watchdog`) holds the
//! parent's path and kills the whole subtree through its `cgroup.kill` when Node dies.
//!
//! Our cgroup is used when we may write it (root, a desktop app's scope, a subtree
//! delegated to this user by a container runtime or systemd's `Delegate=yes`). When it
//! is not (an SSH session's scope is root's), the user's systemd manager is asked for a
//! delegated scope of our own (`super::systemd_scope`). Where none of that works (no
//! cgroup2 mount, no systemd, no `cgroup.kill`, `clone3` refused by a seccomp filter, or
//! `NATIVE_SHELL_CONTAINMENT=off`), jobs are held by their process tree only: found by
//! session, group, parent links and environment marker (`super::process_tree`), each
//! job's first process a subreaper (`crate::platform::unix::launch`). The mode is
//! reported (`mode`); docs/reliability.md, "Containment", has what each mode stops.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::cgroup_events::{populated, Events, LATEST_EVENTS};
use crate::base::sync::lock;
use crate::platform::ContainmentMode;

/// Set to `off` (in Node's environment, before the first job) to run without cgroups:
/// the fallback path, for tests and for systems where cgroups misbehave.
pub const SWITCH: &str = "NATIVE_SHELL_CONTAINMENT";

/// The per-process parent cgroup, if containment is available.
static PARENT: OnceLock<Option<PathBuf>> = OnceLock::new();
/// Where the cgroup2 file system the parent lives on is mounted.
static MOUNT: OnceLock<PathBuf> = OnceLock::new();
/// Cleared when a launch into a cgroup was refused: later jobs are not contained.
static USABLE: AtomicBool = AtomicBool::new(true);
static NEXT_JOB: AtomicU64 = AtomicU64::new(1);
/// Job cgroups that could not be removed yet (a process was still dying in one).
static LEFTOVER: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Empty job cgroups of finished jobs, for the next jobs: creating the first process
/// in a new cgroup costs 0.2–0.5 ms more than in one that held processes before, and
/// the `mkdir` ~70 µs (measured; docs/reliability.md, "Containment").
static SPARE: Mutex<Vec<Spare>> = Mutex::new(Vec::new());
const MAX_SPARE: usize = 16;

/// A spare cgroup, with its `cgroup.events` still open from the check that found it
/// empty: checked again when taken, by a `pread` of that descriptor (about 1 µs) where
/// opening the file anew took about 10 (a kernfs open and close), on the spawn's path
/// on the JS thread. At most `MAX_SPARE` descriptors per process, and one more for
/// the latest job (`LATEST_EVENTS`).
struct Spare {
    path: PathBuf,
    events: Option<Events>,
}

impl Spare {
    fn populated(&self) -> bool {
        match &self.events {
            Some(events) => events.populated(),
            None => populated(&self.path),
        }
    }
}

/// The parent cgroup of this process's jobs, made on first use; None when jobs cannot
/// be contained here.
pub fn parent() -> Option<&'static Path> {
    PARENT.get_or_init(make_parent).as_deref()
}

fn make_parent() -> Option<PathBuf> {
    if std::env::var_os(SWITCH).is_some_and(|v| v == "off") {
        return None;
    }
    let mount = cgroup2_mount(&fs::read("/proc/self/mountinfo").ok()?)?;
    let _ = MOUNT.set(mount.clone());
    let current = || own_cgroup(&fs::read("/proc/self/cgroup").ok()?);
    let me = std::process::id();
    let name = format!("native-shell-{me}-{}", super::process_tree::start_ticks(me as i32));
    // Our own cgroup, when it is ours to write (root; a desktop app's scope; a subtree
    // a container runtime or `Delegate=yes` handed to this user); else a delegated
    // scope from the user's service manager (`super::systemd_scope`).
    let mut own = current()?;
    let parent = match make_under(&mount, &own, &name) {
        Some(parent) => parent,
        None => {
            own = super::systemd_scope::move_into_delegated_scope(current)?;
            make_under(&mount, &own, &name)?
        }
    };
    // cgroup.kill exists only in non-root cgroups of kernels 5.14+; without it the
    // cgroup could hold the jobs but not end them in one step.
    if !parent.join("cgroup.kill").exists() {
        let _ = fs::remove_dir(&parent);
        return None;
    }
    Some(parent)
}

/// Makes the per-process parent `name` in the cgroup `own` (as `/proc/self/cgroup`
/// names it) on `mount`, after removing what dead processes left there; `None` when
/// that cgroup is not ours to write.
fn make_under(mount: &Path, own: &Path, name: &str) -> Option<PathBuf> {
    let base = mount.join(own.strip_prefix("/").unwrap_or(own));
    sweep_stale(&base);
    let parent = base.join(name);
    match fs::create_dir(&parent) {
        Ok(()) => Some(parent),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Some(parent),
        Err(_) => None,
    }
}

/// The mount point of the first cgroup2 file system in `/proc/self/mountinfo`.
fn cgroup2_mount(mountinfo: &[u8]) -> Option<PathBuf> {
    mountinfo.split(|&b| b == b'\n').find_map(|line| {
        let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        // The optional fields end with "-", followed by the file system type.
        let dash = fields.iter().position(|f| *f == b"-")?;
        if fields.get(dash + 1) != Some(&&b"cgroup2"[..]) {
            return None;
        }
        Some(PathBuf::from(OsStr::from_bytes(&unescape(fields.get(4)?))))
    })
}

/// mountinfo writes space, tab, newline and backslash as `\ooo` octal escapes.
fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let octal = field
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (field[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// Our cgroup in the unified hierarchy: the `0::<path>` line of `/proc/self/cgroup`.
fn own_cgroup(text: &[u8]) -> Option<PathBuf> {
    text.split(|&b| b == b'\n')
        .find_map(|line| line.strip_prefix(b"0::"))
        .filter(|path| path.starts_with(b"/") && !path.ends_with(b" (deleted)"))
        .map(|path| PathBuf::from(OsStr::from_bytes(path)))
}

/// Parents left by processes that died with their watchdog (both killed at once):
/// empty job cgroups and the parent are removed; cgroups still holding processes are
/// killed first, since no live service can reach those processes any more.
fn sweep_stale(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("native-shell-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        if super::process_tree::is_alive(pid) {
            continue;
        }
        let stale = entry.path();
        kill(&stale);
        if let Ok(jobs) = fs::read_dir(&stale) {
            for job in jobs.flatten().filter(|j| j.path().is_dir()) {
                let _ = fs::remove_dir(job.path());
            }
        }
        let _ = fs::remove_dir(&stale);
    }
}

/// Writes `1` to the cgroup's `cgroup.kill`: SIGKILL to every process in it and in
/// the cgroups below it, including ones forking at that moment.
fn kill(cgroup: &Path) -> bool {
    fs::OpenOptions::new()
        .write(true)
        .open(cgroup.join("cgroup.kill"))
        .and_then(|mut f| f.write_all(b"1"))
        .is_ok()
}

/// The pids in a cgroup (not those of cgroups below it; jobs make none).
fn procs(cgroup: &Path) -> Vec<i32> {
    fs::read_to_string(cgroup.join("cgroup.procs"))
        .map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// One job's cgroup; removed when the last copy of its `Containment` goes (the job is
/// forgotten), after killing whatever is still in it.
#[derive(Debug)]
struct JobCgroup {
    path: PathBuf,
    /// The cgroup directory, open only until the job's process is created in it.
    launch: Mutex<Option<OwnedFd>>,
    /// The job's process was created in it (not so if the kernel refused the launch).
    joined: AtomicBool,
    /// `LIVE`, then `KILLED` or `RELEASED`, never both (one compare-and-swap decides).
    state: AtomicU8,
}

const LIVE: u8 = 0;
/// Its `cgroup.kill` was written. Such a cgroup is never reused: this kernel (6.18)
/// SIGKILLs every process created in it by `CLONE_INTO_CGROUP` afterwards (seen by the
/// torture suite: every job after one killed by escalation died at birth).
const KILLED: u8 = 1;
/// Handed back empty after the job's end (`Containment::release_if_empty`): it may hold
/// another job's processes now.
const RELEASED: u8 = 2;

impl Drop for JobCgroup {
    fn drop(&mut self) {
        if self.state.load(Ordering::Acquire) == RELEASED {
            return;
        }
        if populated(&self.path) {
            kill(&self.path);
        }
        if fs::remove_dir(&self.path).is_err() && self.path.exists() {
            // A killed process leaves its cgroup only once it has exited; the next
            // job's creation tries again (and the watchdog at the end).
            lock(&LEFTOVER).push(self.path.clone());
        }
    }
}

/// What holds a job's processes together: its cgroup, or nothing (then the session,
/// group, parent links and marker find them; see `super::process_tree`).
#[derive(Clone, Debug, Default)]
pub struct Containment(Option<Arc<JobCgroup>>);

impl Containment {
    /// A new, empty cgroup for a job about to start, or none.
    pub fn for_new_job() -> Self {
        let Some(parent) = parent().filter(|_| USABLE.load(Ordering::Relaxed)) else {
            return Self(None);
        };
        remove_leftovers();
        let spare = lock(&SPARE).pop();
        // A spare is empty: nothing can enter an empty cgroup but by a write to its
        // cgroup.procs; checked anyway, since another job's process there would be
        // taken for this job's.
        let path = match spare.filter(|spare| !spare.populated()) {
            Some(Spare { path, events }) => {
                // The one it replaces (a job still running) is closed here, after the
                // lock: that job opens its file at its end, as every job did before.
                let _replaced = events.and_then(|events| LATEST_EVENTS.keep(&path, events));
                path
            }
            None => {
                let path = parent.join(format!("job-{}", NEXT_JOB.fetch_add(1, Ordering::Relaxed)));
                if fs::create_dir(&path).is_err() {
                    return Self(None);
                }
                path
            }
        };
        match File::open(&path) {
            Ok(dir) => Self(Some(Arc::new(JobCgroup {
                path,
                launch: Mutex::new(Some(dir.into())),
                joined: AtomicBool::new(false),
                state: AtomicU8::new(LIVE),
            }))),
            Err(_) => {
                let _ = fs::remove_dir(&path);
                Self(None)
            }
        }
    }

    /// The descriptor the job's first process is created in (`CLONE_INTO_CGROUP`).
    pub fn launch_fd(&self) -> Option<RawFd> {
        let cgroup = self.0.as_ref()?;
        lock(&cgroup.launch).as_ref().map(AsRawFd::as_raw_fd)
    }

    /// The process was created (it is in the cgroup) or not (the launch fell back to
    /// a plain clone because the kernel refused: nothing is contained from now on).
    pub fn launched(&self, contained: bool) {
        if let Some(cgroup) = &self.0 {
            lock(&cgroup.launch).take();
            cgroup.joined.store(contained, Ordering::Release);
        }
        if !contained {
            USABLE.store(false, Ordering::Relaxed);
        }
    }

    /// The job's cgroup, once its process was created in it, until it is released.
    fn joined(&self) -> Option<&JobCgroup> {
        self.0
            .as_deref()
            .filter(|c| c.joined.load(Ordering::Acquire) && c.state.load(Ordering::Acquire) != RELEASED)
    }

    /// After the job's own process has ended: if nothing is left in its cgroup, nothing
    /// can come back (no member is left to fork), so the cgroup goes to the spares for
    /// a later job and this job is uncontained from now on (an empty job: the search
    /// finds nothing either). Returns whether something is left.
    pub fn release_if_empty(&self) -> bool {
        let Some(cgroup) = self.joined() else { return false };
        let events = LATEST_EVENTS
            .take_for(&cgroup.path)
            .or_else(|| Events::open(&cgroup.path));
        if events.as_ref().is_some_and(Events::populated) {
            return true;
        }
        let released = cgroup
            .state
            .compare_exchange(LIVE, RELEASED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        // A killed one stays with its job and is removed with it.
        if released {
            let mut spare = lock(&SPARE);
            if spare.len() < MAX_SPARE {
                spare.push(Spare {
                    path: cgroup.path.clone(),
                    events,
                });
            } else if fs::remove_dir(&cgroup.path).is_err() && cgroup.path.exists() {
                lock(&LEFTOVER).push(cgroup.path.clone());
            }
        }
        false
    }

    /// What held the job when it started: its cgroup, or only its process tree (no
    /// cgroup could be had, or the kernel refused to start the process in it).
    pub fn mode(&self) -> ContainmentMode {
        match &self.0 {
            Some(cgroup) if cgroup.joined.load(Ordering::Acquire) => ContainmentMode::Cgroup,
            _ => ContainmentMode::ProcessTree,
        }
    }

    /// The job's process was created in its cgroup: all it starts is held there.
    pub fn is_contained(&self) -> bool {
        self.joined().is_some()
    }

    /// Every process in the job's cgroup, however it detached.
    pub fn pids(&self) -> Vec<i32> {
        let Some(cgroup) = self.joined() else { return Vec::new() };
        let pids = procs(&cgroup.path);
        // Released meanwhile (it was empty then): what is in it now is a later job's.
        if cgroup.state.load(Ordering::Acquire) == RELEASED {
            return Vec::new();
        }
        pids
    }

    /// Whether a process is left in the job's cgroup.
    pub fn holds_processes(&self) -> bool {
        self.joined().is_some_and(|c| populated(&c.path))
    }

    /// SIGKILL to everything in the job's cgroup.
    pub fn kill(&self) {
        if let Some(cgroup) = self.joined() {
            let state = cgroup
                .state
                .compare_exchange(LIVE, KILLED, Ordering::AcqRel, Ordering::Acquire);
            if matches!(state, Ok(_) | Err(KILLED)) {
                kill(&cgroup.path);
            }
        }
    }

    /// A job's cgroup made by this process's previous image (a restart in place,
    /// src/daemon/upgrade/): taken back as joined, so the job is held, listed, killed
    /// and removed as before. Only a directory right below this process's parent
    /// cgroup is taken (the hand-over names it, and nothing else may be killed or
    /// removed through it); the job counter goes on past its number, so no later job
    /// is given its name.
    pub fn adopt(path: &Path) -> Option<Self> {
        let number = job_cgroup_number(path)?;
        NEXT_JOB.fetch_max(number + 1, Ordering::Relaxed);
        Some(Self(Some(Arc::new(JobCgroup {
            path: path.to_path_buf(),
            launch: Mutex::new(None),
            joined: AtomicBool::new(true),
            state: AtomicU8::new(LIVE),
        }))))
    }

    /// The cgroup's path, for the job list.
    pub fn path(&self) -> Option<&Path> {
        self.joined().map(|c| c.path.as_path())
    }
}

/// The number of a job cgroup of this process (`<parent>/job-N`, a directory), or
/// `None` when `path` is not one. Reads only: a restart checks the hand-over with it
/// before anything is taken.
pub fn job_cgroup_number(path: &Path) -> Option<u64> {
    let parent = parent()?;
    let name = path.strip_prefix(parent).ok()?.to_str()?;
    let number: u64 = name.strip_prefix("job-")?.parse().ok()?;
    path.is_dir().then_some(number)
}

/// What the next job will be held by: a cgroup when one could be had here and no
/// launch into one was refused, else its process tree.
pub fn mode() -> ContainmentMode {
    if parent().is_some() && USABLE.load(Ordering::Relaxed) {
        ContainmentMode::Cgroup
    } else {
        ContainmentMode::ProcessTree
    }
}

/// Whether the cgroup `relative` (as the `0::` line of /proc/PID/cgroup names it) is
/// this process's jobs' parent cgroup or one below it: the process in it is one of our
/// jobs' (src/platform/linux/job_peers.rs).
pub fn holds_path(relative: &Path) -> bool {
    let (Some(parent), Some(mount)) = (parent(), MOUNT.get()) else {
        return false;
    };
    mount
        .join(relative.strip_prefix("/").unwrap_or(relative))
        .starts_with(parent)
}

/// Whether the cgroup whose id is `id` (its directory's inode number, which is what
/// the kernel gives as a cgroup's id) is our jobs' parent or a cgroup below it (the
/// job cgroups, and any an unsandboxed job made in its own).
pub fn holds_id(id: u64) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(parent) = parent() else { return false };
    let mut pending = vec![parent.to_path_buf()];
    while let Some(dir) = pending.pop() {
        if fs::metadata(&dir).is_ok_and(|m| m.ino() == id) {
            return true;
        }
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        pending.extend(
            entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path()),
        );
    }
    false
}

/// Whether every job so far was created in a cgroup of its own (none fell back to the
/// process tree).
pub fn every_job_contained() -> bool {
    parent().is_some() && USABLE.load(Ordering::Relaxed)
}

/// The cgroup a process is in, as the `0::` line of its /proc/PID/cgroup names it.
pub fn cgroup_of(pid: i32) -> Option<PathBuf> {
    own_cgroup(&fs::read(format!("/proc/{pid}/cgroup")).ok()?)
}

fn remove_leftovers() {
    let mut left = lock(&LEFTOVER);
    left.retain(|path| fs::remove_dir(path).is_err() && path.exists());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_cgroup2_mount_among_v1_ones() {
        let info = b"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
            35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
            41 31 0:38 / /sys/fs/cgroup/uni\\040fied rw,relatime shared:9 - cgroup2 cgroup2 rw\n";
        assert_eq!(cgroup2_mount(info), Some(PathBuf::from("/sys/fs/cgroup/uni fied")));
        assert_eq!(cgroup2_mount(b"31 23 0:28 / /sys rw - sysfs sysfs rw\n"), None);
    }

    #[test]
    fn reads_the_unified_line_of_proc_self_cgroup() {
        let text = b"4:memory:/x\n0::/user.slice/user-1000.slice/app.scope\n";
        assert_eq!(
            own_cgroup(text),
            Some(PathBuf::from("/user.slice/user-1000.slice/app.scope"))
        );
        assert_eq!(own_cgroup(b"4:memory:/x\n"), None);
        assert_eq!(own_cgroup(b"0::/gone (deleted)\n"), None);
    }

    /// A `cgroup.events` held open tells the cgroup as it is at each read, not as it
    /// was when opened: a process moved in shows at the next read.
    #[test]
    fn a_held_events_file_reads_the_cgroup_as_it_is_now() {
        let Some(parent) = parent() else {
            eprintln!("skipped: no cgroup this process may write");
            return;
        };
        let cgroup = parent.join(format!("held-events-{}", std::process::id()));
        fs::create_dir(&cgroup).expect("a test cgroup");
        let events = Events::open(&cgroup).expect("its cgroup.events");
        assert!(!events.populated());
        let mut sleeper = std::process::Command::new("sleep").arg("60").spawn().expect("sleep");
        fs::write(cgroup.join("cgroup.procs"), sleeper.id().to_string()).expect("moved in");
        assert!(events.populated(), "the held descriptor still says empty");
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        let emptied = (0..500).any(|_| {
            let empty = !events.populated();
            if !empty {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            empty
        });
        let _ = fs::remove_dir(&cgroup);
        assert!(emptied, "the held descriptor still says populated");
    }

    #[test]
    fn unescapes_octal_only() {
        assert_eq!(unescape(b"a\\134b\\0x"), b"a\\b\\0x".to_vec());
    }
}
