//! What the supervisor takes from the thread a notification came from: bytes of its
//! memory, its working directory, a duplicate of one of its descriptors. Each read is
//! followed by `listener::still_waiting`: the pid in a notification names the thread
//! only while its call waits, and a read from anything else is dropped (`Gone`).

use std::ffi::CString;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use super::listener::still_waiting;

/// Why a request is answered without being made.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// The call fails with this errno.
    Errno(i32),
    /// The call is no longer waiting: nothing to answer.
    Gone,
}

pub type Outcome<T> = Result<T, Refused>;

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// The thread behind one notification.
pub struct Caller<'a> {
    pub listener: BorrowedFd<'a>,
    pub id: u64,
    pub pid: i32,
}

impl Caller<'_> {
    fn checked<T>(&self, value: T) -> Outcome<T> {
        if still_waiting(self.listener, self.id) {
            Ok(value)
        } else {
            Err(Refused::Gone)
        }
    }

    /// `len` bytes at `address` in the caller's memory, all of them or `EFAULT` (as the
    /// kernel answers for memory that cannot be read).
    pub fn read(&self, address: u64, len: usize) -> Outcome<Vec<u8>> {
        let mut buf = vec![0u8; len];
        if len == 0 {
            return self.checked(buf);
        }
        let local = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: len,
        };
        let remote = libc::iovec {
            iov_base: address as *mut libc::c_void,
            iov_len: len,
        };
        // SAFETY: one local buffer of `len` bytes, owned here.
        let got = unsafe { libc::process_vm_readv(self.pid, &local, 1, &remote, 1, 0) };
        let errno = last_errno();
        let buf = self.checked(buf)?;
        match got {
            n if n >= 0 && n as usize == len => Ok(buf),
            n if n >= 0 => Err(Refused::Errno(libc::EFAULT)),
            // The job made itself unreadable (not dumpable) or is being torn down:
            // refused, never guessed.
            _ if errno == libc::EFAULT => Err(Refused::Errno(libc::EFAULT)),
            _ => Err(Refused::Errno(libc::EACCES)),
        }
    }

    /// Writes `bytes` at `address` in the caller's memory (what the kernel writes back
    /// for the call: `sendmmsg`'s lengths), all of them or `EFAULT`.
    pub fn write(&self, address: u64, bytes: &[u8]) -> Outcome<()> {
        let local = libc::iovec {
            iov_base: bytes.as_ptr() as *mut libc::c_void,
            iov_len: bytes.len(),
        };
        let remote = libc::iovec {
            iov_base: address as *mut libc::c_void,
            iov_len: bytes.len(),
        };
        // SAFETY: one local buffer of its own length, only read.
        let put = unsafe { libc::process_vm_writev(self.pid, &local, 1, &remote, 1, 0) };
        self.checked(())?;
        if put >= 0 && put as usize == bytes.len() {
            Ok(())
        } else {
            Err(Refused::Errno(libc::EFAULT))
        }
    }

    /// The caller's working directory, opened (relative socket paths are resolved
    /// from it, as the kernel would for the caller).
    pub fn cwd(&self) -> Outcome<OwnedFd> {
        let path = CString::new(format!("/proc/{}/cwd", self.pid)).map_err(|_| Refused::Errno(libc::EINVAL))?;
        // SAFETY: a path, flags; the descriptor returned is ours.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        if fd < 0 {
            let errno = last_errno();
            return self.checked(()).and(Err(Refused::Errno(errno)));
        }
        // SAFETY: just opened.
        self.checked(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// A duplicate of the caller's descriptor `fd` (`pidfd_getfd`): the same open
    /// socket, so what the supervisor does on it is done on the job's.
    pub fn descriptor(&self, fd: u64) -> Outcome<OwnedFd> {
        let Ok(fd) = i32::try_from(fd) else {
            return Err(Refused::Errno(libc::EBADF));
        };
        let pidfd = self.pidfd()?;
        // SAFETY: a pidfd held here, a number, no flags.
        let dup = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0u32) };
        if dup < 0 {
            let errno = last_errno();
            return self.checked(()).and(Err(Refused::Errno(errno)));
        }
        // SAFETY: a new descriptor in our table.
        self.checked(unsafe { OwnedFd::from_raw_fd(dup as i32) })
    }

    /// A pidfd for the caller: of the thread itself (`PIDFD_THREAD`, Linux 6.9), else
    /// of its process (the descriptor table is the process's).
    fn pidfd(&self) -> Outcome<OwnedFd> {
        const PIDFD_THREAD: u32 = libc::O_EXCL as u32;
        let open = |pid: i32, flags: u32| {
            // SAFETY: a pid and flags.
            let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, flags) };
            // SAFETY: a new descriptor in our table.
            (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as i32) })
        };
        let fd = match open(self.pid, PIDFD_THREAD).or_else(|| open(self.pid, 0)) {
            Some(fd) => fd,
            None => {
                let tgid = self.process()?;
                open(tgid, 0).ok_or(Refused::Errno(libc::ESRCH))?
            }
        };
        self.checked(fd)
    }

    /// The caller's process id (`Tgid:` in its status).
    pub fn process(&self) -> Outcome<i32> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).map_err(|_| Refused::Gone)?;
        let tgid = status
            .lines()
            .find_map(|l| l.strip_prefix("Tgid:"))
            .and_then(|v| v.trim().parse().ok())
            .ok_or(Refused::Errno(libc::ESRCH))?;
        self.checked(tgid)
    }

    /// Makes `call`, a system call that may block, so that it is interrupted if the
    /// caller stops waiting for it (`super::abandoned`).
    pub fn blocking(&self, call: impl FnMut() -> isize) -> isize {
        super::abandoned::interruptible(self.listener.as_raw_fd(), self.id, call)
    }

    /// `SIGPIPE` to the calling thread, as its own send on a broken stream would
    /// have raised (the supervisor sends with `MSG_NOSIGNAL`, so the signal is not its).
    pub fn broken_pipe(&self) {
        if let Ok(tgid) = self.process() {
            // SAFETY: a signal to a thread of a process that is still waiting in its call.
            unsafe { libc::syscall(libc::SYS_tgkill, tgid, self.pid, libc::SIGPIPE) };
        }
    }
}
