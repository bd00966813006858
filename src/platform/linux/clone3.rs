//! `clone3` with `CLONE_INTO_CGROUP` and `CLONE_CLEAR_SIGHAND`, in the vfork style of
//! `crate::platform::unix::launch`: the child shares our memory, runs on a stack of
//! its own and we sleep until it has exec'd or exited.
//!
//! glibc (2.36 here) exports no `clone3` wrapper, and a plain `syscall()` cannot be
//! used for a child that shares our memory: the child would return from the system
//! call into the caller's frames on the new stack, where there are none. So the call
//! is made here in a few instructions that, in the child, call the given function on
//! the new stack and exit with its result, as glibc's own `clone`/`clone3` do. On
//! other architectures jobs start with the plain clone, uncontained.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

use super::Containment;

/// `CLONE_INTO_CGROUP` (linux/sched.h, Linux 5.7+).
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;
/// `CLONE_CLEAR_SIGHAND` (linux/sched.h, Linux 5.5+): the child's caught signals are
/// reset to their default at its birth; ignored ones stay ignored.
const CLONE_CLEAR_SIGHAND: u64 = 0x1_0000_0000;

/// `struct clone_args` up to `cgroup` (`CLONE_ARGS_SIZE_VER2`, 88 bytes).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// How the child was made, for the child to read (`clone_vfork`).
#[derive(Default)]
pub struct Birth {
    /// In the job's cgroup: all it starts is held there (else its first process
    /// becomes a subreaper: `unix::launch`).
    pub in_cgroup: AtomicBool,
    /// Sharing our descriptor table until it takes one of its own.
    pub shares_files: AtomicBool,
    /// Made with its caught signals reset to default (`CLONE_CLEAR_SIGHAND`): the
    /// child leaves the others as they are (`unix::child_setup::reset_signals`).
    pub handlers_cleared: AtomicBool,
}

const AVAILABLE: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

/// `libc::clone(child, top, CLONE_VM | CLONE_VFORK | SIGCHLD, arg)`, made by `clone3`
/// into the job's cgroup when it has one (`stack` is the lowest address of the child's
/// stack, `top` its aligned end). A kernel that refuses (no `clone3`, a seccomp filter,
/// a cgroup it will not start processes in) gets the plain clone, and no later job is
/// contained. Returns the pid, or -1 with `errno` set, as `libc::clone`.
///
/// `clone3` also asks the kernel to reset the child's caught signals to their default
/// (`CLONE_CLEAR_SIGHAND`, Linux 5.5; ignored ones stay ignored), which the child did
/// itself with a `sigaction` query per signal number and a reset of each caught one,
/// about 70 system calls (17 µs) while the calling thread waits
/// (`unix::child_setup::reset_signals`). So a job without a cgroup
/// is made by `clone3` too, and gets the plain clone only where `clone3` is refused
/// (then for every later job).
///
/// `birth` tells the child, which shares our memory, how it was made: set before each
/// attempt, read by the child before it execs. `share_files`: the plain clone also
/// shares our descriptor table (`CLONE_FILES`, for a sandboxed job's listener:
/// `sandbox::watch`, and below Landlock ABI 9 the one its unix sockets are supervised
/// through: `sandbox::supervise`), in a cgroup or not.
///
/// # Safety
/// As `libc::clone` with `CLONE_VM | CLONE_VFORK`: see `vfork3`. A child
/// that shares the table must change no descriptor until it has a table of its own.
pub unsafe fn clone_vfork(
    child: extern "C" fn(*mut c_void) -> c_int,
    stack: *mut u8,
    top: *mut c_void,
    arg: *mut c_void,
    containment: &Containment,
    share_files: bool,
    birth: &Birth,
) -> c_int {
    let stack_size = top as usize - stack as usize;
    birth.shares_files.store(share_files, Ordering::Release);
    if let Some(fd) = containment.launch_fd().filter(|_| AVAILABLE) {
        birth.in_cgroup.store(true, Ordering::Release);
        birth.handlers_cleared.store(true, Ordering::Release);
        let started = vfork3(child, stack, stack_size, arg, Some(fd), share_files);
        containment.launched(started.is_ok());
        if let Ok(pid) = started {
            return pid;
        }
    }
    birth.in_cgroup.store(false, Ordering::Release);
    if AVAILABLE && !CLONE3_REFUSED.load(Ordering::Relaxed) {
        birth.handlers_cleared.store(true, Ordering::Release);
        match vfork3(child, stack, stack_size, arg, None, share_files) {
            Ok(pid) => return pid,
            // Refused (ENOSYS before 5.3, EPERM or ENOSYS from a seccomp profile,
            // EINVAL before 5.5): not asked again. Anything else (EAGAIN, ENOMEM) is
            // this clone's failure, and the plain clone below would most likely fail
            // the same way; it reports its own error.
            Err(libc::ENOSYS | libc::EPERM | libc::EINVAL) => CLONE3_REFUSED.store(true, Ordering::Relaxed),
            Err(_) => {}
        }
    }
    birth.handlers_cleared.store(false, Ordering::Release);
    let files = if share_files { libc::CLONE_FILES } else { 0 };
    libc::clone(
        child,
        top,
        libc::CLONE_VM | libc::CLONE_VFORK | files | libc::SIGCHLD,
        arg,
    )
}

