//! The platform layer: everything that differs between Linux, macOS and Windows, behind
//! one set of names. Everything above it (service, jobs, output, waits, policy, binding)
//! is shared and uses only what this module exports.
//!
//! Each backend provides the same items (checked by the compiler: the shared code names
//! them through this module, whichever backend is built):
//!
//! | item | what it is |
//! |---|---|
//! | `spawn(&SpawnSpec) -> io::Result<Spawned>` | starts a job's process in its own session (Unix) or Job Object (Windows), on a PTY or on pipes |
//! | `ChildProcess::wait().await -> io::Result<Exit>` | the exit, as an event (no thread per job where the OS allows) |
//! | `Terminal` | a PTY: `read(&mut ReadBuffer).await -> Read` (each chunk then `processed()` once it is in the job), `write_all(&[u8]).await`, `write_some(&[u8]) -> usize` (never blocks), `resize(cols, rows)`, `input_state(pid, name)` |
//! | `PipeReader::read(&mut [u8]).await`, `PipeWriter::write_all(&[u8]).await` | the pipes of a pipes-mode job |
//! | `Containment` (`.mode()`), `containment_mode()` | what holds a job's processes together (a cgroup per job on Linux where one can be had, else the process tree with subreapers; the process tree on macOS; a Job Object on Windows), and what will hold the next job |
//! | `JobIdentity`, `ProcInfo`, `Snapshot::take(since)`, `Snapshot::members(&JobIdentity)`, `job_processes`, `background_roots`, `detached_roots` | finding a job's processes, what it left behind (exited) and what left it (running) |
//! | `end_processes(&JobIdentity, &[ProcInfo], Ending)`, `is_alive(pid)`, `group_exists(pid)`, `anything_left(&JobIdentity)`, `start_ticks(pid)` | ending them |
//! | `watchdog::ensure_started(owner_entry)` | ends every job when the host dies, however it dies |
//! | `sandboxed_job_gone(&watch)` (Unix) | no process of a sandboxed job is left anywhere, from the descriptor its launch gave its TMPDIR (Linux, where no cgroup holds the job) |
//! | `program_name(pid)` | the name of the program a pid runs |
//! | `tcp_peer(local, peer)`, `is_job_process(pid)`, `is_job_socket(inode, cgroup)`, `become_subreaper()`, `reap_orphans()` | who is behind a connection to the daemon: a local TCP client's uid, socket and cgroup, and whether a client is one of our jobs (Linux; elsewhere the TCP lookup is `Unsupported` and jobs are not told apart) |
//! | `open_directory(path) -> io::Result<File>`, `opened_path(&File)` | the job's working directory, opened and verified |
//!
//! Where a platform cannot give a guarantee, its backend says so at the top of its
//! module and in docs/platforms.md.

mod buffer;

use std::ffi::OsString;
use std::fs::File;
use std::path::Path;

#[cfg(unix)]
mod unix;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as os;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as os;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;

pub use buffer::{Read, ReadBuffer};
#[cfg(windows)]
pub use no_git_guard::{GitGuard, GitHold};
/// User and group names by id (the daemon's file calls: unix/accounts.rs).
#[cfg(unix)]
pub use unix::accounts::{group_name, user_name};
/// The guard's record and a job's hold across a restart in place.
#[cfg(target_os = "linux")]
pub use unix::git_guard::{CarriedGitGuard, CarriedGitHold};
/// Git's hooks and configuration, put back after a sandboxed job (unix/git_guard/).
#[cfg(unix)]
pub use unix::git_guard::{GitGuard, GitHold};
/// A terminal opened ahead for a service's next PTY job (unix/pty.rs).
#[cfg(unix)]
pub use unix::pty::SparePty;
/// Windows opens nothing ahead: ConPTY's pseudoconsole is made with its process.
#[cfg(windows)]
#[derive(Default)]
pub struct SparePty;
#[cfg(windows)]
impl SparePty {
    pub fn clear(&self) {}
}
/// A wait for room to write on a descriptor the reactor watches for reading only (the
/// daemon's connections: unix/write_room.rs).
#[cfg(unix)]
pub use unix::write_room::room as write_room;

