//! The three requests the supervisor makes of a filter's listener (linux/seccomp.h):
//! take the next notification, ask whether one is still pending, answer one; and the
//! flag that has the kernel wake the supervisor on the caller's CPU.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// The next notification of `listener` (`SECCOMP_IOCTL_NOTIF_RECV`). `ENOENT`: the
/// calling thread was interrupted or killed since it was reported; nothing to answer.
pub fn receive(listener: BorrowedFd<'_>) -> io::Result<libc::seccomp_notif> {
    // SAFETY: zeroed as the kernel requires of the buffer; plain integers.
    let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: the ioctl writes one `seccomp_notif` into `notif`.
    let done = unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_RECV, &mut notif) };
    if done < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(notif)
}

/// The call `id` still waits (`SECCOMP_IOCTL_NOTIF_ID_VALID`): the thread that made it
/// is alive and blocked in it, so the pid it came with still names that thread. Asked
/// after every read of the job's state (its memory, its directory, its descriptors):
/// a read from a pid that was reused by then is thrown away.
pub fn still_waiting(listener: BorrowedFd<'_>, id: u64) -> bool {
    // SAFETY: the ioctl reads one `u64`.
    unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0 }
}

/// Answers the call `id`: it returns `Ok(value)`, or fails with `Err(errno)`. Never
/// `SECCOMP_USER_NOTIF_FLAG_CONTINUE`: the call is made by the supervisor, on what it
/// copied (`super` says why). An answer to a call that is gone is dropped.
pub fn answer(listener: BorrowedFd<'_>, id: u64, result: Result<i64, i32>) {
    let (val, error) = match result {
        Ok(value) => (value, 0),
        Err(errno) => (0, -errno),
    };
    let mut resp = libc::seccomp_notif_resp {
        id,
        val,
        error,
        flags: 0,
    };
    // SAFETY: the ioctl reads one `seccomp_notif_resp`.
    unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SEND, &mut resp) };
}

/// `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP` (linux/seccomp.h, Linux 6.6).
const SYNC_WAKE_UP: libc::c_ulong = 1;

/// Asks the kernel to hand the CPU straight from the calling thread to the supervisor
/// and back (`SECCOMP_IOCTL_NOTIF_SET_FLAGS` with `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`):
/// the caller waits for the answer anyway, so running the supervisor on its CPU saves
/// a wake-up on another one each way. The flags are the ioctl's argument itself, not
/// a pointer to them (kernel/seccomp.c, `seccomp_notify_set_flags`). The thread must
/// wait in `receive` for the hand-over to reach it (`super::Supervised`). Before
/// Linux 6.6 the kernel refuses it (`EINVAL`) and the wake-ups stay as they were.
pub fn wake_up_in_turn(listener: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: the ioctl takes the flags as its argument and reads no memory.
    let done = unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS, SYNC_WAKE_UP) };
    if done < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A listener of a filter that allows everything, installed on a thread made for it:
/// a filter and `NO_NEW_PRIVS` set on a thread stay on that thread, which ends. Fails
/// where a filter of the host's holds a listener already (one per chain, `EBUSY`).
pub fn allow_all_listener() -> io::Result<OwnedFd> {
    std::thread::spawn(|| {
        // SAFETY: a flag on this thread only.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) } < 0 {
            return Err(io::Error::last_os_error());
        }
        let allow = [libc::sock_filter {
            code: 0x06,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ALLOW,
        }];
        let program = libc::sock_fprog {
            len: 1,
            filter: allow.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: a one-instruction program on the stack; it confines this thread.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as u32,
                &program as *const libc::sock_fprog,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the listener just made, ours.
        Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
    })
    .join()
    .unwrap_or_else(|_| Err(io::Error::other("the filter's thread panicked")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    fn kernel_at_least(major: u32, minor: u32) -> bool {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let mut parts = release.trim().split(['.', '-']).map(|p| p.parse::<u32>().unwrap_or(0));
        (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (major, minor)
    }

    /// The kernel takes the synchronous wake-ups (Linux 6.6 and later): the flag is
    /// passed as the ioctl's argument. Passed by address, as it once was, the kernel
    /// refused it (`EINVAL`) and every wake-up could land on another CPU.
    #[test]
    fn synchronous_wake_ups_are_taken() {
        if !kernel_at_least(6, 6) {
            eprintln!("skipped: SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP needs Linux 6.6");
            return;
        }
        let listener = allow_all_listener().expect("a listener");
        wake_up_in_turn(listener.as_fd()).expect("SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP");
    }
}
