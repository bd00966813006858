//! Starting a job's process, attached to a PTY or to pipes.
//!
//! Processes are started by `launch` (a vfork-style clone: the Node process is not
//! copied) and watched by `child` (a pidfd in the tokio reactor). portable-pty
//! provides the PTY pair and its resizing; its own `spawn_command` is not used because
//! it forks and its child can only be waited for by blocking a thread.
//!
//! Every job is a session leader (`setsid`): its process group is its pid, signals for
//! the job never reach the host, and a pipe job cannot open the host's terminal to
//! prompt for a password.

pub mod child;
pub mod command;
pub mod directory;
pub mod env;
mod launch;
pub mod pty;
mod search_path;

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use tokio::net::unix::pipe;

pub use child::ChildProcess;
use launch::LaunchPlan;

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

pub struct SpawnSpec<'a> {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub cwd: &'a OwnedFd,
    pub mode: Mode,
    pub cols: u16,
    pub rows: u16,
}

pub enum ProcessIo {
    Pty {
        /// The master, non-blocking: read and written by the reactor, resized with
        /// `TIOCSWINSZ`. The only descriptor the parent keeps of the terminal.
        fd: OwnedFd,
    },
    Pipes {
        stdin: pipe::Sender,
        stdout: pipe::Receiver,
        stderr: pipe::Receiver,
    },
}

pub struct Spawned {
    pub child: ChildProcess,
    pub pid: u32,
    pub io: ProcessIo,
}

/// Spawns the process. Must run inside a tokio runtime.
pub fn spawn(spec: SpawnSpec<'_>) -> io::Result<Spawned> {
    let cwd = spec.cwd.as_raw_fd();
    match spec.mode {
        Mode::Pty => pty::spawn(&spec, cwd),
        Mode::Pipes => spawn_with_pipes(&spec, cwd),
    }
}

fn plan(spec: &SpawnSpec<'_>, cwd: i32, stdio: [i32; 3]) -> io::Result<LaunchPlan> {
    LaunchPlan::new(&spec.program, &spec.args, &spec.env, cwd, stdio)
}

fn spawn_with_pipes(spec: &SpawnSpec<'_>, cwd: i32) -> io::Result<Spawned> {
    let (stdin_read, stdin_write) = pipe_pair()?;
    let (stdout_read, stdout_write) = pipe_pair()?;
    let (stderr_read, stderr_write) = pipe_pair()?;
    let plan = plan(
        spec,
        cwd,
        [
            stdin_read.as_raw_fd(),
            stdout_write.as_raw_fd(),
            stderr_write.as_raw_fd(),
        ],
    )?;
    let pid = plan.launch()?;
    let child = ChildProcess::adopt(pid);
    // The child's ends close here, so EOF on stdout/stderr means the job's side is gone.
    drop((stdin_read, stdout_write, stderr_write));
    Ok(Spawned {
        child,
        pid: pid as u32,
        io: ProcessIo::Pipes {
            stdin: pipe::Sender::from_owned_fd(stdin_write)?,
            stdout: pipe::Receiver::from_owned_fd(stdout_read)?,
            stderr: pipe::Receiver::from_owned_fd(stderr_read)?,
        },
    })
}

/// A close-on-exec pipe: (read end, write end).
fn pipe_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors, which become owned here.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}
