//! Starting a process without copying the host: `clone(CLONE_VM | CLONE_VFORK)`.
//!
//! A job needs a few steps between fork and exec that `posix_spawn` cannot express
//! together: a new session, the PTY as controlling terminal (`TIOCSCTTY`), SIGHUP
//! ignored, and the working directory entered through a verified descriptor. With
//! `fork()` those steps are easy, but `fork()` copies the page tables of the whole
//! Node process (hundreds of MiB in a real CLI) and leaves every page copy-on-write
//! until the child execs: that was most of a spawn's cost. This is the technique of
//! glibc's own `posix_spawn`: the child borrows the parent's memory on a stack of its
//! own, runs only raw system calls on data prepared beforehand, and the calling thread
//! sleeps until the child has exec'd or failed. No crate offers it with these steps.
//!
//! Rules for the code in `child_main` and `run_steps` (on Linux it runs in the parent's
//! memory): no allocation, no locks, no panics, nothing that touches Rust or libc state
//! beyond system calls.
//!
//! macOS has no `clone`: there the child is made by `fork()` and runs the same steps
//! (`run_steps`) in its own copy of the host; `fork.rs` says why and how.

#[cfg(target_os = "linux")]
use std::ffi::c_void;
use std::ffi::{c_char, c_int, CString};
use std::io;
use std::os::fd::RawFd;
#[cfg(target_os = "linux")]
use std::sync::atomic::{AtomicI32, Ordering};

/// Stack of the short-lived child; it only makes system calls.
#[cfg(target_os = "linux")]
const CHILD_STACK_BYTES: usize = 64 * 1024;

/// Everything the child needs, made before it exists.
pub struct LaunchPlan {
    /// Paths to try in order, as `execvp` would: the program itself if it names a
    /// path, otherwise the program in each `PATH` directory.
    pub(super) candidates: Vec<CString>,
    pub(super) argv: Vec<CString>,
    pub(super) envp: Vec<CString>,
    pub cwd: RawFd,
    /// Descriptors that become the child's 0, 1 and 2.
    pub stdio: [RawFd; 3],
    /// Make stdin (a PTY slave) the controlling terminal of the new session.
    pub controlling_terminal: bool,
    /// The job's shell is its session leader: when it exits the kernel hangs up the
    /// terminal's foreground group, which would kill `server &` the moment its shell
    /// returns. Jobs are ended by `kill` (TERM, then KILL), never by HUP.
    pub ignore_hangup: bool,
    /// The job's cgroup, which the child is created in (see `platform::linux::cgroup`).
    #[cfg(target_os = "linux")]
    pub containment: crate::platform::os::Containment,
    /// The job's sandbox, applied last before exec (`platform::linux::sandbox`).
    #[cfg(target_os = "linux")]
    pub sandbox: Option<crate::platform::os::sandbox::Prepared>,
}

/// What went wrong in the child, written there and read by the parent afterwards.
#[cfg(target_os = "linux")]
struct Outcome {
    step: AtomicI32,
    errno: AtomicI32,
    /// The position, in the order tried, of the candidate the child is exec'ing: after
    /// a success, the one that runs.
    tried: AtomicI32,
    /// Written by the parent before the clone: whether the child was created in the
    /// job's cgroup, and shares our descriptor table (for its sandbox's listener:
    /// `linux::sandbox::watch`) until it takes one of its own (`clone3::clone_vfork`).
    birth: crate::platform::os::clone3::Birth,
}

/// What the child's steps read; it points into a `LaunchPlan` and vectors that outlive
/// the child's use of them.
pub(super) struct ChildSteps<'a> {
    pub plan: &'a LaunchPlan,
    pub candidates: &'a [*const c_char],
    /// Where the child writes the position of each candidate before it tries it, or
    /// nowhere (a forked child's memory is its own).
    pub tried: Option<&'a std::sync::atomic::AtomicI32>,
    pub argv: *const *const c_char,
    pub envp: *const *const c_char,
    /// A descriptor above 2 the child keeps open past the clean-up of inherited ones
    /// (the fork launcher's report pipe), or -1.
    pub keep: RawFd,
    /// Room for the list of the child's open descriptors, made by the parent (the
    /// child may not allocate): macOS has no `close_range`.
    #[cfg(target_os = "macos")]
    pub open_fds: super::fds::FdScratch,
}

/// Pointers the child reads, and where it reports a failure.
#[cfg(target_os = "linux")]
struct ChildArgs<'a> {
    steps: ChildSteps<'a>,
    outcome: &'a Outcome,
}

