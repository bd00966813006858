//! Who may be the daemon's client, decided for each connection before a byte of it is
//! read, from what the kernel says of the other end (never from what it sends):
//! - on the unix socket, a process of the daemon's own user (`SO_PEERCRED`);
//! - on the TCP port without a token, a socket of the daemon's own user, found by its
//!   exact four-tuple and ESTABLISHED (sock_diag: src/platform/linux/tcp_diag.rs); a
//!   socket the kernel does not list so is refused (a client that sent its request and
//!   closed at once is in TIME_WAIT, where the kernel names uid 0);
//! - on both, never a process of one of the daemon's jobs (src/platform/linux/
//!   job_peers.rs): a sandboxed job that reached the socket would otherwise have its
//!   commands run outside its sandbox. With a token, a local TCP client is still looked
//!   up for that check; a remote one (not in this machine's tables) has only the token.
//!
//! The checks run on a thread of their own (`checker`), not on tokio's blocking pool
//! that serves the file calls: another user's connection flood queues here and leaves
//! the owner's calls alone. Each check is a constant number of small reads (a
//! sock_diag query, /proc/PID/cgroup, the parent links); only where jobs are held by
//! their process tree does a TCP check read the descriptors of the daemon's
//! descendants.

use std::net::SocketAddr;
#[cfg(target_os = "linux")]
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};

use tokio::net::{TcpStream, UnixStream};

/// Whether the unix socket's peer may be a client of the daemon of `own_uid`.
#[cfg(not(target_os = "linux"))]
pub async fn unix_client(stream: &UnixStream, own_uid: u32) -> Result<(), String> {
    // No way to tell a job here (src/platform/mod.rs, `is_job_process`): the user only.
    match stream.peer_cred().map(|c| c.uid()) {
        Ok(uid) if uid == own_uid => Ok(()),
        Ok(uid) => Err(format!("uid {uid} is not the daemon's user")),
        Err(e) => Err(format!("its credentials cannot be read ({e})")),
    }
}

/// Whether the unix socket's peer may be a client of the daemon of `own_uid`.
#[cfg(target_os = "linux")]
pub async fn unix_client(stream: &UnixStream, own_uid: u32) -> Result<(), String> {
    // A copy of the descriptor travels to the checker: the stream stays here.
    let socket = stream
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| format!("cannot check the peer: {e}"))?;
    on_checker(move || check_unix(&socket, own_uid)).await
}

/// Whether the TCP client at `peer` may use the daemon's port (`token`: the port has an
/// access token, checked per request by the router).
pub async fn tcp_client(stream: &TcpStream, peer: SocketAddr, token: bool) -> Result<(), String> {
    let local = stream.local_addr().map_err(|e| format!("cannot check the peer: {e}"))?;
    let own = rustix::process::geteuid().as_raw();
    on_checker(move || check_tcp(local, peer, token, own)).await
}

#[cfg(target_os = "linux")]
fn check_unix(socket: &OwnedFd, own_uid: u32) -> Result<(), String> {
    let cred = peer_cred(socket).map_err(|e| format!("its credentials cannot be read ({e})"))?;
    if cred.uid != own_uid {
        return Err(format!("uid {} is not the daemon's user", cred.uid));
    }
    // The daemon never connects to itself; a connection that names its own pid was made
    // by its sandbox supervisor for a job (src/platform/linux/sandbox/supervise/: it
    // makes a job's allowed `connect` itself, so the kernel records the daemon's
    // credentials), and stands for that job.
    if cred.pid == std::process::id() as i32 {
        return Err("it was made by the daemon's sandbox supervisor for one of its jobs".to_string());
    }
    // The very process that connected, held while it is looked at: if its pid were
    // reused meanwhile, `alive` says it is gone.
    let pidfd = peer_pidfd(socket, cred.pid).map_err(|e| format!("pid {} cannot be held ({e})", cred.pid))?;
    let job = crate::platform::is_job_process(cred.pid);
    match alive(&pidfd) {
        Ok(true) => {}
        Ok(false) => return Err(format!("pid {} exited before it could be checked", cred.pid)),
        Err(e) => return Err(format!("pid {} cannot be held ({e})", cred.pid)),
    }
    match job {
        Ok(false) => Ok(()),
        Ok(true) => Err(format!("pid {} is a process of one of the daemon's jobs", cred.pid)),
        Err(e) => Err(format!("pid {} cannot be checked ({e})", cred.pid)),
    }
}

fn check_tcp(local: SocketAddr, peer: SocketAddr, token: bool, own: u32) -> Result<(), String> {
    match crate::platform::tcp_peer(local, peer) {
        Ok(Some(socket)) => {
            if crate::platform::is_job_socket(socket.inode, socket.cgroup_id) {
                return Err(format!("{peer} is a socket of one of the daemon's jobs"));
            }
            if !token && socket.uid != own {
                return Err(format!("{peer} belongs to uid {}, not the daemon's user", socket.uid));
            }
            Ok(())
        }
        // Not a connection of this machine's (or not ESTABLISHED any more): the token
        // decides, where there is one.
        Ok(None) if token => Ok(()),
        Ok(None) => Err(format!("{peer} is not an established local connection")),
        Err(e) if token && e.kind() == std::io::ErrorKind::Unsupported => Ok(()),
        Err(e) => Err(format!("{peer} cannot be checked ({e})")),
    }
}

