//! PTY mode: the job's stdin, stdout and stderr are the slave side of a fresh PTY,
//! which becomes its controlling terminal (so Ctrl-C, job control and `tput` work).

use std::fs::OpenOptions;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::process::Stdio;

use portable_pty::{native_pty_system, PtySize};
use tokio::process::Command;

use super::{enter_session, ProcessIo, Spawned};

pub(super) fn spawn(mut cmd: Command, cwd: i32, cols: u16, rows: u16) -> io::Result<Spawned> {
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
    // Our own handle on the slave, without becoming its controlling process; the pair's
    // slave is dropped at once. The parent must hold no slave descriptor after the
    // spawn, or the master never sees EOF.
    let slave = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(&slave_path)?;
    drop(pair.slave);
    cmd.stdin(Stdio::from(slave.try_clone()?))
        .stdout(Stdio::from(slave.try_clone()?))
        .stderr(Stdio::from(slave));
    // SAFETY: only async-signal-safe system calls run between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            enter_session(cwd)?;
            if libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                return Err(io::Error::last_os_error());
            }
            // The shell is the session leader; when it exits the kernel hangs up the
            // terminal's foreground group, which would kill `server &` the moment its
            // shell returns. Jobs are ended by `kill` (TERM, then KILL), never by HUP.
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    drop(cmd);
    let pid = child
        .id()
        .ok_or_else(|| io::Error::other("child exited before its pid was read"))?;
    let master_fd = pair
        .master
        .as_raw_fd()
        .ok_or_else(|| io::Error::other("the PTY master has no descriptor"))?;
    let fd = duplicate_nonblocking(master_fd)?;
    Ok(Spawned {
        child,
        pid,
        io: ProcessIo::Pty {
            master: pair.master,
            fd,
        },
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
