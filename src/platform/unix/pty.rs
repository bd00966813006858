//! PTY mode: the job's stdin, stdout and stderr are the slave side of a fresh PTY,
//! which becomes its controlling terminal (so Ctrl-C, job control and `tput` work).

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use super::Terminal;
use crate::platform::os::ChildProcess;
use crate::platform::ProcessIo;
use crate::platform::SpawnSpec;

pub(super) fn spawn(
    spec: &SpawnSpec<'_>,
    containment: &super::Containment,
) -> io::Result<(ChildProcess, i32, ProcessIo)> {
    let (master, slave) = open_pair(spec.rows, spec.cols)?;
    let fd = slave.as_raw_fd();
    let mut plan = super::plan(spec, containment, [fd, fd, fd], Some(slave.as_fd()))?;
    plan.controlling_terminal = true;
    plan.ignore_hangup = true;
    let pid = super::start(&plan, spec)?;
    // Adopted at once, so an error below still leaves the child reaped.
    let child = ChildProcess::adopt(pid);
    // The parent must hold no slave descriptor after the spawn, or the master never
    // sees EOF.
    drop(slave);
    let terminal = Terminal::new(master)?;
    Ok((child, pid, ProcessIo::Pty(terminal)))
}

/// A new PTY pair sized `rows` × `cols`. (A pair opened ahead by a job's reader
/// spared the JS thread about 16 µs a spawn, but stood open in the host's process with
/// no service owning it: a terminal outliving every job and service.)
#[cfg(target_os = "linux")]
fn open_pair(rows: u16, cols: u16) -> io::Result<(OwnedFd, OwnedFd)> {
    let (master, slave) = open_new_pair()?;
    let size = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads one winsize of ours.
    if unsafe { libc::ioctl(slave.as_raw_fd(), libc::TIOCSWINSZ, &size) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((master, slave))
}

/// A new PTY: its master (non-blocking, for the reactor) and our handle on its slave,
/// opened without making it our controlling terminal; both close-on-exec from the
/// start, so no child another thread starts meanwhile inherits them.
///
/// Its size is set by the caller (`open_pair`). Linux: four system calls, where `openpty(3)` (portable-pty) took about twenty with
/// the slave opened again by its name and the master duplicated to make it
/// non-blocking: the slave comes from the master itself (`TIOCGPTPEER`, Linux 4.13),
/// which also spares a lookup of `/dev/pts` by name.
#[cfg(target_os = "linux")]
fn open_new_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::FromRawFd;
    let check = |ret: libc::c_int| {
        if ret < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(ret)
        }
    };
    // SAFETY: plain system calls on descriptors owned here; each new descriptor is
    // owned at once.
    unsafe {
        let flags = libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC;
        let master = check(libc::open(c"/dev/ptmx".as_ptr(), flags | libc::O_NONBLOCK))?;
        let master = OwnedFd::from_raw_fd(master);
        let unlock: libc::c_int = 0;
        check(libc::ioctl(master.as_raw_fd(), libc::TIOCSPTLCK, &unlock))?;
        let slave = match check(libc::ioctl(master.as_raw_fd(), libc::TIOCGPTPEER, flags)) {
            Ok(slave) => OwnedFd::from_raw_fd(slave),
            // A kernel before 4.13: the slave by its name.
            Err(_) => slave_by_name(&master, flags)?,
        };
        Ok((master, slave))
    }
}

/// `/dev/pts/<n>` of `master`, opened with `flags`.
#[cfg(target_os = "linux")]
fn slave_by_name(master: &OwnedFd, flags: libc::c_int) -> io::Result<OwnedFd> {
    use std::os::fd::FromRawFd;
    let mut number: libc::c_uint = 0;
    // SAFETY: TIOCGPTN writes the slave's number into a live integer.
    if unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCGPTN, &mut number) } < 0 {
        return Err(io::Error::last_os_error());
    }
    let path = std::ffi::CString::new(format!("/dev/pts/{number}")).map_err(io::Error::other)?;
    // SAFETY: open of a NUL-terminated path; the descriptor is owned at once.
    let fd = unsafe { libc::open(path.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// macOS: portable-pty's `openpty`, the slave opened again by its name without
/// becoming our controlling terminal, the master duplicated non-blocking.
#[cfg(not(target_os = "linux"))]
fn open_pair(rows: u16, cols: u16) -> io::Result<(OwnedFd, OwnedFd)> {
    use std::fs::OpenOptions;
    use std::os::fd::BorrowedFd;
    use std::os::unix::fs::OpenOptionsExt;

    use portable_pty::{native_pty_system, PtySize};
    use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
    use rustix::io::fcntl_dupfd_cloexec;

    let size = PtySize {
        rows,
        cols,
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
    let slave = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(&slave_path)?;
    drop(pair.slave);
    let master_fd = pair
        .master
        .as_raw_fd()
        .ok_or_else(|| io::Error::other("the PTY master has no descriptor"))?;
    // SAFETY: portable-pty's master, open in `pair` across this call; its own
    // descriptor closes with `pair`, so a running job holds one descriptor of it.
    let master = unsafe { BorrowedFd::borrow_raw(master_fd) };
    let duplicate = fcntl_dupfd_cloexec(master, 0)?;
    fcntl_setfl(&duplicate, fcntl_getfl(&duplicate)? | OFlags::NONBLOCK)?;
    Ok((duplicate, slave.into()))
}