/// Windows runs no sandboxed job (`SANDBOX_UNAVAILABLE`): nothing to guard.
#[cfg(windows)]
mod no_git_guard {
    use std::path::Path;
    use std::sync::Arc;

    pub struct GitGuard;
    #[derive(Debug)]
    pub struct GitHold;

    impl GitGuard {
        pub fn new(_root: &Path) -> Arc<Self> {
            Arc::new(Self)
        }

        pub fn hold(self: &Arc<Self>) -> Result<Option<Arc<GitHold>>, String> {
            Ok(None)
        }
    }

    impl GitHold {
        pub fn check(&self) {}
        pub fn release(&self) {}
        pub fn restored(&self) -> Vec<String> {
            Vec::new()
        }
    }
}
/// A job cgroup of this process, by path (a restart in place takes it back).
#[cfg(target_os = "linux")]
pub use os::job_cgroup_number;
/// The unix socket supervisor across a restart in place (src/job/sandbox_carry.rs).
#[cfg(target_os = "linux")]
pub use os::sandbox::supervisor_handover;
#[cfg(target_os = "linux")]
pub use os::{anything_left, anything_left_after_reap};

/// Whether the job's process group (or, where there is one, its cgroup) still holds a
/// process: a job that ended leaving nothing is forgotten without a search.
#[cfg(not(target_os = "linux"))]
pub fn anything_left(job: &JobIdentity<'_>) -> bool {
    group_exists(job.pid)
}

/// `anything_left`, once the job's own process is known reaped.
#[cfg(not(target_os = "linux"))]
pub fn anything_left_after_reap(job: &JobIdentity<'_>) -> bool {
    anything_left(job)
}
#[cfg(target_os = "linux")]
pub use linux::process_tree::{boot_clock, start_ticks_between};

pub use os::{
    background_roots, containment_mode, detached_roots, end_processes, group_exists, is_alive, job_processes,
    open_directory, opened_path, program_name, spawn, start_ticks, watchdog, ChildProcess, Containment, PipeReader,
    PipeWriter, ProcInfo, Snapshot, Terminal,
};

/// Elsewhere the start time is always asked of the system (`start_ticks_between`).
#[cfg(not(target_os = "linux"))]
pub fn boot_clock() -> u64 {
    0
}

/// Elsewhere: `start_ticks`.
#[cfg(not(target_os = "linux"))]
pub fn start_ticks_between(pid: i32, _before: u64, _after: u64) -> u64 {
    start_ticks(pid)
}

/// Lowers the calling thread's scheduling weight by `by` nice steps, so that under
/// contention for the cores the JS thread (and everything else at the default weight)
/// wins one first (`crate::job::flood_threads`). Linux only: elsewhere a nice value is
/// the whole process's, and this does nothing. A thread that calls it must never start
/// a process (the process would inherit the nice value) and cannot undo it.
#[cfg(target_os = "linux")]
pub use linux::thread_priority::lower_current_thread;

/// See the Linux one: a no-op here.
#[cfg(not(target_os = "linux"))]
pub fn lower_current_thread(_by: i32) {}

/// Lets the calling thread's wake-ups wait for a free core instead of preempting a
/// running thread, at the default weight (Linux: `SCHED_BATCH`;
/// `linux::thread_priority`). Elsewhere a no-op. Same rule: it must never start a
/// process.
#[cfg(target_os = "linux")]
pub use linux::thread_priority::batch_current_thread;

/// See the Linux one: a no-op here.
#[cfg(not(target_os = "linux"))]
pub fn batch_current_thread() {}

/// The kernel's record of the client's socket of a local TCP connection (`local` is
/// our end's address, `peer` the client's): its uid, inode and cgroup. `Ok(None)` when
/// no ESTABLISHED socket has that four-tuple here (closed meanwhile, or on another
/// machine): the daemon's port, without a token, serves its own user only
/// (src/daemon/http/auth.rs). Linux asks sock_diag (linux/tcp_diag.rs); elsewhere this
/// is `Unsupported`, and the caller refuses (fails closed).
#[cfg(target_os = "linux")]
pub use linux::tcp_diag::{tcp_peer, TcpPeer};

