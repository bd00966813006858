//! Whether a PTY job is waiting for input: a process of the terminal's foreground
//! process group is blocked reading the terminal.
//!
//! The kernel says what each process is blocked in (`/proc/<pid>/syscall`: the call's
//! number and arguments, or `running`), so no guess is made from the output's shape:
//! - `read`/`readv` on a descriptor that is the job's terminal (bash's `read`, `ed`, `cat`);
//! - `select`/`pselect6` with the terminal in the read set (Python, sqlite3, bc: all
//!   `pselect6` on fd 0), the set read from the process's memory;
//! - `poll`/`ppoll` with the terminal among the descriptors polled for input (gdb);
//! - `epoll_wait`/`epoll_pwait` on an epoll set holding the terminal for input (Node's
//!   REPL), the set read from `/proc/<pid>/fdinfo`.
//!
//! A process that sleeps, computes, writes, or reads a pipe, a file or a socket is
//! never taken for one waiting at the terminal. The caller adds the other half: no
//! output for a settle time (see `crate::job`), so a prompt printed just before the
//! read is in the output when the wait returns.
//!
//! Linux only (`/proc`); the other platforms answer "not known" (false).

use std::fs::{self, File};
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::os::unix::fs::FileExt;

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::pty::ptsname;
use rustix::termios::tcgetpgrp;

use crate::platform::InputState;

/// Processes of the foreground group examined at most (a build's process tree can be
/// large; the reader of the terminal is almost always among the first few).
const MAX_PROCESSES: usize = 256;
/// Descriptors of a poll or select set examined at most.
const MAX_SET: u64 = 1024;

/// The terminal of a job: its foreground process group and its device's path.
pub struct TerminalState {
    pub foreground: i32,
    pub path: String,
    /// The PTY master, open for as long as this is used (the caller's).
    master: RawFd,
}

impl TerminalState {
    /// Reads the foreground group and the slave's name from the PTY master.
    pub fn of_master(master: RawFd) -> Option<Self> {
        // SAFETY: the caller keeps `master` open across this call.
        let master = unsafe { BorrowedFd::borrow_raw(master) };
        // No foreground group (rustix says so with an error): nobody reads the terminal.
        let foreground = tcgetpgrp(master).ok()?.as_raw_nonzero().get();
        let path = ptsname(master, Vec::new()).ok()?.into_string().ok()?;
        Some(Self {
            foreground,
            path,
            master: master.as_raw_fd(),
        })
    }

    /// The program name (`comm`) of the foreground group's leader: what the terminal is
    /// talking to now (`bash` at a shell prompt, `python3` in a REPL started from it).
    pub fn foreground_program(&self) -> Option<String> {
        program_name(self.foreground)
    }

    /// Whether some process of the foreground group, among `session_leader`'s
    /// descendants (itself included), is blocked reading this terminal, with all the
    /// terminal's output read.
    pub fn awaits_input(&self, session_leader: i32) -> bool {
        foreground_members(session_leader, self.foreground)
            .into_iter()
            .any(|pid| self.blocked_reading(pid))
            && !self.unread_output()
    }

    /// Output is waiting in the terminal, not yet read by the job's reader (a loaded
    /// machine): the prompt it may hold has not been seen, so nothing is reported yet.
    /// Asked after the reader of the terminal was found blocked, not before: a program
    /// that prints its prompt and blocks between the two looks would otherwise be
    /// reported waiting with its prompt still unread.
    ///
    /// A `poll`, not `FIONREAD`: what the program wrote reaches the master's line
    /// discipline later, from a kernel worker (the tty's flip buffer), which on a busy
    /// machine may not have run yet; `FIONREAD` counts only what it has moved, while
    /// the line discipline's `poll` first waits for that worker (n_tty's poll flushes
    /// the port's buffer work when it finds nothing), so no written byte is missed.
    fn unread_output(&self) -> bool {
        // SAFETY: the caller of `of_master` keeps the master open while this is used.
        let master = unsafe { BorrowedFd::borrow_raw(self.master) };
        let mut fds = [PollFd::new(&master, PollFlags::IN)];
        match poll(&mut fds, Some(&Timespec::default())) {
            Ok(0) => false,
            Ok(_) => fds[0].revents().contains(PollFlags::IN),
            // Unknown: say unread, so nothing is reported on a guess.
            Err(_) => true,
        }
    }

