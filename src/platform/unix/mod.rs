//! What Linux and macOS share: PTYs and pipes as descriptors in the tokio reactor, jobs
//! as session leaders (their process group is their pid), signals, and a working
//! directory entered by descriptor.

pub mod accounts;
pub mod directory;
// The fork launcher is macOS's; Linux test builds compile it too, so its tests run here.
mod child_setup;
#[cfg(any(target_os = "macos", test))]
mod fds;
#[cfg(any(target_os = "macos", test))]
mod fork;
pub mod git_guard;
pub mod launch;
#[cfg(target_os = "linux")]
mod path_memory;
pub mod pipes;
pub mod pty;
pub mod reap;
pub mod search;
mod search_path;
pub mod signals;
pub mod terminal;
pub mod write_room;

// The macOS backend's parts that need nothing of macOS (the KERN_PROCARGS2 parser, the
// watchdog's script and filter), compiled into Linux test builds too so their tests run
// here. Their callers are macOS's, hence unused in those builds.
#[cfg(all(test, target_os = "linux"))]
#[allow(dead_code)]
#[path = "../macos/procargs.rs"]
mod macos_procargs;
#[cfg(all(test, target_os = "linux"))]
#[allow(dead_code)]
#[path = "../macos/seatbelt.rs"]
mod macos_seatbelt;
#[cfg(all(test, target_os = "linux"))]
#[allow(dead_code)]
#[path = "../macos/watchdog.rs"]
mod macos_watchdog;

use std::io;

use crate::platform::Spawned;
use crate::platform::{Mode, SpawnSpec};

pub use directory::open_directory;
pub use pipes::{PipeReader, PipeWriter};
pub use signals::{end_processes, group_exists};
pub use terminal::Terminal;

/// Nothing beyond the job's session holds its processes together on macOS: they are
/// found by session, group, parent links and marker (see the backend's process tree).
/// Linux has a cgroup per job where it can (`platform::linux::cgroup`).
#[cfg(not(target_os = "linux"))]
#[derive(Clone, Debug, Default)]
pub struct Containment;

#[cfg(not(target_os = "linux"))]
impl Containment {
    pub fn for_new_job() -> Self {
        Self
    }

    pub fn mode(&self) -> crate::platform::ContainmentMode {
        crate::platform::ContainmentMode::ProcessTree
    }
}

/// macOS has nothing but the process tree to hold a job (see `Containment`).
#[cfg(not(target_os = "linux"))]
pub fn containment_mode() -> crate::platform::ContainmentMode {
    crate::platform::ContainmentMode::ProcessTree
}

#[cfg(target_os = "linux")]
pub use crate::platform::os::Containment;

/// Spawns the process. Must run inside a tokio runtime.
pub fn spawn(spec: &SpawnSpec<'_>) -> io::Result<Spawned> {
    let containment = Containment::for_new_job();
    let (child, pid, io) = match spec.mode {
        Mode::Pty => pty::spawn(spec, &containment)?,
        Mode::Pipes => pipes::spawn(spec, &containment)?,
    };
    Ok(Spawned {
        child,
        pid: pid as u32,
        io,
        containment,
    })
}

/// Starts the planned process (`launch::LaunchPlan::launch`). A sandboxed job's TMPDIR
/// is then given what tells when nothing of the job is left, if the launch made one
/// (`linux::sandbox::watch`): it decides whether a later job may have the directory.
fn start(plan: &launch::LaunchPlan, spec: &SpawnSpec<'_>) -> io::Result<i32> {
    let pid = plan.launch()?;
    #[cfg(target_os = "linux")]
    if let (Some(prepared), Some(sandbox)) = (&plan.sandbox, &spec.sandbox) {
        if let Err(e) = prepared.hand_over(pid, |listener| sandbox.tmpdir.watch(listener)) {
            // The job would wait forever in its first connect: it is ended now.
            // SAFETY: a signal to our child just started, then reaped (it dies at once:
            // nothing of it can ignore SIGKILL).
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
            return Err(e);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = spec;
    Ok(pid)
}

/// The launch plan for `spec` with these descriptors as the child's 0, 1 and 2;
/// `terminal` is the job's PTY slave (a sandboxed job may write to it by path too).
fn plan(
    spec: &SpawnSpec<'_>,
    containment: &Containment,
    stdio: [i32; 3],
    terminal: Option<std::os::fd::BorrowedFd<'_>>,
) -> io::Result<launch::LaunchPlan> {
    use std::os::fd::AsRawFd;
    // macOS: the command runs under `sandbox-exec` with the job's profile.
    #[cfg(target_os = "macos")]
    let wrapped = spec
        .sandbox
        .as_ref()
        .map(|sandbox| crate::platform::os::seatbelt::wrap(sandbox, &spec.program, &spec.args));
    #[cfg(target_os = "macos")]
    let (program, args) = match &wrapped {
        Some((program, args)) => (program, args.as_slice()),
        None => (&spec.program, spec.args.as_slice()),
    };
    #[cfg(not(target_os = "macos"))]
    let (program, args) = (&spec.program, spec.args.as_slice());
    #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
    let mut plan = launch::LaunchPlan::new(program, args, &spec.env, spec.cwd_handle.as_raw_fd(), stdio)?;
    #[cfg(target_os = "linux")]
    {
        plan.containment = containment.clone();
        if let Some(sandbox) = &spec.sandbox {
            // No cgroup to tell when nothing of the job is left: its filter tells
            // (`linux::sandbox::watch`), so its TMPDIR may go to a later job.
            let watch = containment.launch_fd().is_none();
            plan.sandbox = Some(crate::platform::os::sandbox::Prepared::new(sandbox, terminal, watch)?);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = terminal;
    // macOS's Containment is empty: nothing to carry into the child.
    #[cfg(not(target_os = "linux"))]
    let _ = containment;
    Ok(plan)
}
