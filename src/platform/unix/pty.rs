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
    let (master, slave) = pair_for(spec)?;
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
    // While the job's program starts on another core: the next job's terminal.
    spec.spare_pty.refill();
    let terminal = Terminal::new(master)?;
    Ok((child, pid, ProcessIo::Pty(terminal)))
}

/// One PTY pair opened ahead, for the next PTY job of a service, which owns it (it
/// closes with the service, and at its shutdown).
///
/// Opening `/dev/ptmx` is the costliest call of a spawn after the clone itself (the
/// kernel allocates and sets up the terminal): 16–30 µs of the JS thread between one
/// result and the next job, measured in `perf`; asking for its slave a few more. Opened
/// ahead, right after a PTY job's process is created (while its program starts on
/// another core), the next spawn only takes the pair and sets its size. Holding the
/// slave open costs nothing while no job uses the pair: nobody reads its master.
#[derive(Default)]
pub struct SparePty {
    #[cfg(target_os = "linux")]
    pair: std::sync::Mutex<Option<(OwnedFd, OwnedFd)>>,
}

impl SparePty {
    /// The pair opened ahead, if there is one.
    #[cfg(target_os = "linux")]
    fn take(&self) -> Option<(OwnedFd, OwnedFd)> {
        crate::base::sync::lock(&self.pair).take()
    }

    /// Opens the next pair if none is held. A failure is left to the next spawn, which
    /// opens its own and reports what fails then.
    pub fn refill(&self) {
        #[cfg(target_os = "linux")]
        {
            let mut held = crate::base::sync::lock(&self.pair);
            if held.is_none() {
                *held = unsized_pair().ok();
            }
        }
    }

    /// Lets the held pair go (the service ends).
    pub fn clear(&self) {
        #[cfg(target_os = "linux")]
        drop(self.take());
    }
}

/// The job's PTY pair sized as it asks: the spare when there is one, else a new pair.
#[cfg(target_os = "linux")]
fn pair_for(spec: &SpawnSpec<'_>) -> io::Result<(OwnedFd, OwnedFd)> {
    let (master, slave) = match spec.spare_pty.take() {
        Some(pair) => pair,
        None => unsized_pair()?,
    };
    set_size(&slave, spec.rows, spec.cols)?;
    Ok((master, slave))
}

/// macOS opens no terminal ahead (`SparePty` holds none there).
#[cfg(not(target_os = "linux"))]
fn pair_for(spec: &SpawnSpec<'_>) -> io::Result<(OwnedFd, OwnedFd)> {
    open_pair(spec.rows, spec.cols)
}

/// A new PTY pair, its size still to be set.
#[cfg(target_os = "linux")]
fn unsized_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let master = open_master()?;
    let slave = slave_of(&master)?;
    Ok((master, slave))
}

/// Sets the terminal's size to `rows` × `cols` through its `slave`.
#[cfg(target_os = "linux")]
fn set_size(slave: &OwnedFd, rows: u16, cols: u16) -> io::Result<()> {
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
    Ok(())
}

/// A PTY pair is a master (non-blocking, for the reactor) and our handle on its
/// slave, opened without making it our controlling terminal; both close-on-exec from
/// the start, so no child another thread starts meanwhile inherits them. Its size is
/// set by the caller (`set_size`).
///
/// Linux: four system calls, where `openpty(3)` (portable-pty) took about twenty with
/// the slave opened again by its name and the master duplicated to make it
/// non-blocking: the slave comes from the master itself (`TIOCGPTPEER`, Linux 4.13),
/// which also spares a lookup of `/dev/pts` by name.
#[cfg(target_os = "linux")]
const PAIR_FLAGS: libc::c_int = libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC;

/// A new, unlocked PTY master.
#[cfg(target_os = "linux")]
fn open_master() -> io::Result<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: an open of a NUL-terminated path, its descriptor owned at once; an
    // ioctl that reads one integer of ours.
    unsafe {
        let master = libc::open(c"/dev/ptmx".as_ptr(), PAIR_FLAGS | libc::O_NONBLOCK);
        if master < 0 {
            return Err(io::Error::last_os_error());
        }
        let master = OwnedFd::from_raw_fd(master);
        let unlock: libc::c_int = 0;
        if libc::ioctl(master.as_raw_fd(), libc::TIOCSPTLCK, &unlock) < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(master)
    }
}

/// The slave of `master`.
#[cfg(target_os = "linux")]
fn slave_of(master: &OwnedFd) -> io::Result<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: TIOCGPTPEER takes flags and returns a new descriptor, owned at once.
    let slave = unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCGPTPEER, PAIR_FLAGS) };
    if slave >= 0 {
        // SAFETY: as above.
        return Ok(unsafe { OwnedFd::from_raw_fd(slave) });
    }
    // A kernel before 4.13: the slave by its name.
    slave_by_name(master, PAIR_FLAGS)
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