/// Set once `clone3` without a cgroup was refused: jobs then start by the plain clone.
static CLONE3_REFUSED: AtomicBool = AtomicBool::new(false);

/// Starts `child(arg)` on `stack..stack + stack_size` (its top 16-byte aligned), in the
/// cgroup `cgroup_fd` refers to if one is given, sharing our memory, its caught
/// signals reset to default; returns when the child has exec'd or exited, with its
/// pid, or the error of `clone3` (nothing was started then).
///
/// # Safety
/// The same contract as `libc::clone` with `CLONE_VM | CLONE_VFORK`: `child` must
/// never return into Rust code that touches shared state (it execs or `_exit`s), and
/// `arg` and the stack must stay valid until this returns.
unsafe fn vfork3(
    child: extern "C" fn(*mut c_void) -> c_int,
    stack: *mut u8,
    stack_size: usize,
    arg: *mut c_void,
    cgroup_fd: Option<c_int>,
    share_files: bool,
) -> Result<i32, i32> {
    let files = if share_files { libc::CLONE_FILES } else { 0 };
    let into_cgroup = if cgroup_fd.is_some() { CLONE_INTO_CGROUP } else { 0 };
    let args = CloneArgs {
        flags: (libc::CLONE_VM | libc::CLONE_VFORK | files) as u64 | CLONE_CLEAR_SIGHAND | into_cgroup,
        exit_signal: libc::SIGCHLD as u64,
        stack: stack as u64,
        stack_size: stack_size as u64,
        cgroup: cgroup_fd.unwrap_or(0) as u64,
        ..CloneArgs::default()
    };
    let ret = raw_clone3(&args, child, arg);
    if ret < 0 {
        Err(-ret as i32)
    } else {
        Ok(ret as i32)
    }
}

/// The system call; in the child: `exit(child(arg))` on the new stack (the kernel
/// points the stack register at `stack + stack_size`; every other register but the
/// return value is as in the parent, so the function and argument ride in registers
/// the call preserves).
#[cfg(target_arch = "x86_64")]
unsafe fn raw_clone3(args: &CloneArgs, child: extern "C" fn(*mut c_void) -> c_int, arg: *mut c_void) -> isize {
    let ret: isize;
    std::arch::asm!(
        "syscall",
        "test rax, rax",
        "jnz 2f",
        // The child: no frame to return to; the stack top is 16-byte aligned, as a
        // call expects.
        "xor ebp, ebp",
        "mov rdi, r13",
        "call r12",
        "mov edi, eax",
        "mov eax, {exit}",
        "syscall",
        "ud2",
        "2:",
        exit = const libc::SYS_exit,
        inlateout("rax") libc::SYS_clone3 as isize => ret,
        in("rdi") args as *const CloneArgs,
        in("rsi") std::mem::size_of::<CloneArgs>(),
        in("r12") child,
        in("r13") arg,
        lateout("rcx") _,
        lateout("r11") _,
        options(nostack)
    );
    ret
}

#[cfg(target_arch = "aarch64")]
unsafe fn raw_clone3(args: &CloneArgs, child: extern "C" fn(*mut c_void) -> c_int, arg: *mut c_void) -> isize {
    let ret: isize;
    std::arch::asm!(
        "svc 0",
        "cbnz x0, 2f",
        "mov x29, xzr",
        "mov x30, xzr",
        "mov x0, x10",
        "blr x9",
        "mov x8, {exit}",
        "svc 0",
        "brk 0",
        "2:",
        exit = const libc::SYS_exit,
        in("x8") libc::SYS_clone3,
        inlateout("x0") args as *const CloneArgs as isize => ret,
        in("x1") std::mem::size_of::<CloneArgs>(),
        in("x9") child,
        in("x10") arg,
        options(nostack)
    );
    ret
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
unsafe fn raw_clone3(_: &CloneArgs, _: extern "C" fn(*mut c_void) -> c_int, _: *mut c_void) -> isize {
    -(libc::ENOSYS as isize)
}
