//! Starting a process with `fork()`: the launcher of the macOS backend, built into the
//! Linux test builds too so its steps are exercised here (nothing can run a Mach-O on
//! the machines that build this crate; see docs/macos.md).
//!
//! Why not `posix_spawn`, which macOS prefers? A job needs, between fork and exec: a
//! new session, the PTY slave as its controlling terminal, SIGHUP ignored (PTY jobs),
//! every other caught signal back to default, and the working directory entered
//! through the descriptor that was verified (`launch.rs`). macOS's `posix_spawn` has
//! `POSIX_SPAWN_SETSID`, `POSIX_SPAWN_SETSIGDEF`, `posix_spawn_file_actions_addfchdir_np`
//! and `POSIX_SPAWN_CLOEXEC_DEFAULT`, but:
//! - nothing that makes a terminal the controlling one: there is no `TIOCSCTTY` action,
//!   and the kernel runs the file actions before it makes the new session, so opening
//!   the slave in a file action happens while the child is still in the host's session;
//! - no way to ignore a signal in the child only: an ignored disposition can only be
//!   inherited, which would mean ignoring SIGHUP in Node itself around every spawn.
//!
//! (node-pty, for the same reasons, spawns a helper executable that does these steps;
//! this crate is a single dynamic library with no executable of its own to spawn.)
//!
//! So the child is made by `fork()` and runs `launch::run_steps`, the very steps the
//! Linux `clone` child runs. macOS has no `clone(CLONE_VM)`, and its `vfork` child may
//! only exec or exit, so the child gets its own copy of the host: the kernel copies
//! the page tables, which makes a spawn from a large Node process slower than on Linux
//! (docs/macos.md). The child makes system calls only, on data prepared before the
//! fork (it is a copy of one thread of a multi-threaded process: a lock held by another
//! thread at the fork stays held forever there).
//!
//! The parent learns how the child fared through a close-on-exec pipe: an exec closes
//! it (end of file, success); a failed step writes its number and errno, then exits.
//!
//! macOS has no `close_range`: the child lists its open descriptors with
//! `proc_pidinfo(PROC_PIDLISTFDS)` into room the parent made, and closes them (`fds.rs`).

use std::ffi::c_char;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

#[cfg(target_os = "macos")]
use super::fds::FdScratch;
use super::launch::{failure, null_terminated, run_steps, ChildSteps, LaunchPlan};

#[cfg(target_os = "macos")]
impl LaunchPlan {
    /// Starts the process; returns its pid once it runs the new program. An error
    /// means nothing runs (a child that failed is reaped here).
    pub fn launch(&self) -> io::Result<i32> {
        launch(self)
    }
}

/// Starts `plan`'s program in a forked child; returns its pid once it runs the program.
/// An error means nothing runs (a child that failed is reaped here).
pub(super) fn launch(plan: &LaunchPlan) -> io::Result<i32> {
    let candidates: Vec<*const c_char> = plan.candidates.iter().map(|c| c.as_ptr()).collect();
    let argv = null_terminated(&plan.argv);
    let envp = null_terminated(&plan.envp);
    let (report_read, report_write) = report_pipe()?;
    #[cfg(target_os = "macos")]
    let mut fd_list = FdScratch::list();
    let steps = ChildSteps {
        plan,
        candidates: &candidates,
        tried: None,
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        keep: report_write.as_raw_fd(),
        #[cfg(target_os = "macos")]
        open_fds: FdScratch::over(&mut fd_list),
    };
    // SAFETY: all signals are blocked in this thread across the fork, so no handler of
    // the host runs in the child before the child has reset them (libuv's handlers
    // would write into pipes the host shares with it). The child only makes system
    // calls on `steps` (its own copy) and ends in exec or `_exit`, never returning here.
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut saved: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut saved);
        let pid = libc::fork();
        if pid == 0 {
            let (step, errno) = run_steps(&steps, false, false);
            let report = [step as i32, errno];
            // One write of 8 bytes to a pipe is atomic; if it fails the parent sees
            // end of file and then a child that exited with 127.
            libc::write(
                report_write.as_raw_fd(),
                report.as_ptr().cast(),
                std::mem::size_of_val(&report),
            );
            libc::_exit(127);
        }
        let fork_error = io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &saved, std::ptr::null_mut());
        if pid < 0 {
            return Err(fork_error);
        }
        pid
    };
    // The parent's write end closes here, so end of file means the child's copy is
    // gone too: closed by the exec.
    drop(report_write);
    let mut report = [0u8; 8];
    let got = read_report(&report_read, &mut report);
    if got == 0 {
        return Ok(pid);
    }
    crate::platform::os::child::reap_blocking(pid);
    if got < report.len() {
        return Err(io::Error::other(
            "the new process failed before exec and its report was cut short",
        ));
    }
    let step = i32::from_ne_bytes([report[0], report[1], report[2], report[3]]);
    let errno = i32::from_ne_bytes([report[4], report[5], report[6], report[7]]);
    Err(failure(step, errno))
}

