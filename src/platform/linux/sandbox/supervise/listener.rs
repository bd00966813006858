//! The three requests the supervisor makes of a filter's listener (linux/seccomp.h):
//! take the next notification, ask whether one is still pending, answer one.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

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
const SYNC_WAKE_UP: u64 = 1;

/// Asks the kernel to hand the CPU straight from the calling thread to the supervisor
/// and back (`SECCOMP_IOCTL_NOTIF_SET_FLAGS` with `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`):
/// the caller waits for the answer anyway, so running the supervisor on its CPU saves
/// a wake-up on another one each way. Before Linux 6.6 the kernel refuses it and the
/// wake-ups stay as they were.
pub fn wake_up_in_turn(listener: BorrowedFd<'_>) {
    // SAFETY: the ioctl reads one `u64`.
    unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS, &SYNC_WAKE_UP) };
}