#[derive(Clone, Copy)]
#[repr(i32)]
pub(super) enum Step {
    /// No step failed (the clone child's outcome starts here; the fork child reports
    /// failures only).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    None = 0,
    Setsid,
    Stdio,
    ControllingTerminal,
    Directory,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Sandbox,
    Exec,
}

impl Step {
    fn describe(code: i32) -> &'static str {
        match code {
            c if c == Step::Setsid as i32 => "setsid",
            c if c == Step::Stdio as i32 => "setting up stdio",
            c if c == Step::ControllingTerminal as i32 => "acquiring the terminal",
            c if c == Step::Directory as i32 => "entering the directory",
            c if c == Step::Sandbox as i32 => "entering the sandbox",
            _ => "exec",
        }
    }
}

/// `bytes` with a NUL after them; an error if they hold one.
fn c_string(bytes: impl Into<Vec<u8>>) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "a NUL byte in the command, an argument or the environment",
        )
    })
}

impl LaunchPlan {
    pub fn new(
        program: &std::ffi::OsStr,
        args: &[std::ffi::OsString],
        env: &[(std::ffi::OsString, std::ffi::OsString)],
        cwd: RawFd,
        stdio: [RawFd; 3],
    ) -> io::Result<Self> {
        use std::os::unix::ffi::OsStrExt;
        let path = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_bytes());
        let candidates = super::search_path::candidates(program.as_bytes(), path)
            .iter()
            .map(|p| c_string(p.as_slice()))
            .collect::<io::Result<Vec<_>>>()?;
        let mut argv = vec![c_string(program.as_bytes())?];
        for arg in args {
            argv.push(c_string(arg.as_bytes())?);
        }
        let envp = env
            .iter()
            .map(|(k, v)| {
                // Room for the NUL too, which `CString::new` would otherwise add by
                // growing (a copy) each of the forty-odd entries of every spawn.
                let mut entry = Vec::with_capacity(k.len() + v.len() + 2);
                entry.extend_from_slice(k.as_bytes());
                entry.push(b'=');
                entry.extend_from_slice(v.as_bytes());
                c_string(entry)
            })
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Self {
            candidates,
            argv,
            envp,
            cwd,
            stdio,
            controlling_terminal: false,
            ignore_hangup: false,
            #[cfg(target_os = "linux")]
            containment: Default::default(),
            #[cfg(target_os = "linux")]
            sandbox: None,
        })
    }

    /// Starts the process; returns its pid once it runs the new program. An error
    /// means nothing runs (a child that failed is reaped here).
    #[cfg(target_os = "linux")]
    pub fn launch(&self) -> io::Result<i32> {
        // Registered as ours before the daemon's orphan reaper can see it exit.
        super::reap::launching(|| self.start_child())
    }

    #[cfg(target_os = "linux")]
    fn start_child(&self) -> io::Result<i32> {
        // A sandboxed job may be refused some directories: where it found its program
        // says nothing of where another job finds it, and it neither uses nor tells
        // what was remembered.
        let remembers = self.sandbox.is_none();
        let first = remembers
            .then(|| super::path_memory::remembered(&self.candidates))
            .flatten();
        let order = super::path_memory::try_order(self.candidates.len(), first);
        let candidates: Vec<*const c_char> = order.iter().map(|&i| self.candidates[i].as_ptr()).collect();
        let argv = null_terminated(&self.argv);
        let envp = null_terminated(&self.envp);
        let outcome = Outcome {
            step: AtomicI32::new(Step::None as i32),
            errno: AtomicI32::new(0),
            tried: AtomicI32::new(0),
            birth: Default::default(),
        };
        let args = ChildArgs {
            steps: ChildSteps {
                plan: self,
                candidates: &candidates,
                tried: Some(&outcome.tried),
                argv: argv.as_ptr(),
                envp: envp.as_ptr(),
                keep: -1,
            },
            outcome: &outcome,
        };
        // Left uninitialised: the child writes before it reads, and zeroing 64 KiB (fresh
        // pages, so page faults too) was a measurable part of a spawn.
        let mut stack = Box::<[u8]>::new_uninit_slice(CHILD_STACK_BYTES);
        // The stack grows down from its end, which must be 16-byte aligned.
        let top = ((stack.as_mut_ptr() as usize + CHILD_STACK_BYTES) & !15) as *mut c_void;
        // SAFETY: all signals are blocked in this thread across the clone, so no handler
        // of the host can run on the child's borrowed memory before the child has reset
        // them; the child only reads `args` (alive until it has exec'd or exited, since
        // CLONE_VFORK suspends this thread until then) and writes `outcome`.
        let pid = unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut saved: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut saved);
            // As `libc::clone`, but in the job's cgroup when it has one.
            let pid = crate::platform::os::clone3::clone_vfork(
                child_main,
                stack.as_mut_ptr().cast(),
                top,
                (&args as *const ChildArgs<'_>).cast_mut().cast(),
                &self.containment,
                self.sandbox.as_ref().is_some_and(|s| s.shares_descriptors()),
                &outcome.birth,
            );
            let clone_error = io::Error::last_os_error();
            libc::pthread_sigmask(libc::SIG_SETMASK, &saved, std::ptr::null_mut());
            if pid < 0 {
                return Err(clone_error);
            }
            pid
        };
        drop(stack);
        let step = outcome.step.load(Ordering::Acquire);
        if step == Step::None as i32 {
            // Remembered after a whole search only, so each place is searched for
            // again once it is `REMEMBERED_FOR` old, however often it is used.
            if remembers && first.is_none() {
                let tried = usize::try_from(outcome.tried.load(Ordering::Acquire)).ok();
                if let Some(&index) = tried.and_then(|t| order.get(t)) {
                    super::path_memory::remember(&self.candidates, index);
                }
            }
            return Ok(pid);
        }
        crate::platform::os::child::reap_blocking(pid);
        Err(failure(step, outcome.errno.load(Ordering::Acquire)))
    }
}