    fn blocked_reading(&self, pid: i32) -> bool {
        let Ok(text) = fs::read_to_string(format!("/proc/{pid}/syscall")) else {
            return false;
        };
        let Some(call) = BlockedCall::parse(&text) else {
            return false;
        };
        match call.kind() {
            Some(Kind::Read) => self.is_terminal(pid, call.args[0]),
            Some(Kind::Select) => self.select_reads_terminal(pid, call.args[0], call.args[1]),
            Some(Kind::Poll) => self.poll_reads_terminal(pid, call.args[0], call.args[1]),
            Some(Kind::Epoll) => self.epoll_reads_terminal(pid, call.args[0]),
            None => false,
        }
    }

    /// The descriptor is the job's terminal: opened by its name, or as `/dev/tty` (what
    /// password prompts open), which for a process of the terminal's foreground group
    /// is this terminal.
    fn is_terminal(&self, pid: i32, fd: u64) -> bool {
        fs::read_link(format!("/proc/{pid}/fd/{fd}"))
            .is_ok_and(|target| target.as_os_str() == self.path.as_str() || target.as_os_str() == "/dev/tty")
    }

    /// `fd_set` is a bitmap of `nfds` bits in the process's memory.
    fn select_reads_terminal(&self, pid: i32, nfds: u64, read_set: u64) -> bool {
        if read_set == 0 || nfds == 0 || nfds > MAX_SET {
            return false;
        }
        let Some(bits) = read_memory(pid, read_set, nfds.div_ceil(8) as usize) else {
            return false;
        };
        (0..nfds).any(|fd| bits[(fd / 8) as usize] & (1 << (fd % 8)) != 0 && self.is_terminal(pid, fd))
    }

    /// `struct pollfd { int fd; short events; short revents; }`, `nfds` of them.
    fn poll_reads_terminal(&self, pid: i32, fds: u64, nfds: u64) -> bool {
        if fds == 0 || nfds == 0 || nfds > MAX_SET {
            return false;
        }
        let Some(bytes) = read_memory(pid, fds, nfds as usize * 8) else {
            return false;
        };
        bytes.chunks_exact(8).any(|entry| {
            let fd = i32::from_ne_bytes([entry[0], entry[1], entry[2], entry[3]]);
            let events = i16::from_ne_bytes([entry[4], entry[5]]);
            fd >= 0 && events & (libc::POLLIN | libc::POLLPRI) != 0 && self.is_terminal(pid, fd as u64)
        })
    }

    /// The epoll set's members are listed in its fdinfo: `tfd: <fd> events: <hex> ...`.
    fn epoll_reads_terminal(&self, pid: i32, epfd: u64) -> bool {
        let Ok(info) = fs::read_to_string(format!("/proc/{pid}/fdinfo/{epfd}")) else {
            return false;
        };
        info.lines()
            .filter_map(epoll_member)
            .any(|(fd, events)| events & (libc::EPOLLIN | libc::EPOLLPRI) as u32 != 0 && self.is_terminal(pid, fd))
    }
}

/// What the terminal on `master` says about its readers: whether a process of its
/// foreground group (among `session_leader`'s descendants) is blocked reading it (only when `check_awaiting`: the caller knows
/// the job has been quiet for the settle time), and the foreground program's name when
/// `name_program`.
pub fn input_state(master: RawFd, session_leader: i32, check_awaiting: bool, name_program: bool) -> InputState {
    let Some(terminal) = TerminalState::of_master(master) else {
        return InputState::default();
    };
    InputState {
        awaiting: check_awaiting && terminal.awaits_input(session_leader),
        program: name_program.then(|| terminal.foreground_program()).flatten(),
    }
}

/// A process's program name (`/proc/<pid>/comm`, at most 15 bytes).
pub fn program_name(pid: i32) -> Option<String> {
    let name = fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(name.trim_end_matches('\n').to_string())
}

/// One `tfd:` line of an epoll fdinfo: the member descriptor and its event mask.
fn epoll_member(line: &str) -> Option<(u64, u32)> {
    let mut words = line.split_whitespace();
    if words.next()? != "tfd:" {
        return None;
    }
    let fd = words.next()?.parse().ok()?;
    if words.next()? != "events:" {
        return None;
    }
    let events = u32::from_str_radix(words.next()?, 16).ok()?;
    Some((fd, events))
}

fn read_memory(pid: i32, address: u64, len: usize) -> Option<Vec<u8>> {
    let file = File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut buf = vec![0u8; len];
    file.read_exact_at(&mut buf, address).ok()?;
    Some(buf)
}

