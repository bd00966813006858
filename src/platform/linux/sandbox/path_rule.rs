//! One Landlock path-beneath rule added to a ruleset descriptor, by the system call
//! itself: the layers built as raw descriptors (hidden.rs, root_reads.rs) add rules the
//! `landlock` crate's `Ruleset` has no way to add to a ruleset it did not make.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

/// `struct landlock_path_beneath_attr` (linux/landlock.h): packed.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Grants `access` beneath `file` in `ruleset`; no rights is no rule.
pub(super) fn add(ruleset: &OwnedFd, file: BorrowedFd<'_>, access: u64) -> io::Result<()> {
    if access == 0 {
        return Ok(());
    }
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: file.as_raw_fd(),
    };
    // SAFETY: `attr` is a live path-beneath attribute; the ruleset is ours.
    let done = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            1 as libc::c_int,
            &attr as *const PathBeneathAttr,
            0u32,
        )
    };
    if done < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
