//! A unix socket server that does not accept, and a look at where a process's threads
//! sleep in the kernel: what shows a connect blocked (tests/daemon/daemon_restart_sandbox.rs).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::Path;

/// A listening socket with no room in its backlog and no one accepting: the next
/// connect to it blocks. `accept` lets one in.
pub struct Busy {
    fd: std::os::fd::OwnedFd,
    _filler: std::os::unix::net::UnixStream,
}

impl Busy {
    pub fn bind(path: &Path) -> Self {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: plain system calls on a socket made here.
        let fd =
            unsafe { OwnedFd::from_raw_fd(libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0)) };
        let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (to, from) in addr.sun_path.iter_mut().zip(path.as_os_str().as_bytes()) {
            *to = *from as libc::c_char;
        }
        let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
        // SAFETY: the address built above, its size.
        let bound = unsafe { libc::bind(fd.as_raw_fd(), (&addr as *const libc::sockaddr_un).cast(), len) };
        assert_eq!(bound, 0, "bind {}", path.display());
        // A backlog of 0: one connection waits in it, the next connect blocks.
        assert_eq!(unsafe { libc::listen(fd.as_raw_fd(), 0) }, 0);
        let filler = std::os::unix::net::UnixStream::connect(path).unwrap();
        Self { fd, _filler: filler }
    }

    /// Takes the connections waiting (the filler's, then the blocked one's) and
    /// answers each `pong`.
    pub fn accept_all(&self) {
        use std::os::fd::{AsRawFd, FromRawFd};
        let fd = self.fd.as_raw_fd();
        std::thread::spawn(move || loop {
            // SAFETY: the listener stays open for the test (its owner outlives the thread's use).
            let got = unsafe { libc::accept4(fd, std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_CLOEXEC) };
            if got < 0 {
                return;
            }
            // SAFETY: a new descriptor of ours.
            let mut stream = unsafe { std::os::unix::net::UnixStream::from_raw_fd(got) };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4];
                if stream.read_exact(&mut buf).is_ok() {
                    let _ = stream.write_all(b"pong");
                }
            });
        });
    }
}

/// Whether a thread of `pid` sleeps in the kernel function `wchan`.
pub fn blocked_in(pid: u32, wchan: &str) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks
        .flatten()
        .any(|task| std::fs::read_to_string(task.path().join("wchan")).is_ok_and(|w| w.trim() == wchan))
}
