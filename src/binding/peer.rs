//! `unixPeerPid(fd)`: the pid of the process at the other end of a connected unix
//! socket, as the kernel recorded it when that process connected (`SO_PEERCRED` on
//! Linux, `LOCAL_PEERPID` on macOS); `null` when it cannot be read. For the MCP server
//! beside the daemon (tools/mcp/http.ts), which serves the daemon's `/mcp` proxy only:
//! a job of the daemon that found its private socket must not reach it directly.

use napi_derive::napi;

/// Not a descriptor this call owns: it is only asked, never closed.
#[napi(catch_unwind)]
pub fn unix_peer_pid(fd: i32) -> Option<i32> {
    if fd < 0 {
        return None;
    }
    peer_pid(fd).filter(|&pid| pid > 0)
}

#[cfg(target_os = "linux")]
fn peer_pid(fd: i32) -> Option<i32> {
    // SAFETY: a zeroed ucred is valid; getsockopt writes at most its size into our local.
    // A descriptor that is not a unix socket (or not open) is an error, not UB.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    (rc == 0).then_some(cred.pid)
}

#[cfg(target_os = "macos")]
fn peer_pid(fd: i32) -> Option<i32> {
    const SOL_LOCAL: libc::c_int = 0;
    const LOCAL_PEERPID: libc::c_int = 2;
    let mut pid: libc::pid_t = 0;
    let mut len = std::mem::size_of::<libc::pid_t>() as libc::socklen_t;
    // SAFETY: the pointers are to our locals, with their sizes.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            SOL_LOCAL,
            LOCAL_PEERPID,
            (&mut pid as *mut libc::pid_t).cast(),
            &mut len,
        )
    };
    (rc == 0).then_some(pid)
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn peer_pid(_fd: i32) -> Option<i32> {
    None
}