/// What `/proc/<pid>/syscall` shows of a process blocked in a system call.
struct BlockedCall {
    number: i64,
    args: [u64; 6],
}

enum Kind {
    Read,
    Select,
    Poll,
    Epoll,
}

impl BlockedCall {
    /// `<nr> <arg1> ... <arg6> <sp> <pc>` (hex arguments); `running` or `-1 ...` for a
    /// process that is not in a call.
    fn parse(text: &str) -> Option<Self> {
        let mut words = text.split_whitespace();
        let number: i64 = words.next()?.parse().ok()?;
        let mut args = [0u64; 6];
        for arg in args.iter_mut() {
            *arg = u64::from_str_radix(words.next()?.trim_start_matches("0x"), 16).ok()?;
        }
        Some(Self { number, args })
    }

    fn kind(&self) -> Option<Kind> {
        let n = self.number;
        if n == libc::SYS_read || n == libc::SYS_readv {
            return Some(Kind::Read);
        }
        if n == libc::SYS_pselect6 {
            return Some(Kind::Select);
        }
        if n == libc::SYS_ppoll {
            return Some(Kind::Poll);
        }
        if n == libc::SYS_epoll_pwait || n == libc::SYS_epoll_pwait2 {
            return Some(Kind::Epoll);
        }
        legacy_kind(n)
    }
}

/// The older calls that x86_64 still has and newer architectures dropped.
#[cfg(target_arch = "x86_64")]
fn legacy_kind(n: i64) -> Option<Kind> {
    match n {
        libc::SYS_select => Some(Kind::Select),
        libc::SYS_poll => Some(Kind::Poll),
        libc::SYS_epoll_wait => Some(Kind::Epoll),
        _ => None,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn legacy_kind(_: i64) -> Option<Kind> {
    None
}

/// The sleeping members of process group `group` among `root`'s descendants (itself
/// included), found through the kernel's children lists.
fn foreground_members(root: i32, group: i32) -> Vec<i32> {
    let mut members = Vec::new();
    let mut queue = vec![root];
    let mut seen = 0;
    while let Some(pid) = queue.pop() {
        seen += 1;
        if seen > MAX_PROCESSES {
            break;
        }
        if let Some(stat) = super::process_tree::read_stat(pid) {
            if stat.pgrp == group && stat.state == 'S' {
                members.push(pid);
            }
        }
        queue.extend(children(pid));
    }
    members
}

fn children(pid: i32) -> Vec<i32> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for task in tasks.flatten() {
        if let Ok(list) = fs::read_to_string(task.path().join("children")) {
            out.extend(list.split_whitespace().filter_map(|p| p.parse::<i32>().ok()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_blocked_calls_and_not_running_ones() {
        let call = BlockedCall::parse("270 0x1 0x7ffc649d2b20 0x0 0x0 0x7ffc 0x0 0x7ffc 0x7f12\n");
        let call = call.expect("a blocked call parses");
        assert_eq!(call.number, 270);
        assert_eq!(call.args[..2], [1, 0x7ffc649d2b20]);
        assert!(BlockedCall::parse("running\n").is_none());
        assert!(BlockedCall::parse("").is_none());
    }

    #[test]
    fn output_written_a_moment_ago_is_unread_before_any_worker_moved_it() {
        use rustix::fs::{open, Mode, OFlags};
        use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("openpt");
        grantpt(&master).expect("grantpt");
        unlockpt(&master).expect("unlockpt");
        let name = ptsname(&master, Vec::new()).expect("ptsname");
        let slave = open(name.as_c_str(), OFlags::RDWR | OFlags::NOCTTY, Mode::empty()).expect("slave");
        let terminal = TerminalState {
            foreground: 0,
            path: String::new(),
            master: master.as_raw_fd(),
        };
        assert!(!terminal.unread_output(), "nothing written yet");
        // Each byte is asked for at once after its write, before the kernel's tty
        // worker may have moved it to the master's side: it counts all the same.
        for round in 0..2000 {
            assert_eq!(rustix::io::write(&slave, b"x").expect("write"), 1);
            assert!(terminal.unread_output(), "round {round}: a written byte was not seen");
            let mut byte = [0u8; 1];
            assert_eq!(rustix::io::read(&master, &mut byte).expect("read"), 1);
        }
        assert!(!terminal.unread_output(), "all read");
    }

    #[test]
    fn reads_epoll_members() {
        assert_eq!(
            epoll_member("tfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:18"),
            Some((0, 0x19))
        );
        assert_eq!(epoll_member("pos:\t0"), None);
    }
}
