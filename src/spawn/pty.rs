//! PTY mode: the job's stdin, stdout and stderr are the slave side of a fresh PTY,
//! which becomes its controlling terminal (so Ctrl-C, job control and `tput` work).

use std::fs::OpenOptions;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

use portable_pty::{native_pty_system, PtySize};

use super::{plan, ChildProcess, ProcessIo, SpawnSpec, Spawned};

pub(super) fn spawn(spec: &SpawnSpec<'_>, cwd: i32) -> io::Result<Spawned> {
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
    let mut plan = plan(spec, cwd, [fd, fd, fd])?;
    plan.controlling_terminal = true;
    plan.ignore_hangup = true;
    let pid = plan.launch()?;
    let child = ChildProcess::adopt(pid);
    drop(slave);
    let master_fd = pair
        .master
        .as_raw_fd()
        .ok_or_else(|| io::Error::other("the PTY master has no descriptor"))?;
    let fd = duplicate_nonblocking(master_fd)?;
    Ok(Spawned {
        child,
        pid: pid as u32,
        // portable-pty's own master descriptor closes here: resizing goes through the
        // duplicate (`resize_terminal`), so a running job holds one descriptor of it.
        io: ProcessIo::Pty { fd },
    })
}

fn duplicate_nonblocking(fd: i32) -> io::Result<OwnedFd> {
    // SAFETY: fcntl on a descriptor we own; the duplicate is owned by the OwnedFd.
    unsafe {
        let dup = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0);
        if dup < 0 {
            return Err(io::Error::last_os_error());
        }
        let owned = OwnedFd::from_raw_fd(dup);
        let flags = libc::fcntl(dup, libc::F_GETFL);
        if flags < 0 || libc::fcntl(dup, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(owned)
    }
}

/// Tells the terminal (and so the program, by SIGWINCH) its new size.
pub fn resize_terminal(master: RawFd, cols: u16, rows: u16) -> io::Result<()> {
    let size = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads a winsize from the pointer, which lives across the call.
    if unsafe { libc::ioctl(master, libc::TIOCSWINSZ, &size) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Writes what the non-blocking terminal takes at once; returns how many bytes (0 when
/// it is full or gone: the caller queues the rest).
pub fn write_some(master: RawFd, data: &[u8]) -> usize {
    let mut written = 0;
    while written < data.len() {
        let rest = &data[written..];
        // SAFETY: writing from a live buffer of the given length to a descriptor the
        // caller keeps open.
        let n = unsafe { libc::write(master, rest.as_ptr().cast(), rest.len()) };
        if n > 0 {
            written += n as usize;
        } else if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        } else {
            break;
        }
    }
    written
}
