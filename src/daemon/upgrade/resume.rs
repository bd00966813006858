//! The new image's side of a restart: the hand-over read from `--handover-fd N`, its
//! descriptors taken back (close-on-exec again) as the listeners and the lock the
//! accept loop serves with, instead of binding and locking anew (server.rs).

use std::os::fd::{BorrowedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicI32, Ordering};

use super::exec::{monotonic_ns, read_handover_fd, take_inherited, HANDOVER_FD_FLAG};
use super::format::Handover;

/// The hand-over's memfd, open until this image serves (a roll-back passes it on).
static HANDOVER_FD: AtomicI32 = AtomicI32::new(-1);

pub struct Resumed {
    pub unix: std::os::unix::net::UnixListener,
    pub tcp: Option<std::net::TcpListener>,
    pub lock: std::fs::File,
    pub handover: Handover,
}

/// Reads and checks the hand-over on `fd`.
pub fn load(fd: RawFd) -> Result<Handover, String> {
    let bytes = read_handover_fd(fd)?;
    HANDOVER_FD.store(fd, Ordering::SeqCst);
    Handover::decode(&bytes).map_err(|e| format!("{}: {e}", e.code()))
}

/// Takes the descriptors the hand-over names. The unix socket must be the one this
/// image is configured to serve: another path is an error, not a silent switch.
pub fn take(handover: Handover, socket: &std::path::Path) -> Result<Resumed, String> {
    if std::path::Path::new(&handover.socket) != socket {
        return Err(format!(
            "the hand-over serves {}, this daemon is configured for {}",
            handover.socket,
            socket.display()
        ));
    }
    let unix = std::os::unix::net::UnixListener::from(take_inherited(handover.fds.unix_listener)?);
    unix.local_addr()
        .map_err(|e| format!("the inherited unix listener is not a socket: {e}"))?;
    let tcp = match handover.fds.tcp_listener {
        Some(fd) => {
            let tcp = std::net::TcpListener::from(take_inherited(fd)?);
            tcp.local_addr()
                .map_err(|e| format!("the inherited TCP listener is not a socket: {e}"))?;
            Some(tcp)
        }
        None => None,
    };
    let lock = std::fs::File::from(take_inherited(handover.fds.lock)?);
    unix.set_nonblocking(true)
        .map_err(|e| format!("cannot make the unix listener non-blocking: {e}"))?;
    Ok(Resumed {
        unix,
        tcp,
        lock,
        handover,
    })
}

/// Checks the whole hand-over before anything of it is taken: the socket is the one
/// this image is configured for, every descriptor it names is open (and each job's of
/// its kind), every record checks out (src/daemon/carry.rs). What fails here can still
/// go back to the previous image (`roll_back`) with every job untouched.
pub fn check(handover: &Handover, socket: &std::path::Path) -> Result<(), String> {
    if std::path::Path::new(&handover.socket) != socket {
        return Err(format!(
            "the hand-over serves {}, this daemon is configured for {}",
            handover.socket,
            socket.display()
        ));
    }
    let fds = handover.fds;
    let rollback = handover.rollback.as_ref().map(|r| r.exe_fd);
    for fd in [
        Some(fds.unix_listener),
        fds.tcp_listener,
        Some(fds.lock),
        handover.watchdog_fd,
        rollback,
    ]
    .into_iter()
    .flatten()
    {
        // SAFETY: a number only; fcntl says whether it is open, nothing is taken.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        rustix::io::fcntl_getfd(borrowed).map_err(|e| format!("inherited descriptor {fd} is not open: {e}"))?;
    }
    crate::daemon::carry::check_records(&handover.daemon)
}

/// Execs the previous image's binary again with this very hand-over (its memfd and
/// every descriptor it names still open and inheritable: nothing was taken), so the
/// daemon goes on as it was. Returns only if that exec failed.
pub fn roll_back(handover: &Handover) -> String {
    let Some(rollback) = &handover.rollback else {
        return "the hand-over names no previous binary to go back to".into();
    };
    let fd = HANDOVER_FD.load(Ordering::SeqCst);
    let error = std::process::Command::new(format!("/proc/self/fd/{}", rollback.exe_fd))
        .arg0("native-shell-daemon")
        .args(&rollback.args)
        .arg(HANDOVER_FD_FLAG)
        .arg(fd.to_string())
        .exec();
    format!("cannot run the previous binary again: {error}")
}

/// This image serves: the hand-over's memfd and the previous binary are let go.
pub fn done(handover: &Handover) {
    let fd = HANDOVER_FD.swap(-1, Ordering::SeqCst);
    for fd in [
        Some(fd).filter(|fd| *fd > 2),
        handover.rollback.as_ref().map(|r| r.exe_fd),
    ]
    .into_iter()
    .flatten()
    {
        if let Ok(owned) = take_inherited(fd) {
            drop(owned);
        }
    }
}

/// Takes what makes the carried jobs this image's own: the owner token in their
/// environment (before any service asks for one) and the watchdog's pipe, whose close
/// would kill them. The jobs themselves are taken by src/daemon/carry.rs.
pub fn own_jobs(handover: &Handover) -> Result<(), String> {
    if !crate::service::resume_process_token(&handover.process_token) {
        return Err("the hand-over's owner token came after another was in use".into());
    }
    crate::service::resume_service_numbers(handover.next_service_number);
    #[cfg(target_os = "linux")]
    if let Some(fd) = handover.watchdog_fd {
        crate::platform::watchdog::adopt(take_inherited(fd)?);
    }
    Ok(())
}

/// Milliseconds since the old image stopped serving.
pub fn paused_ms(handover: &Handover) -> f64 {
    monotonic_ns().saturating_sub(handover.paused_at_ns) as f64 / 1e6
}
