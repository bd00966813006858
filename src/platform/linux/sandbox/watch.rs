//! How the service learns that no process of a sandboxed job is left anywhere when no
//! cgroup holds the job: the job's seccomp filter is installed with a listener
//! (`SECCOMP_FILTER_FLAG_NEW_LISTENER`), and the kernel reports a hang-up on it once
//! the filter has no user left (Linux 5.8 and later; earlier kernels never report it,
//! which only means "something may be left").
//!
//! Every process the job starts carries the filter, whatever it does: `setsid`, a
//! double fork, a cleared environment, closed descriptors, a filter of its own stacked
//! on ours (which counts as a user of ours). A filter cannot be dropped, and the job's
//! Landlock domain is entered in the same spawn child just before it, so the two are
//! carried by the same processes. The hang-up therefore means that no process in the
//! job's Landlock domain exists, and none can appear again (only a member could fork
//! one). That is what lets a finished job's TMPDIR go to a later job without a cgroup
//! (src/sandbox/tmpdir.rs): handed over earlier, a process the job left behind would
//! reach the later job's files through its own rule on that directory.
//!
//! The filter never answers `SECCOMP_RET_USER_NOTIF`, so the listener never carries a
//! request: it only reports the hang-up. The cost for the job: the kernel allows one
//! listener per chain of filters, so a job cannot add a listener of its own (`EBUSY`).
//! That is why a listener is asked for only where no cgroup holds the job
//! (`super::Prepared::new`), and where the host already runs under a filter with a
//! listener, the job's filter is installed without one (the same confinement; its
//! TMPDIR is then not reused).
//!
//! The listener exists only in the spawn child (a filter is installed on the calling
//! thread), close-on-exec there; the child sends it to the parent over a socket pair
//! made for this one spawn, so a listener can never be taken for another job's.

use std::ffi::c_int;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::net::{
    recvmsg, socketpair, AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SocketFlags, SocketType,
};

/// The socket pair one spawn's listener travels over, child to parent.
pub struct Channel {
    parent: OwnedFd,
    child: OwnedFd,
}

impl Channel {
    pub fn new() -> io::Result<Self> {
        let (parent, child) = socketpair(AddressFamily::UNIX, SocketType::DGRAM, SocketFlags::CLOEXEC, None)?;
        Ok(Self { parent, child })
    }

    /// The end the spawn child sends on (closed with every other inherited descriptor
    /// before exec).
    pub fn child_end(&self) -> RawFd {
        self.child.as_raw_fd()
    }

    /// After the launch: the listener the child sent, if it made one. The child has
    /// exec'd or exited by then (the launch waits for that), so it is already queued.
    pub fn receive(&self) -> Option<OwnedFd> {
        let mut byte = [0u8; 1];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let flags = RecvFlags::DONTWAIT | RecvFlags::CMSG_CLOEXEC;
        recvmsg(&self.parent, &mut [io::IoSliceMut::new(&mut byte)], &mut control, flags).ok()?;
        let mut received = None;
        for message in control.drain() {
            if let RecvAncillaryMessage::ScmRights(fds) = message {
                for fd in fds {
                    // One is sent; anything more is dropped (closed) here.
                    received.get_or_insert(fd);
                }
            }
        }
        received
    }
}

/// No process that carries the filter `listener` was made for is left (the kernel
/// reports a hang-up), and none can come back.
pub fn nothing_left(listener: &OwnedFd) -> bool {
    let mut fds = [PollFd::new(listener, PollFlags::IN)];
    // Asked, not waited for.
    let now = Timespec { tv_sec: 0, tv_nsec: 0 };
    poll(&mut fds, Some(&now)).is_ok() && fds[0].revents().contains(PollFlags::HUP)
}

/// In the spawn child: installs `filter` with a listener and sends the listener over
/// `to`; where no listener can be had (the host's own filter has one: `EBUSY`; a
/// kernel before 5.0: `EINVAL`), installs it without one. Returns false (errno set)
/// only if the filter could not be installed at all.
///
/// # Safety
/// Async-signal-safe and allocation-free: system calls on the caller's data only.
pub unsafe fn install_reporting(filter: *const libc::sock_fprog, to: RawFd) -> bool {
    let listener = libc::syscall(
        libc::SYS_seccomp,
        libc::SECCOMP_SET_MODE_FILTER,
        libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as u32,
        filter,
    );
    if listener < 0 {
        return libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, 0u32, filter) >= 0;
    }
    let listener = listener as c_int;
    // A failed send leaves the parent without a listener: the TMPDIR is not reused.
    send_descriptor(to, listener);
    libc::close(listener);
    true
}

/// `sendmsg` of one descriptor with one byte, everything on the stack.
unsafe fn send_descriptor(to: RawFd, fd: c_int) {
    let mut byte = 0u8;
    let mut iov = libc::iovec {
        iov_base: (&mut byte as *mut u8).cast(),
        iov_len: 1,
    };
    // Room for one `cmsghdr` and one descriptor, aligned as a `cmsghdr` must be.
    let mut control = [0u64; 4];
    let space = libc::CMSG_SPACE(std::mem::size_of::<c_int>() as u32) as usize;
    if space > std::mem::size_of_val(&control) {
        return;
    }
    let mut message: libc::msghdr = std::mem::zeroed();
    message.msg_iov = &mut iov;
    message.msg_iovlen = 1;
    message.msg_control = control.as_mut_ptr().cast();
    message.msg_controllen = space as _;
    let header = libc::CMSG_FIRSTHDR(&message);
    if header.is_null() {
        return;
    }
    (*header).cmsg_level = libc::SOL_SOCKET;
    (*header).cmsg_type = libc::SCM_RIGHTS;
    (*header).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<c_int>() as u32) as _;
    std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<c_int>(), fd);
    libc::sendmsg(to, &message, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL);
}