/// The error for a child that failed at `step` with `errno`.
pub(super) fn failure(step: i32, errno: i32) -> io::Error {
    let error = io::Error::from_raw_os_error(errno);
    if step == Step::Exec as i32 {
        return error;
    }
    io::Error::new(error.kind(), format!("{}: {error}", Step::describe(step)))
}

pub(super) fn null_terminated(strings: &[CString]) -> Vec<*const c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// The child. Runs on its own stack in the parent's memory; see the module rules.
#[cfg(target_os = "linux")]
extern "C" fn child_main(raw: *mut c_void) -> c_int {
    // SAFETY: `raw` is the `ChildArgs` the parent keeps alive until this child execs
    // or exits; everything below is a system call on prepared data.
    unsafe {
        let args = &*(raw as *const ChildArgs<'_>);
        // A job no cgroup holds: its first process adopts what is orphaned below it
        // (kept across exec), so a `setsid -f`, a double fork or daemon(3) stays its
        // descendant and the search by parent links finds it while it runs
        // (docs/reliability.md, "Containment"). A refusal changes nothing else.
        if !args.outcome.birth.in_cgroup.load(Ordering::Acquire) {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        }
        let birth = &args.outcome.birth;
        let (step, errno) = run_steps(
            &args.steps,
            birth.shares_files.load(Ordering::Acquire),
            birth.handlers_cleared.load(Ordering::Acquire),
        );
        args.outcome.errno.store(errno, Ordering::Release);
        args.outcome.step.store(step as i32, Ordering::Release);
        libc::_exit(127)
    }
}

/// Where the calling thread's `errno` lives.
#[cfg(target_os = "linux")]
unsafe fn errno_location() -> *mut c_int {
    libc::__errno_location()
}

#[cfg(target_os = "macos")]
unsafe fn errno_location() -> *mut c_int {
    libc::__error()
}

use super::child_setup::{install_stdio, reset_signals};

/// Everything the child does between fork and exec, in order. Returns only if a step
/// failed: which one, and its errno. Async-signal-safe (see the module rules).
/// `shares_files`: the child shares the parent's descriptor table (Linux, a sandboxed
/// job's listener: `linux::sandbox::watch`); it must change no descriptor until the
/// sandbox step has given it a table of its own. `handlers_cleared`: the kernel reset
/// the child's caught signals to default at its birth (`clone3::clone_vfork`).
pub(super) unsafe fn run_steps(steps: &ChildSteps<'_>, shares_files: bool, handlers_cleared: bool) -> (Step, c_int) {
    let plan = steps.plan;
    let failed = |step: Step| -> (Step, c_int) { (step, *errno_location()) };
    reset_signals(plan.ignore_hangup, handlers_cleared);
    if libc::setsid() < 0 {
        return failed(Step::Setsid);
    }
    // Before stdio: the directory's descriptor may itself be 0, 1 or 2 (a host with
    // its stdin closed), which the stdio set-up overwrites.
    if libc::fchdir(plan.cwd) < 0 {
        return failed(Step::Directory);
    }
    // Before the descriptors are changed: a child that shares the parent's table
    // (`shares_files`) leaves it in this step, and the ruleset's descriptor is among
    // those closed below. What follows needs none of the privileges the sandbox takes
    // away, and the filter allows it (stdio descriptors opened before the sandbox
    // keep every right).
    #[cfg(target_os = "linux")]
    if let Some(sandbox) = &plan.sandbox {
        if !crate::platform::os::sandbox::apply(sandbox, shares_files) {
            return failed(Step::Sandbox);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = shares_files;
    if !install_stdio(&plan.stdio) {
        return failed(Step::Stdio);
    }
    if plan.controlling_terminal && libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
        return failed(Step::ControllingTerminal);
    }
    // Descriptors the host left inheritable (an IPC channel, a test runner's pipe)
    // are not the job's business, and a server started by the job would hold them
    // open for its whole life.
    close_inherited(steps);
    let mut empty: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut empty);
    libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    // As execvp: a missing or unreadable candidate moves on to the next; the error
    // reported is EACCES if any candidate was refused, else the last one's.
    let mut refused = false;
    for (position, &path) in steps.candidates.iter().enumerate() {
        if let Some(tried) = steps.tried {
            tried.store(position as i32, std::sync::atomic::Ordering::Release);
        }
        libc::execve(path, steps.argv, steps.envp);
        match *errno_location() {
            libc::EACCES => refused = true,
            libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
            _ => return failed(Step::Exec),
        }
    }
    if refused {
        *errno_location() = libc::EACCES;
    }
    failed(Step::Exec)
}

/// Closes every descriptor above 2 but `steps.keep`. Kernels before 5.9 lack
/// close_range; the close-on-exec flags still apply there.
#[cfg(target_os = "linux")]
unsafe fn close_inherited(steps: &ChildSteps<'_>) {
    let keep = steps.keep;
    if keep < 3 {
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
        return;
    }
    if keep > 3 {
        libc::syscall(libc::SYS_close_range, 3u32, (keep - 1) as u32, 0u32);
    }
    libc::syscall(libc::SYS_close_range, (keep + 1) as u32, u32::MAX, 0u32);
}

#[cfg(target_os = "macos")]
unsafe fn close_inherited(steps: &ChildSteps<'_>) {
    super::fds::close_inherited(steps.keep, &steps.open_fds);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::{OsStr, OsString};
    use std::io::{Read, Write};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    fn pipe() -> (std::fs::File, std::fs::File) {
        let (read, write) = super::super::pipes::pipe_pair().expect("pipe");
        (read.into(), write.into())
    }

    /// Puts a close-on-exec copy of `fd` on descriptor 0.
    #[cfg(target_os = "linux")]
    fn onto_stdin(fd: RawFd) {
        // SAFETY: descriptor juggling on descriptors the test owns or restores.
        unsafe {
            assert_eq!(libc::dup3(fd, 0, libc::O_CLOEXEC), 0);
        }
    }

    /// macOS has no dup3: the flag follows the copy.
    #[cfg(target_os = "macos")]
    fn onto_stdin(fd: RawFd) {
        // SAFETY: descriptor juggling on descriptors the test owns or restores.
        unsafe {
            assert_eq!(libc::dup2(fd, 0), 0);
            assert_eq!(libc::fcntl(0, libc::F_SETFD, libc::FD_CLOEXEC), 0);
        }
    }

    fn run_cat(stdio: [RawFd; 3], cwd: &OwnedFd) -> i32 {
        let env = [(OsString::from("PATH"), OsString::from("/usr/bin:/bin"))];
        let plan = LaunchPlan::new(OsStr::new("cat"), &[], &env, cwd.as_raw_fd(), stdio).expect("plan");
        plan.launch().expect("launch")
    }

    /// Descriptor 0 of this test process is borrowed for a pipe end (close-on-exec, as
    /// every descriptor the service makes): a job whose stdin source already *is* 0
    /// must still get it, and one whose stdout source is 0 must not see it clobbered
    /// by its own stdin. Restored afterwards; the test harness never reads stdin.
    #[test]
    fn stdio_sources_that_are_already_0_1_or_2_survive_the_shuffle() {
        let cwd: OwnedFd = std::fs::File::open("/").expect("open /").into();
        // SAFETY: plain descriptor juggling on descriptors this test owns or restores.
        let saved_stdin = unsafe { OwnedFd::from_raw_fd(libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3)) };

        // stdin source is descriptor 0 itself.
        let (input_read, mut input_write) = pipe();
        let (mut output_read, output_write) = pipe();
        onto_stdin(input_read.as_raw_fd());
        drop(input_read);
        let pid = run_cat([0, output_write.as_raw_fd(), output_write.as_raw_fd()], &cwd);
        drop(output_write);
        input_write.write_all(b"stdin was descriptor 0\n").expect("write");
        drop(input_write);
        unsafe {
            libc::dup2(saved_stdin.as_raw_fd(), 0);
        }
        let mut got = String::new();
        output_read.read_to_string(&mut got).expect("read");
        crate::platform::os::child::reap_blocking(pid);
        assert_eq!(got, "stdin was descriptor 0\n");

        // stdout source is descriptor 0, which the stdin dup2 would overwrite first.
        let (input_read, mut input_write) = pipe();
        let (mut output_read, output_write) = pipe();
        onto_stdin(output_write.as_raw_fd());
        drop(output_write);
        let pid = run_cat([input_read.as_raw_fd(), 0, 0], &cwd);
        unsafe {
            libc::dup2(saved_stdin.as_raw_fd(), 0);
        }
        drop(input_read);
        input_write.write_all(b"stdout was descriptor 0\n").expect("write");
        drop(input_write);
        let mut got = String::new();
        output_read.read_to_string(&mut got).expect("read");
        crate::platform::os::child::reap_blocking(pid);
        assert_eq!(got, "stdout was descriptor 0\n");
    }

    #[test]
    fn a_failed_exec_is_an_error_with_its_errno() {
        let cwd: OwnedFd = std::fs::File::open("/").expect("open /").into();
        let env = [(OsString::from("PATH"), OsString::from("/nonexistent"))];
        let plan = LaunchPlan::new(OsStr::new("true"), &[], &env, cwd.as_raw_fd(), [0, 1, 2]).expect("plan");
        let error = plan.launch().expect_err("nothing to run");
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
        let bad = LaunchPlan::new(OsStr::new("a\0b"), &[], &env, cwd.as_raw_fd(), [0, 1, 2]);
        assert_eq!(bad.err().map(|e| e.kind()), Some(io::ErrorKind::InvalidInput));
    }

    /// What the job's program starts with, whichever way the child was made (`clone3`
    /// with the kernel resetting caught signals, or the plain clone and the child's own
    /// loop): nothing blocked; SIGPIPE at default though the host ignores it; SIGHUP
    /// ignored when asked; a signal the host ignores for itself still ignored, as an
    /// `exec` keeps it.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_program_starts_with_the_signals_a_shell_expects() {
        // SAFETY: dispositions of this test process that nothing else here uses
        // (SIGPIPE is ignored by Rust's runtime already).
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
            libc::signal(libc::SIGUSR2, libc::SIG_IGN);
        }
        let cwd: OwnedFd = std::fs::File::open("/").expect("open /").into();
        let env = [(OsString::from("PATH"), OsString::from("/usr/bin:/bin"))];
        let args = [
            OsString::from("-E"),
            OsString::from("^Sig(Blk|Ign):"),
            OsString::from("/proc/self/status"),
        ];
        let (mut output_read, output_write) = pipe();
        let stdio = [output_write.as_raw_fd(); 3];
        let mut plan = LaunchPlan::new(OsStr::new("grep"), &args, &env, cwd.as_raw_fd(), stdio).expect("plan");
        plan.ignore_hangup = true;
        let pid = plan.launch().expect("launch");
        drop(plan);
        drop(output_write);
        let mut got = String::new();
        output_read.read_to_string(&mut got).expect("read");
        crate::platform::os::child::reap_blocking(pid);
        let mask = |name: &str| -> u64 {
            let line = got.lines().find(|l| l.starts_with(name)).unwrap_or_default();
            u64::from_str_radix(line.rsplit('\t').next().unwrap_or_default().trim(), 16).unwrap_or(u64::MAX)
        };
        let bit = |sig: c_int| 1u64 << (sig - 1);
        assert_eq!(mask("SigBlk:"), 0, "{got}");
        let ignored = mask("SigIgn:");
        assert_eq!(ignored & bit(libc::SIGPIPE), 0, "SIGPIPE at default: {got}");
        assert_ne!(ignored & bit(libc::SIGHUP), 0, "SIGHUP ignored: {got}");
        assert_ne!(ignored & bit(libc::SIGUSR2), 0, "SIGUSR2 still ignored: {got}");
    }
}
