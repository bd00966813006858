//! Replacing the daemon's image in place: `execve` of the binary on disk, keeping the
//! pid, with the listening sockets and the lock inherited (close-on-exec cleared) and
//! the hand-over (format.rs) in a memfd.
//!
//! Why in place and not a new process given the descriptors over SCM_RIGHTS: the
//! daemon is a child subreaper and the parent of every job's first process. Only the
//! parent can reap a child and read its exit status; a new process would be no job's
//! parent, the jobs' exits would go to whoever adopts them, and the subreaper chain
//! that keeps a job's detached processes findable (src/daemon/peer.rs) would break.
//! `execve` keeps the pid, the parent links, the child-subreaper flag, the session,
//! and every descriptor not marked close-on-exec: pending connections wait in the
//! listeners' backlogs, nothing is closed or bound again.
//!
//! The price of exec is that the old image cannot take over again once the new one
//! runs. So the new binary is tried first (`preflight`): it is run with
//! `--handover-check`, reads this very hand-over from its stdin and must answer
//! `ready <version>`. A binary that is missing, not executable, exits at once, hangs,
//! or cannot read the format refuses the restart there, before anything is torn down,
//! and the old image serves on. An `execve` that fails still returns here: the
//! descriptors get their close-on-exec flag back and the old image serves on.

use std::ffi::OsString;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rustix::io::{fcntl_getfd, fcntl_setfd, FdFlags};

use super::format::Handover;

/// The flag that gives the new image its hand-over.
pub const HANDOVER_FD_FLAG: &str = "--handover-fd";
/// The flag of the pre-flight: read a hand-over on stdin, answer `ready <version>`.
pub const HANDOVER_CHECK_FLAG: &str = "--handover-check";
/// How long the new binary has to answer its pre-flight.
const PREFLIGHT_LIMIT: Duration = Duration::from_secs(10);

/// A refused or failed restart: a stable code and what happened. Nothing of the
/// running daemon has changed when one is returned.
#[derive(Debug)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
}

impl Refusal {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// What this image was started as: the binary a restart runs by default (the path,
/// so a binary replaced on disk is the one run) and the arguments it gets again.
#[derive(Clone, Debug)]
pub struct Image {
    pub binary: PathBuf,
    pub args: Vec<OsString>,
}

impl Image {
    /// This process's binary and arguments, without any earlier `--handover-fd N`.
    pub fn current() -> Self {
        let binary = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe"));
        // An image rolled back to (upgrade/resume.rs) runs a binary renamed over since:
        // the kernel names it "PATH (deleted)"; a restart runs what is at PATH now.
        let binary = match binary.to_str().and_then(|b| b.strip_suffix(" (deleted)")) {
            Some(path) => PathBuf::from(path),
            None => binary,
        };
        let mut args = Vec::new();
        let mut given = std::env::args_os().skip(1);
        while let Some(arg) = given.next() {
            if arg == HANDOVER_FD_FLAG {
                given.next();
                continue;
            }
            args.push(arg);
        }
        Self { binary, args }
    }
}

/// Which file a path names now (device, inode, size, modification time): the binary
/// run at the pre-flight must be the one exec'ed, not one renamed over it since.
pub type FileIdentity = (u64, u64, u64, i64, i64);

pub fn file_identity(path: &Path) -> Option<FileIdentity> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.dev(), meta.ino(), meta.size(), meta.mtime(), meta.mtime_nsec()))
}

/// A refusal when `binary` is no longer the file that passed the pre-flight.
pub fn still_checked(binary: &Path, checked: Option<FileIdentity>) -> Result<(), Refusal> {
    if checked.is_some() && file_identity(binary) == checked {
        return Ok(());
    }
    Err(Refusal::new(
        "DAEMON_RESTART_FAILED",
        format!(
            "{} changed after its pre-flight (another binary was put there): ask again",
            binary.display()
        ),
    ))
}

/// CLOCK_MONOTONIC in ns: one clock for both images, so the pause can be measured
/// across the exec.
pub fn monotonic_ns() -> u64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    (now.tv_sec as u64).saturating_mul(1_000_000_000) + now.tv_nsec as u64
}

