//! Pipes mode: the job's stdin, stdout and stderr are three pipes, stdout and stderr
//! kept apart.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;

use crate::platform::os::ChildProcess;
use crate::platform::ProcessIo;
use crate::platform::SpawnSpec;

/// The read end of a job's stdout or stderr, in the reactor.
pub struct PipeReader(pipe::Receiver);

impl PipeReader {
    /// Reads what is there (0 at EOF). Cancel-safe.
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).await
    }
}

impl AsRawFd for PipeReader {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.0.as_raw_fd()
    }
}

impl PipeReader {
    /// A job's pipe inherited from this process's previous image (a restart in place,
    /// src/daemon/upgrade/). Must run inside a tokio runtime.
    pub fn adopt(fd: OwnedFd) -> io::Result<Self> {
        Ok(Self(pipe::Receiver::from_owned_fd(fd)?))
    }
}

/// The write end of a job's stdin, in the reactor.
pub struct PipeWriter(pipe::Sender);

impl AsRawFd for PipeWriter {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.0.as_raw_fd()
    }
}

impl PipeWriter {
    /// See `PipeReader::adopt`.
    pub fn adopt(fd: OwnedFd) -> io::Result<Self> {
        Ok(Self(pipe::Sender::from_owned_fd(fd)?))
    }
}

impl PipeWriter {
    pub async fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        self.write_from(data, &mut 0).await
    }

    /// `write_all` from `*written` on, counting every write in `*written` as it lands
    /// (see `Terminal::write_from`: cancel-safe to the byte).
    pub async fn write_from(&mut self, data: &[u8], written: &mut usize) -> io::Result<()> {
        while *written < data.len() {
            match self.0.write(&data[*written..]).await? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                n => *written += n,
            }
        }
        self.0.flush().await
    }
}

pub(super) fn spawn(
    spec: &SpawnSpec<'_>,
    containment: &super::Containment,
) -> io::Result<(ChildProcess, i32, ProcessIo)> {
    let (stdin_read, stdin_write) = pipe_pair()?;
    let (stdout_read, stdout_write) = pipe_pair()?;
    let (stderr_read, stderr_write) = pipe_pair()?;
    let plan = super::plan(
        spec,
        containment,
        [
            stdin_read.as_raw_fd(),
            stdout_write.as_raw_fd(),
            stderr_write.as_raw_fd(),
        ],
        None,
    )?;
    let pid = super::start(&plan, spec)?;
    // Adopted at once, so an error below still leaves the child reaped.
    let child = ChildProcess::adopt(pid);
    // The child's ends close here, so EOF on stdout/stderr means the job's side is gone.
    drop((stdin_read, stdout_write, stderr_write));
    let io = ProcessIo::Pipes {
        stdin: PipeWriter(pipe::Sender::from_owned_fd(stdin_write)?),
        stdout: PipeReader(pipe::Receiver::from_owned_fd(stdout_read)?),
        stderr: PipeReader(pipe::Receiver::from_owned_fd(stderr_read)?),
    };
    Ok((child, pid, io))
}

/// A close-on-exec pipe: (read end, write end).
#[cfg(target_os = "linux")]
pub fn pipe_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

/// A close-on-exec pipe: (read end, write end). macOS has no `pipe2`, so the flag is
/// set just after: a `fork` on another thread in between could carry the ends into a
/// child, which the launchers here cannot do (their children close every descriptor
/// above 2 before exec, see `launch.rs`), nor can libuv's (its children are started
/// with `POSIX_SPAWN_CLOEXEC_DEFAULT`).
#[cfg(target_os = "macos")]
pub fn pipe_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = rustix::pipe::pipe()?;
    for fd in [&read, &write] {
        rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC)?;
    }
    Ok((read, write))
}
