//! Closing inherited descriptors in a forked child on macOS, which has no
//! `close_range`: the parent makes room for the kernel's list of the child's open
//! descriptors (`proc_pidinfo(PROC_PIDLISTFDS)`), the child fills it and closes them.
//! Built into Linux test builds too, so `close_listed` is tested here. Used by the
//! launch steps (`launch.rs`) and the fork launcher (`fork.rs`); imports neither.

use std::ffi::c_int;
use std::os::fd::RawFd;

/// One entry of the kernel's list of a process's descriptors (`struct proc_fdinfo`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct FdEntry {
    pub fd: i32,
    pub kind: u32,
}

#[cfg(target_os = "macos")]
const _: () = assert!(std::mem::size_of::<FdEntry>() == std::mem::size_of::<libc::proc_fdinfo>());

/// Room for the child's list of descriptors, and how far to close blindly when the
/// list cannot be had whole.
#[cfg(target_os = "macos")]
pub struct FdScratch {
    entries: *mut FdEntry,
    capacity: usize,
    limit: c_int,
}

/// Entries of descriptor list room beyond what the kernel said the table holds: the
/// host's other threads may open a few between the sizing and the fork.
#[cfg(target_os = "macos")]
const FD_LIST_SLACK: usize = 64;

/// macOS's `OPEN_MAX`, the limit assumed when the real one is unknown.
#[cfg(target_os = "macos")]
const OPEN_MAX: c_int = 10240;

#[cfg(target_os = "macos")]
impl FdScratch {
    /// Room for the list: the table's size now plus slack.
    pub(super) fn list() -> Vec<FdEntry> {
        vec![FdEntry::default(); open_fd_estimate() + FD_LIST_SLACK]
    }

    /// The scratch over `list` (made by `list`, kept alive until the child has exec'd).
    pub(super) fn over(list: &mut [FdEntry]) -> Self {
        Self {
            entries: list.as_mut_ptr(),
            capacity: list.len(),
            limit: fd_limit(),
        }
    }
}

/// How many entries the host's descriptor table has room for now (0 if unknown: the
/// child then closes blindly up to the limit).
#[cfg(target_os = "macos")]
fn open_fd_estimate() -> usize {
    // SAFETY: with no buffer, PROC_PIDLISTFDS only reports the size it would need.
    let bytes = unsafe { libc::proc_pidinfo(libc::getpid(), libc::PROC_PIDLISTFDS, 0, std::ptr::null_mut(), 0) };
    usize::try_from(bytes).unwrap_or(0) / std::mem::size_of::<FdEntry>()
}

/// One past the highest descriptor number the host can have (its soft limit).
#[cfg(target_os = "macos")]
fn fd_limit() -> c_int {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the local.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } < 0 {
        return OPEN_MAX;
    }
    c_int::try_from(limit.rlim_cur).unwrap_or(c_int::MAX)
}

/// In the child: closes every descriptor above 2 but `keep`, found through the
/// kernel's list of this process's descriptors.
#[cfg(target_os = "macos")]
pub(super) unsafe fn close_inherited(keep: RawFd, scratch: &FdScratch) {
    let room = scratch.capacity * std::mem::size_of::<FdEntry>();
    let bytes = if scratch.capacity == 0 || room > c_int::MAX as usize {
        0
    } else {
        libc::proc_pidinfo(
            libc::getpid(),
            libc::PROC_PIDLISTFDS,
            0,
            scratch.entries.cast(),
            room as c_int,
        )
    };
    let listed = if bytes > 0 {
        std::slice::from_raw_parts(scratch.entries, bytes as usize / std::mem::size_of::<FdEntry>())
    } else {
        &[]
    };
    let complete = bytes > 0 && listed.len() < scratch.capacity;
    close_listed(listed, complete, keep, scratch.limit, |fd| {
        libc::close(fd);
    });
}

/// Which descriptors to close, given the kernel's list: each listed one above 2 but
/// `keep`; and when the list may be incomplete (it filled its room, or could not be
/// had), every number from past the highest listed one up to `limit` as well.
/// Allocates nothing (it runs in the forked child).
pub fn close_listed(listed: &[FdEntry], complete: bool, keep: RawFd, limit: c_int, mut close: impl FnMut(c_int)) {
    let mut highest = 2;
    for entry in listed {
        highest = highest.max(entry.fd);
        if entry.fd > 2 && entry.fd != keep {
            close(entry.fd);
        }
    }
    if complete {
        return;
    }
    for fd in highest.saturating_add(1)..limit {
        if fd != keep {
            close(fd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(fd: i32) -> FdEntry {
        FdEntry { fd, kind: 1 }
    }

    fn closed(listed: &[FdEntry], complete: bool, keep: RawFd, limit: c_int) -> Vec<c_int> {
        let mut out = Vec::new();
        close_listed(listed, complete, keep, limit, |fd| out.push(fd));
        out
    }

    #[test]
    fn a_whole_list_closes_exactly_the_listed_descriptors_above_stdio_but_the_kept_one() {
        let listed = [entry(0), entry(1), entry(2), entry(3), entry(7), entry(9), entry(12)];
        assert_eq!(closed(&listed, true, 9, 1024), [3, 7, 12]);
        assert_eq!(closed(&listed, true, -1, 1024), [3, 7, 9, 12]);
    }

    #[test]
    fn a_list_that_may_be_cut_short_is_followed_by_every_number_past_it() {
        let listed = [entry(0), entry(1), entry(2), entry(5), entry(6)];
        assert_eq!(closed(&listed, false, 8, 11), [5, 6, 7, 9, 10]);
    }

    #[test]
    fn no_list_at_all_closes_everything_above_stdio_up_to_the_limit() {
        assert_eq!(closed(&[], false, 4, 7), [3, 5, 6]);
        assert_eq!(closed(&[], true, -1, 7), Vec::<c_int>::new());
    }
}