/// See the Linux one.
#[cfg(not(target_os = "linux"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpPeer {
    pub uid: u32,
    pub inode: u64,
    pub cgroup_id: Option<u64>,
}

/// See the Linux one: nothing to ask here.
#[cfg(not(target_os = "linux"))]
pub fn tcp_peer(_local: std::net::SocketAddr, _peer: std::net::SocketAddr) -> std::io::Result<Option<TcpPeer>> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "the owner of a TCP peer cannot be found on this platform",
    ))
}

/// Whether a client process (`is_job_process(pid)`) or a client's TCP socket
/// (`is_job_socket(inode, cgroup_id)`) belongs to one of this process's jobs, from its
/// cgroup and its ancestry; `become_subreaper` keeps every job's orphans our
/// descendants, `reap_orphans` reaps them (linux/job_peers.rs). The daemon refuses
/// its jobs as clients (src/daemon/peer.rs).
#[cfg(target_os = "linux")]
pub use linux::job_peers::{
    become_subreaper, helper_exited, helper_started, is_job_process, is_job_socket, reap_orphans,
};
/// A helper the daemon starts itself (its MCP server): registered like a job's first
/// process, so the orphan reaper leaves its exit status to the caller's `wait_helper`.
#[cfg(target_os = "linux")]
pub use unix::reap::{adopt_launched, launching as launching_helper, wait_blocking as wait_helper};
/// See the Linux one: no orphan reaper to keep away from it here.
#[cfg(all(unix, not(target_os = "linux")))]
pub fn launching_helper<E>(launch: impl FnOnce() -> Result<i32, E>) -> Result<i32, E> {
    launch()
}
#[cfg(all(unix, not(target_os = "linux")))]
pub use unix::reap::wait_blocking as wait_helper;

/// Not checked here: no backend but Linux's runs sandboxed jobs under the daemon's
/// rules yet (docs/platforms.md).
#[cfg(not(target_os = "linux"))]
pub fn is_job_process(_pid: i32) -> std::io::Result<bool> {
    Ok(false)
}

/// See `is_job_process`.
#[cfg(not(target_os = "linux"))]
pub fn is_job_socket(_inode: u64, _cgroup_id: Option<u64>) -> bool {
    false
}

/// See the Linux one: no job is told from a client here.
#[cfg(not(target_os = "linux"))]
pub fn helper_started(_pid: i32) {}

/// See the Linux one.
#[cfg(not(target_os = "linux"))]
pub fn helper_exited(_pid: i32) {}

/// See the Linux one: nothing here.
#[cfg(not(target_os = "linux"))]
pub fn become_subreaper() -> std::io::Result<()> {
    Ok(())
}

/// See the Linux one: nothing here.
#[cfg(not(target_os = "linux"))]
pub fn reap_orphans(_deferred: Option<i32>) -> Option<i32> {
    None
}

/// Whether no process is left of the sandboxed job whose launch gave its TMPDIR
/// `watch` (`crate::sandbox::JobTmpDir::watch`), and none can come back. Linux: the
/// job's seccomp filter has no user left (`linux::sandbox::watch`). Elsewhere no
/// launch gives one.
#[cfg(target_os = "linux")]
pub use linux::sandbox::nothing_left as sandboxed_job_gone;

/// See the Linux one: no launch here gives a watch.
#[cfg(all(unix, not(target_os = "linux")))]
pub fn sandboxed_job_gone(_watch: &std::os::fd::OwnedFd) -> bool {
    false
}

/// What the per-job sandbox can be here (`crate::sandbox`), found once: Landlock and
/// seccomp on Linux, Seatbelt on macOS; an error (why not) elsewhere, or on a Linux
/// kernel without Landlock. A sandboxed job is refused then, never run unconfined.
pub fn sandbox_support() -> Result<crate::sandbox::Support, String> {
    #[cfg(target_os = "linux")]
    return os::sandbox::support();
    #[cfg(target_os = "macos")]
    return os::seatbelt::support();
    #[cfg(windows)]
    return Err("no sandbox on Windows yet (docs/sandbox.md)".to_string());
}