/// Reads until `buf` is full or end of file; returns how many bytes came.
fn read_report(pipe: &OwnedFd, buf: &mut [u8]) -> usize {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: reading into the live rest of `buf`.
        let n = unsafe { libc::read(pipe.as_raw_fd(), buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        if n > 0 {
            got += n as usize;
        } else if n == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break;
        }
    }
    got
}

/// The report pipe, both ends close-on-exec and above 2: the child's stdio set-up
/// overwrites 0, 1 and 2, which a host with closed standard descriptors would get.
fn report_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = super::pipes::pipe_pair()?;
    Ok((above_stdio(read)?, above_stdio(write)?))
}

fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: fcntl on a descriptor owned here; the copy becomes owned at once and the
    // original closes when `fd` drops.
    unsafe {
        let lifted = libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3);
        if lifted < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(OwnedFd::from_raw_fd(lifted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::{OsStr, OsString};
    use std::io::Read;
    use std::os::fd::RawFd;

    fn plan(program: &str, args: &[&str], cwd: RawFd, stdio: [RawFd; 3]) -> LaunchPlan {
        let env = [(OsString::from("PATH"), OsString::from("/usr/bin:/bin"))];
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        LaunchPlan::new(OsStr::new(program), &args, &env, cwd, stdio).expect("plan")
    }

    /// The forked child runs the same steps as Linux's clone child: its own session
    /// (and so its own process group), the verified directory, the given stdio, and no
    /// inherited descriptor above 2.
    #[test]
    fn a_forked_child_gets_its_session_directory_and_stdio_and_nothing_inherited() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cwd: OwnedFd = std::fs::File::open(dir.path()).expect("open dir").into();
        let (out_read, out_write) = super::super::pipes::pipe_pair().expect("pipe");
        // A descriptor the host left inheritable (no close-on-exec), as an IPC channel
        // would be: the job must not see it. /dev/null, so that other tests' children,
        // started meanwhile by std's Command, keep nothing that matters open.
        // SAFETY: open returns a fresh descriptor, owned at once.
        let leaked = unsafe { OwnedFd::from_raw_fd(libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY)) };
        let script = format!(
            "echo pgid=$(ps -o pgid= -p $$ | tr -d ' ') pid=$$; pwd; \
             if [ -e /dev/fd/{0} ]; then echo leaked; else echo closed; fi",
            leaked.as_raw_fd()
        );
        let fd = out_write.as_raw_fd();
        let pid = launch(&plan("sh", &["-c", &script], cwd.as_raw_fd(), [fd, fd, fd])).expect("launch");
        drop(out_write);
        drop(leaked);
        let mut got = String::new();
        std::fs::File::from(out_read).read_to_string(&mut got).expect("read");
        crate::platform::os::child::reap_blocking(pid);
        let mut lines = got.lines();
        assert_eq!(lines.next(), Some(format!("pgid={pid} pid={pid}").as_str()), "{got}");
        let here = dir.path().canonicalize().expect("canonical");
        assert_eq!(lines.next().map(std::path::PathBuf::from), Some(here), "{got}");
        assert_eq!(lines.next(), Some("closed"), "{got}");
    }

    #[test]
    fn a_failed_exec_in_a_forked_child_is_an_error_with_its_errno() {
        let cwd: OwnedFd = std::fs::File::open("/").expect("open /").into();
        let missing = launch(&plan("no-such-program-here", &[], cwd.as_raw_fd(), [0, 1, 2]));
        assert_eq!(missing.err().map(|e| e.kind()), Some(io::ErrorKind::NotFound));
        let not_a_directory: OwnedFd = std::fs::File::open("/dev/null").expect("open").into();
        let error = launch(&plan("true", &[], not_a_directory.as_raw_fd(), [0, 1, 2])).expect_err("fchdir fails");
        assert!(error.to_string().starts_with("entering the directory"), "{error}");
    }
}