/// Runs `binary ARGS... --handover-check` with the hand-over on its stdin; `Ok(version)` when
/// it answered `ready <version>`. Blocks (up to `PREFLIGHT_LIMIT`): run it off the
/// connections' thread.
///
/// It gets the daemon's own arguments too, so a new binary that would refuse them
/// (an option it no longer takes) is caught here as well.
pub fn preflight(binary: &Path, args: &[OsString], handover: &Handover) -> Result<String, Refusal> {
    let refuse = |why: String| Refusal::new("DAEMON_RESTART_FAILED", format!("{}: {why}", binary.display()));
    let mut child = Command::new(binary)
        .args(args)
        .arg(HANDOVER_CHECK_FLAG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| refuse(format!("cannot run it: {e}")))?;
    let blob = handover.encode();
    if let Some(mut stdin) = child.stdin.take() {
        // A binary that exits without reading closes the pipe: its answer says why.
        let _ = stdin.write_all(&blob);
    }
    let (Some(mut stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        let _ = child.kill();
        return Err(refuse("its output could not be read".into()));
    };
    // Read on threads, so a binary that never closes its output is given up on at the
    // limit. Its exit status is not what decides: the daemon is a subreaper whose orphan
    // reaper may collect any child it did not launch as a job (src/daemon/peer.rs), so
    // the answer is what it printed.
    let (tx, rx) = std::sync::mpsc::channel();
    let out_tx = tx.clone();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        let _ = out_tx.send((true, text));
    });
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = (&mut stderr).take(4096).read_to_string(&mut text);
        let _ = tx.send((false, text));
    });
    let deadline = Instant::now() + PREFLIGHT_LIMIT;
    let (mut answer, mut complaint) = (None, String::new());
    while answer.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((true, text)) => answer = Some(text),
            Ok((false, text)) => complaint = text,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(refuse(format!(
                    "no answer to {HANDOVER_CHECK_FLAG} within {PREFLIGHT_LIMIT:?}"
                )));
            }
        }
    }
    let _ = child.wait();
    let answer = answer.unwrap_or_default();
    match answer.lines().next().and_then(|line| line.strip_prefix("ready ")) {
        Some(version) if !version.trim().is_empty() => Ok(version.trim().to_string()),
        _ => {
            // Give stderr a moment to arrive for the message.
            if let Ok((false, text)) = rx.recv_timeout(Duration::from_millis(200)) {
                complaint = text;
            }
            let said = [answer.trim(), complaint.trim()]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" / ");
            let said = if said.is_empty() { "nothing".to_string() } else { said };
            Err(Refusal::new(
                if complaint.contains("HANDOVER_FORMAT") {
                    "HANDOVER_FORMAT"
                } else {
                    "DAEMON_RESTART_FAILED"
                },
                format!("{} did not take the hand-over (it said: {said})", binary.display()),
            ))
        }
    }
}

/// The hand-over in a memfd, read position at 0. Close-on-exec until `exec` clears it.
#[cfg(target_os = "linux")]
pub fn handover_file(handover: &Handover) -> std::io::Result<std::fs::File> {
    let fd = rustix::fs::memfd_create("native-shell-handover", rustix::fs::MemfdFlags::CLOEXEC)?;
    let mut file = std::fs::File::from(fd);
    file.write_all(&handover.encode())?;
    file.seek(SeekFrom::Start(0))?;
    Ok(file)
}

/// No memfd here: restarts in place are for Linux (the accept loop offers none elsewhere).
#[cfg(not(target_os = "linux"))]
pub fn handover_file(_handover: &Handover) -> std::io::Result<std::fs::File> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// Reads the hand-over from an inherited descriptor (the new image's side). The
/// descriptor stays open and inheritable: a roll-back (resume.rs) gives the previous
/// image this very hand-over; `resume::done` closes it once this image serves.
pub fn read_handover_fd(fd: RawFd) -> Result<Vec<u8>, String> {
    if fd <= 2 {
        return Err(format!("{HANDOVER_FD_FLAG} {fd}: not a hand-over descriptor"));
    }
    // SAFETY: an fd number only; fcntl tells whether it is open before it is owned.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    fcntl_getfd(borrowed).map_err(|e| format!("{HANDOVER_FD_FLAG} {fd}: {e}"))?;
    // SAFETY: the descriptor is open and was given to this image for this purpose
    // only; not closed here (ManuallyDrop).
    let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    let mut bytes = Vec::new();
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_end(&mut bytes))
        .and_then(|_| file.seek(SeekFrom::Start(0)))
        .map_err(|e| format!("cannot read the hand-over: {e}"))?;
    Ok(bytes)
}

/// Takes an inherited descriptor named by the hand-over, close-on-exec again.
pub fn take_inherited(fd: RawFd) -> Result<OwnedFd, String> {
    // SAFETY: an fd number only; fcntl tells whether it is open before it is owned.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    fcntl_setfd(borrowed, FdFlags::CLOEXEC).map_err(|e| format!("inherited descriptor {fd}: {e}"))?;
    // SAFETY: open (above), and named by the hand-over as this image's to own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Replaces this image with `image.binary`, giving it `inherit` and the hand-over.
/// Returns only when `execve` failed; the descriptors are close-on-exec again then.
pub fn exec(image: &Image, binary: &Path, inherit: &[BorrowedFd<'_>], handover: &std::fs::File) -> std::io::Error {
    let all: Vec<BorrowedFd<'_>> = inherit.iter().copied().chain([handover.as_fd()]).collect();
    for fd in &all {
        if let Err(e) = fcntl_setfd(fd, FdFlags::empty()) {
            restore(&all);
            return e.into();
        }
    }
    let handover_fd = std::os::fd::AsRawFd::as_raw_fd(handover);
    let error = Command::new(binary)
        .args(&image.args)
        .arg(HANDOVER_FD_FLAG)
        .arg(handover_fd.to_string())
        .exec();
    // `exec` emptied this thread's signal mask for the new image (as std does); the old
    // image serves on: SIGCHLD is for its reaper alone again (src/daemon/child_exits.rs).
    let _ = crate::daemon::child_exits::block();
    restore(&all);
    error
}

fn restore(fds: &[BorrowedFd<'_>]) {
    for fd in fds {
        let _ = fcntl_setfd(fd, FdFlags::CLOEXEC);
    }
}