#[cfg(target_os = "linux")]
struct Cred {
    uid: u32,
    pid: i32,
}

#[cfg(target_os = "linux")]
fn peer_cred(socket: &OwnedFd) -> std::io::Result<Cred> {
    // SAFETY: a zeroed ucred is valid; getsockopt writes at most its size.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: the pointers are to our locals, with their sizes.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if cred.pid <= 0 {
        return Err(std::io::Error::other("no peer process"));
    }
    Ok(Cred {
        uid: cred.uid,
        pid: cred.pid,
    })
}

/// `SO_PEERPIDFD` (Linux 6.5+): a pidfd of the process that connected, whatever has
/// happened to its pid since. Before, a pidfd opened from the pid now (a small window
/// where the pid could have been reused: the pid is then checked, not the peer).
#[cfg(target_os = "linux")]
fn peer_pidfd(socket: &OwnedFd, pid: i32) -> std::io::Result<OwnedFd> {
    const SO_PEERPIDFD: libc::c_int = 77;
    let mut fd: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: the pointers are to our locals, with their sizes.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_PEERPIDFD,
            (&mut fd as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc == 0 && fd >= 0 {
        // SAFETY: a fresh descriptor the kernel gave us.
        return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
    }
    // SAFETY: pidfd_open takes a pid and flags; a descriptor it returns is ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Whether the process behind the pidfd has not exited (signal 0 only checks).
#[cfg(target_os = "linux")]
/// `Ok(false)`: the process is gone; `Err`: it could not be asked (never taken as alive).
fn alive(pidfd: &OwnedFd) -> std::io::Result<bool> {
    // SAFETY: pidfd_send_signal with signal 0 and no info.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            0,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    if rc == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::ESRCH) {
        Ok(false)
    } else {
        Err(e)
    }
}

type Task = Box<dyn FnOnce() + Send>;

/// Runs `check` on the checker thread; a checker that cannot run refuses.
async fn on_checker<F>(check: F) -> Result<(), String>
where
    F: FnOnce() -> Result<(), String> + Send + 'static,
{
    let (done, answer) = tokio::sync::oneshot::channel();
    let task: Task = Box::new(move || {
        let _ = done.send(check());
    });
    let sent = checker().and_then(|tx| crate::base::sync::lock(tx).send(task).map_err(|_| ()).ok());
    if sent.is_none() {
        return Err("the peer checker is not running".to_string());
    }
    answer
        .await
        .unwrap_or_else(|_| Err("the peer check failed".to_string()))
}

fn checker() -> Option<&'static Mutex<mpsc::Sender<Task>>> {
    static CHECKER: OnceLock<Option<Mutex<mpsc::Sender<Task>>>> = OnceLock::new();
    CHECKER
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Task>();
            std::thread::Builder::new()
                .name("native-shell-peer-check".into())
                .spawn(move || {
                    for task in rx {
                        task();
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_unix_peer_of_our_user_that_is_no_job_passes() {
        // Another process of our user that is not our descendant, as a client is: this
        // test process stands for the daemon, and its descendants for its jobs. The shell
        // leaves the client behind and exits, so the client is re-parented away.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("peer.sock");
        let listener = tokio::net::UnixListener::bind(&path).unwrap();
        let client = "import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.recv(1)";
        let status = std::process::Command::new("sh")
            .args(["-c", "python3 -c \"$0\" \"$1\" </dev/null >/dev/null 2>&1 &", client])
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        let (a, _) = listener.accept().await.unwrap();
        let own = rustix::process::getuid().as_raw();
        assert_eq!(unix_client(&a, own).await, Ok(()));
        assert!(unix_client(&a, own + 1)
            .await
            .unwrap_err()
            .contains("not the daemon's user"));
        // Closed here, the client's `recv` returns and it exits.
    }

    #[tokio::test]
    async fn a_connection_made_by_the_daemon_itself_stands_for_a_job() {
        // What the sandbox's supervisor makes for a job: the kernel names this process.
        let (a, _b) = UnixStream::pair().unwrap();
        let own = rustix::process::getuid().as_raw();
        assert!(unix_client(&a, own).await.unwrap_err().contains("sandbox supervisor"));
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_unix_peer_that_is_our_child_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let listener = tokio::net::UnixListener::bind(&path).unwrap();
        let mut child = std::process::Command::new("python3")
            .arg("-c")
            .arg("import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); time.sleep(30)")
            .arg(&path)
            .spawn()
            .unwrap();
        let (stream, _) = listener.accept().await.unwrap();
        let own = rustix::process::getuid().as_raw();
        let refused = unix_client(&stream, own).await.unwrap_err();
        assert!(refused.contains("one of the daemon's jobs"), "{refused}");
        let _ = child.kill();
        let _ = child.wait();
    }
}
