//! PTY mode: the job's stdin, stdout and stderr are the slave side of a fresh PTY,
//! which becomes its controlling terminal (so Ctrl-C, job control and `tput` work).

use std::fs::OpenOptions;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;

use portable_pty::{native_pty_system, PtySize};
use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
use rustix::io::fcntl_dupfd_cloexec;

use super::Terminal;
use crate::platform::os::ChildProcess;
use crate::platform::ProcessIo;
use crate::platform::SpawnSpec;

pub(super) fn spawn(
    spec: &SpawnSpec<'_>,
    containment: &super::Containment,
) -> io::Result<(ChildProcess, i32, ProcessIo)> {
    let size = PtySize {
        rows: spec.rows,
        cols: spec.cols,
        pixel_width: 0,
        pixel_height: 0,
    };
    let pair = native_pty_system()
        .openpty(size)
        .map_err(|e| io::Error::other(format!("openpty failed: {e}")))?;
    let slave_path = pair
        .master
        .tty_name()
        .ok_or_else(|| io::Error::other("the PTY has no slave name"))?;
    // Our own handle on the slave, without becoming its controlling process; the pair's
    // slave is dropped at once. The parent must hold no slave descriptor after the
    // spawn, or the master never sees EOF.
    let slave = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(&slave_path)?;
    drop(pair.slave);
    let fd = slave.as_raw_fd();
    let mut plan = super::plan(spec, containment, [fd, fd, fd], Some(slave.as_fd()))?;
    plan.controlling_terminal = true;
    plan.ignore_hangup = true;
    let pid = super::start(&plan, spec)?;
    // Adopted at once, so an error below still leaves the child reaped.
    let child = ChildProcess::adopt(pid);
    drop(slave);
    let master_fd = pair
        .master
        .as_raw_fd()
        .ok_or_else(|| io::Error::other("the PTY master has no descriptor"))?;
    // portable-pty's own master descriptor closes here: resizing goes through the
    // duplicate (`Terminal::resize`), so a running job holds one descriptor of it.
    let terminal = Terminal::new(duplicate_nonblocking(master_fd)?)?;
    Ok((child, pid, ProcessIo::Pty(terminal)))
}

fn duplicate_nonblocking(fd: i32) -> io::Result<OwnedFd> {
    // SAFETY: `fd` is portable-pty's master, open in the caller's `pair` across this call.
    let master = unsafe { BorrowedFd::borrow_raw(fd) };
    let duplicate = fcntl_dupfd_cloexec(master, 0)?;
    fcntl_setfl(&duplicate, fcntl_getfl(&duplicate)? | OFlags::NONBLOCK)?;
    Ok(duplicate)
}
