//! Starting a job's process, attached to a PTY or to pipes.
//!
//! Both modes spawn through `tokio::process`, whose child reaping on Linux is a
//! pidfd in the reactor: exit is an event, with no thread parked in `wait()` per job
//! and no SIGCHLD handler to fight libuv over. portable-pty provides the PTY pair and
//! its resizing; its own `spawn_command` is not used because its child can only be
//! waited for by blocking a thread.
//!
//! Every job is a session leader (`setsid`): its process group is its pid, signals for
//! the job never reach the host, and a pipe job cannot open the host's terminal to
//! prompt for a password.

pub mod command;
pub mod directory;
pub mod env;
mod pty;

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::Stdio;

use portable_pty::MasterPty;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

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
        /// Kept for resizing; its reader and writer are never taken.
        master: Box<dyn MasterPty + Send>,
        /// A non-blocking duplicate of the master, read and written by the reactor.
        fd: OwnedFd,
    },
    Pipes {
        stdin: ChildStdin,
        stdout: ChildStdout,
        stderr: ChildStderr,
    },
}

pub struct Spawned {
    pub child: Child,
    pub pid: u32,
    pub io: ProcessIo,
}

/// Spawns the process. Must run inside a tokio runtime.
pub fn spawn(spec: SpawnSpec<'_>) -> io::Result<Spawned> {
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .kill_on_drop(false);
    let cwd = spec.cwd.as_raw_fd();
    match spec.mode {
        Mode::Pty => pty::spawn(cmd, cwd, spec.cols, spec.rows),
        Mode::Pipes => {
            cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
            // SAFETY: only async-signal-safe system calls run between fork and exec.
            unsafe {
                cmd.pre_exec(move || {
                    enter_session(cwd)?;
                    Ok(())
                });
            }
            let mut child = cmd.spawn()?;
            let pid = child
                .id()
                .ok_or_else(|| io::Error::other("child exited before its pid was read"))?;
            let (stdin, stdout, stderr) = match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
                (Some(i), Some(o), Some(e)) => (i, o, e),
                _ => return Err(io::Error::other("pipes were not created")),
            };
            Ok(Spawned {
                child,
                pid,
                io: ProcessIo::Pipes { stdin, stdout, stderr },
            })
        }
    }
}

/// In the child: new session, working directory from the verified descriptor.
fn enter_session(cwd: i32) -> io::Result<()> {
    // SAFETY: plain system calls on integers; no allocation, no locks.
    unsafe {
        if libc::setsid() < 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::fchdir(cwd) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
