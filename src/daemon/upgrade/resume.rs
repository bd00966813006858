//! The new image's side of a restart: the hand-over read from `--handover-fd N`, its
//! descriptors taken back (close-on-exec again) as the listeners and the lock the
//! accept loop serves with, instead of binding and locking anew (server.rs).

use std::os::fd::RawFd;

use super::exec::{monotonic_ns, read_handover_fd, take_inherited};
use super::format::Handover;

pub struct Resumed {
    pub unix: std::os::unix::net::UnixListener,
    pub tcp: Option<std::net::TcpListener>,
    pub lock: std::fs::File,
    pub handover: Handover,
}

/// Reads and checks the hand-over on `fd`.
pub fn load(fd: RawFd) -> Result<Handover, String> {
    let bytes = read_handover_fd(fd)?;
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

/// Milliseconds since the old image stopped serving.
pub fn paused_ms(handover: &Handover) -> f64 {
    monotonic_ns().saturating_sub(handover.paused_at_ns) as f64 / 1e6
}