/// What identifies one job's processes, on every platform: its process (a session
/// leader on Unix, so its session and group too), when it started, its marker entry
/// (`NAME=value`), and what contains it (its cgroup on Linux, its Job Object on
/// Windows; nothing on macOS). Each backend uses what its search needs.
pub struct JobIdentity<'a> {
    pub pid: i32,
    pub start_ticks: u64,
    pub marker: &'a str,
    pub containment: &'a Containment,
}

/// Names a job's processes so they can be found again even after they leave its
/// process group or session. Value: `<service token>.<handle>`.
pub const JOB_MARKER: &str = "NATIVE_SHELL_JOB";
/// Names the Node process that owns a job; the watchdog ends jobs by it when that dies.
pub const OWNER_MARKER: &str = "NATIVE_SHELL_OWNER";

/// What holds a job's processes together, as reported to callers (`containment` on the
/// service and on each job). docs/reliability.md has what each mode stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContainmentMode {
    /// A cgroup v2 per job (Linux): nothing the job starts can leave it by forking,
    /// changing session or clearing its environment.
    Cgroup,
    /// A Job Object per job (Windows).
    JobObject,
    /// No kernel object holds the job: its processes are found by session, group,
    /// parent links (its first process is a subreaper on Linux) and an environment marker.
    ProcessTree,
}

impl ContainmentMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ContainmentMode::Cgroup => "cgroup",
            ContainmentMode::JobObject => "job-object",
            ContainmentMode::ProcessTree => "process-tree",
        }
    }
}

/// How this process learns that a job's process exited, found once per process: on
/// Linux one io_uring for all jobs (`"io_uring"`, no descriptor per job) or, where it is
/// missing or refused, a pidfd per job (`"pidfd"`, with the reason); a kqueue per job on
/// macOS, the process's handle on Windows. The daemon reports it at start and in
/// `/health` (src/daemon/startup.rs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExitWatch {
    pub mechanism: &'static str,
    /// Why the preferred mechanism is not used here.
    pub fallback_reason: Option<String>,
}

#[cfg(target_os = "linux")]
pub use linux::exit_ring::exit_watch;

#[cfg(target_os = "macos")]
pub fn exit_watch() -> ExitWatch {
    ExitWatch {
        mechanism: "kqueue",
        fallback_reason: None,
    }
}

#[cfg(windows)]
pub fn exit_watch() -> ExitWatch {
    ExitWatch {
        mechanism: "process-handle",
        fallback_reason: None,
    }
}

/// How a job talks to its process: a terminal, or three pipes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Pty,
    Pipes,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Pty => "pty",
            Mode::Pipes => "pipes",
        }
    }
}

/// What to start, made by `crate::job::spawn` (command line, environment, directory).
pub struct SpawnSpec<'a> {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    /// The working directory, checked to lie inside the project root...
    pub cwd: &'a Path,
    /// ...and held open since that check: the child enters this very directory.
    pub cwd_handle: &'a File,
    pub mode: Mode,
    pub cols: u16,
    pub rows: u16,
    /// Confine the job (`crate::sandbox`; admission has checked the platform can).
    pub sandbox: Option<crate::sandbox::JobSandbox<'a>>,
    /// The service's terminal opened ahead: a PTY job takes it, and opens the next.
    pub spare_pty: &'a SparePty,
}

/// How a process ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Exit {
    /// The exit code, when it exited by itself.
    pub code: Option<i32>,
    /// The signal that ended it (Unix only).
    pub signal: Option<i32>,
}

/// How hard `end_processes` ends them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Asks them to end (SIGTERM); a platform that cannot ask ends them at once.
    Politely,
    /// Ends them now (SIGKILL, or the Job Object terminated).
    Now,
}

/// A started job: its process, how to talk to it, and what holds its processes.
pub struct Spawned {
    pub child: ChildProcess,
    pub pid: u32,
    pub io: ProcessIo,
    pub containment: Containment,
}

pub enum ProcessIo {
    Pty(Terminal),
    Pipes {
        stdin: PipeWriter,
        stdout: PipeReader,
        stderr: PipeReader,
    },
}

/// What the terminal says about who reads it, for input detection and the job list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputState {
    /// A process of the terminal's foreground group is blocked reading the terminal.
    pub awaiting: bool,
    /// The foreground program, when asked for and known.
    pub program: Option<String>,
}
