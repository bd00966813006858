//! What a PTY job's terminal says about its readers, on macOS.
//!
//! Whether a process is waiting for input at the terminal is not known here, so it is
//! never reported (`awaiting` is always false). Linux tells it from what each process
//! is blocked in (`/proc/<pid>/syscall`, src/platform/linux/input_wait.rs); macOS shows
//! another process no such thing: libproc's thread information gives a thread's run
//! state (waiting) but not what it waits on, and the kernel leaves the wait-channel
//! fields of its process list (`sysctl(KERN_PROC)`) empty. A program reading the
//! terminal, one sleeping and one waiting on a pipe or a socket all look the same, and
//! a guess from the output's shape is what the service refuses to make. So on macOS a
//! run or a wait ends on its pattern, the exit, its delay or its timeout, never early
//! at a prompt (docs/macos.md).
//!
//! The foreground program is known: the terminal's foreground process group (asked of
//! the PTY master, which macOS answers for the side that does not hold the terminal)
//! and the name of that group's leader.

use std::os::fd::{BorrowedFd, RawFd};

use crate::platform::InputState;

/// Room for `proc_name`'s answer: it wants at least 32 bytes (twice `MAXCOMLEN`).
const NAME_ROOM: usize = 64;

/// What the terminal on `master` says about its readers: never that one is waiting
/// (see the module comment), and the foreground program's name when `name_program`.
pub fn input_state(master: RawFd, _session_leader: i32, _check_awaiting: bool, name_program: bool) -> InputState {
    InputState {
        awaiting: false,
        program: if name_program {
            foreground_group(master).and_then(program_name)
        } else {
            None
        },
    }
}

/// The terminal's foreground process group, when it has one.
fn foreground_group(master: RawFd) -> Option<i32> {
    // SAFETY: the caller keeps `master` open across this call.
    let master = unsafe { BorrowedFd::borrow_raw(master) };
    rustix::termios::tcgetpgrp(master)
        .ok()
        .map(|group| group.as_raw_nonzero().get())
}

/// A process's program name, as the kernel keeps it (up to 32 bytes).
pub fn program_name(pid: i32) -> Option<String> {
    let mut buf = [0u8; NAME_ROOM];
    // SAFETY: proc_name writes at most `buf.len()` bytes, NUL-terminated, into the local.
    let n = unsafe { libc::proc_name(pid, buf.as_mut_ptr().cast(), buf.len() as u32) };
    let len = usize::try_from(n).ok().filter(|&n| n > 0)?.min(buf.len());
    Some(String::from_utf8_lossy(&buf[..len]).into_owned())
}
