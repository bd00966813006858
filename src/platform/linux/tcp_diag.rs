//! Who is on the other end of a local TCP connection: the kernel's own record of the
//! client's socket, asked of `sock_diag` (`NETLINK_SOCK_DIAG`, an `inet_diag_req_v2`
//! naming one socket by its exact four-tuple): the uid that created it, its inode, and
//! the cgroup it was created in.
//!
//! Why: a unix socket tells its peer's uid (`SO_PEERCRED`); TCP does not, and a daemon
//! listening on 127.0.0.1 without a token would otherwise run commands for every user of
//! the machine (src/daemon/http/auth.rs). Why this and not the socket tables in
//! /proc/net/tcp: those list a socket that its client closed at once in TIME_WAIT,
//! where the kernel shows uid 0 (a root daemon took any user's request for root's), and
//! reading them costs a scan of every socket of the machine per connection (another
//! user's connection flood slowed every call). Here one socket is looked up in the
//! kernel's hash (O(1)) and only an ESTABLISHED one counts: a socket in any other state
//! (TIME_WAIT, closing, a listener that reused the port) is "unknown", and the caller
//! refuses it.
//!
//! Hand-written with `libc` rather than with the netlink-packet-* crates: the exchange is
//! one fixed request struct and one answer struct plus a walk over its attributes
//! (for `INET_DIAG_CGROUP_ID`), about a hundred lines, where the crates would add four
//! dependencies and their own allocation per message for the same two structs.

use std::io;
use std::mem::size_of;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// What the kernel says of the client's socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpPeer {
    /// The uid that created the socket.
    pub uid: u32,
    /// The socket's inode (`socket:[N]` in the owner's /proc/PID/fd).
    pub inode: u64,
    /// The id of the cgroup v2 the socket was created in (the cgroup directory's inode
    /// number), where the kernel reports it.
    pub cgroup_id: Option<u64>,
}

const NETLINK_SOCK_DIAG: i32 = 4;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const TCP_ESTABLISHED: u8 = 1;
const INET_DIAG_CGROUP_ID: u16 = 21;
/// `INET_DIAG_NOCOOKIE`: the lookup does not need the socket's cookie.
const NO_COOKIE: u32 = !0;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct SockId {
    sport: [u8; 2],
    dport: [u8; 2],
    src: [u8; 16],
    dst: [u8; 16],
    interface: u32,
    cookie: [u32; 2],
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Request {
    header: libc::nlmsghdr,
    family: u8,
    protocol: u8,
    ext: u8,
    pad: u8,
    states: u32,
    id: SockId,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DiagMsg {
    family: u8,
    state: u8,
    timer: u8,
    retrans: u8,
    id: SockId,
    expires: u32,
    rqueue: u32,
    wqueue: u32,
    uid: u32,
    inode: u32,
}

/// The client's socket of the connection we accepted (`local`: our end, `peer`: the
/// client's), `Ok(None)` when the kernel has no ESTABLISHED socket with that four-tuple
/// (it closed meanwhile, or the client is on another machine).
pub fn tcp_peer(local: SocketAddr, peer: SocketAddr) -> io::Result<Option<TcpPeer>> {
    let (family, src, dst) = match (plain(peer.ip()), plain(local.ip())) {
        (IpAddr::V4(p), IpAddr::V4(l)) => (libc::AF_INET, pad4(p.octets()), pad4(l.octets())),
        // One end v4, the other v6: no such connection.
        (IpAddr::V4(_), _) | (_, IpAddr::V4(_)) => return Ok(None),
        (IpAddr::V6(p), IpAddr::V6(l)) => (libc::AF_INET6, p.octets(), l.octets()),
    };
    let id = SockId {
        sport: peer.port().to_be_bytes(),
        dport: local.port().to_be_bytes(),
        src,
        dst,
        interface: 0,
        cookie: [NO_COOKIE, NO_COOKIE],
    };
    let request = Request {
        header: libc::nlmsghdr {
            nlmsg_len: size_of::<Request>() as u32,
            nlmsg_type: SOCK_DIAG_BY_FAMILY,
            nlmsg_flags: libc::NLM_F_REQUEST as u16,
            nlmsg_seq: 1,
            nlmsg_pid: 0,
        },
        family: family as u8,
        protocol: libc::IPPROTO_TCP as u8,
        ext: 0,
        pad: 0,
        states: 1 << TCP_ESTABLISHED,
        id,
    };
    let socket = netlink_socket()?;
    // SAFETY: the request is a plain repr(C) struct, sent whole.
    let sent = unsafe {
        libc::send(
            socket.as_raw_fd(),
            (&request as *const Request).cast(),
            size_of::<Request>(),
            0,
        )
    };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    // The kernel answers inside `send` (sock_diag replies synchronously), so the answer
    // is queued already: the socket is non-blocking, and an empty queue is an error.
    let mut answer = [0u64; 1024];
    // SAFETY: the buffer is ours and as long as given.
    let got = unsafe { libc::recv(socket.as_raw_fd(), answer.as_mut_ptr().cast(), size_of_val(&answer), 0) };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    let bytes: Vec<u8> = answer.iter().flat_map(|w| w.to_ne_bytes()).take(got as usize).collect();
    parse_answer(&bytes, &id)
}

/// A non-blocking, close-on-exec sock_diag socket.
fn netlink_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2); a descriptor it returns is ours.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fresh and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The first message of the answer: an error (`ENOENT`: no such socket), or the socket's
/// record, which must be the one asked for and ESTABLISHED.
fn parse_answer(bytes: &[u8], asked: &SockId) -> io::Result<Option<TcpPeer>> {
    let header_len = size_of::<libc::nlmsghdr>();
    let header: libc::nlmsghdr = read_struct(bytes, 0).ok_or_else(|| malformed("short answer"))?;
    let len = (header.nlmsg_len as usize).min(bytes.len());
    let body = bytes.get(header_len..len).ok_or_else(|| malformed("short message"))?;
    if header.nlmsg_type == libc::NLMSG_ERROR as u16 {
        let errno: i32 = read_struct(body, 0).ok_or_else(|| malformed("short error"))?;
        return match -errno {
            libc::ENOENT => Ok(None),
            0 => Err(malformed("an acknowledgement instead of the socket")),
            e => Err(io::Error::from_raw_os_error(e)),
        };
    }
    if header.nlmsg_type != SOCK_DIAG_BY_FAMILY {
        return Err(malformed("an unexpected message type"));
    }
    let msg: DiagMsg = read_struct(body, 0).ok_or_else(|| malformed("short socket record"))?;
    let same = msg.id.sport == asked.sport
        && msg.id.dport == asked.dport
        && msg.id.src == asked.src
        && msg.id.dst == asked.dst;
    if msg.state != TCP_ESTABLISHED || !same {
        return Ok(None);
    }
    let attributes = body.get(align(size_of::<DiagMsg>())..).unwrap_or_default();
    Ok(Some(TcpPeer {
        uid: msg.uid,
        inode: u64::from(msg.inode),
        cgroup_id: attribute(attributes, INET_DIAG_CGROUP_ID).and_then(|v| read_struct::<u64>(v, 0)),
    }))
}

/// The value of the first `kind` attribute (netlink's `nlattr`s: u16 length with its
/// 4-byte header, u16 type, the value; each padded to 4 bytes).
fn attribute(mut attributes: &[u8], kind: u16) -> Option<&[u8]> {
    while attributes.len() >= 4 {
        let len = u16::from_ne_bytes([attributes[0], attributes[1]]) as usize;
        let this = u16::from_ne_bytes([attributes[2], attributes[3]]) & 0x3fff;
        if len < 4 || len > attributes.len() {
            return None;
        }
        if this == kind {
            return attributes.get(4..len);
        }
        attributes = attributes.get(align(len)..)?;
    }
    None
}

fn align(len: usize) -> usize {
    (len + 3) & !3
}

/// A copy of the `T` at `offset`, when the bytes hold one. Only for plain integer
/// structs, for which every bit pattern is a value.
fn read_struct<T: Copy>(bytes: &[u8], offset: usize) -> Option<T> {
    let end = offset.checked_add(size_of::<T>())?;
    let slice = bytes.get(offset..end)?;
    // SAFETY: the slice holds size_of::<T>() bytes; read_unaligned needs no alignment,
    // and T is only ever a struct of integers.
    Some(unsafe { std::ptr::read_unaligned(slice.as_ptr().cast::<T>()) })
}

fn malformed(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("sock_diag: {what}"))
}

/// A v4-mapped IPv6 address as its IPv4 one: the kernel keeps such a connection in its
/// IPv4 tables.
fn plain(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// An IPv4 address in the first four bytes of `inet_diag_sockid`'s address field.
fn pad4(octets: [u8; 4]) -> [u8; 16] {
    let mut all = [0u8; 16];
    all[..4].copy_from_slice(&octets);
    all
}

#[cfg(test)]
mod tests {
    use std::net::{TcpListener, TcpStream};

    use super::*;

    fn own() -> u32 {
        rustix::process::geteuid().as_raw()
    }

    #[test]
    fn finds_the_owner_of_a_real_loopback_client() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, peer) = listener.accept().unwrap();
        let local = accepted.local_addr().unwrap();
        let found = tcp_peer(local, peer).unwrap().expect("the client's socket");
        assert_eq!(found.uid, own());
        let inode = std::fs::metadata(format!("/proc/self/fd/{}", client.as_raw_fd()))
            .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
            .unwrap();
        assert_eq!(found.inode, inode);
        let own_cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        if own_cgroup.contains("0::/") {
            assert!(found.cgroup_id.is_some(), "this kernel reports the socket's cgroup");
        }
        // The four-tuple names one socket: the listener's own address as the peer does not.
        assert_eq!(tcp_peer(local, local).unwrap(), None);
    }

    #[test]
    fn a_client_that_closed_at_once_is_unknown() {
        // Sent and closed before the accept: the client's socket is in FIN_WAIT or
        // TIME_WAIT (uid 0 there), never taken for anyone's.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        std::io::Write::write_all(&mut client, b"GET / HTTP/1.1\r\n\r\n").unwrap();
        drop(client);
        let (accepted, peer) = listener.accept().unwrap();
        let local = accepted.local_addr().unwrap();
        // The close reaches the client's state at once on loopback; waited for anyway.
        let mut found = tcp_peer(local, peer).unwrap();
        for _ in 0..200 {
            if found.is_none() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
            found = tcp_peer(local, peer).unwrap();
        }
        assert_eq!(found, None);
        // Our end is closed too: the client's socket leaves FIN_WAIT2 for TIME_WAIT.
        drop(accepted);
        assert_eq!(tcp_peer(local, peer).unwrap(), None);
    }

    #[test]
    fn finds_a_v6_client_and_a_v4_mapped_one() {
        let Ok(listener) = TcpListener::bind("[::]:0") else {
            return; // no IPv6 on this machine
        };
        let port = listener.local_addr().unwrap().port();
        for to in [format!("[::1]:{port}"), format!("127.0.0.1:{port}")] {
            let _client = TcpStream::connect(&to).unwrap();
            let (accepted, peer) = listener.accept().unwrap();
            let found = tcp_peer(accepted.local_addr().unwrap(), peer).unwrap();
            assert_eq!(found.map(|p| p.uid), Some(own()), "client of {to}");
        }
    }

    #[test]
    fn another_users_socket_is_theirs() {
        if own() != 0 {
            return; // needs root to make a socket of another uid
        }
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let std::net::SocketAddr::V4(v4) = addr else {
            unreachable!()
        };
        // SAFETY: a zeroed sockaddr_in is valid; it is filled before the fork, so the
        // child allocates nothing (other test threads may hold the allocator's lock).
        let mut to: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        to.sin_family = libc::AF_INET as libc::sa_family_t;
        to.sin_port = v4.port().to_be();
        to.sin_addr.s_addr = u32::from_ne_bytes(v4.ip().octets());
        // A thread cannot change uid alone (glibc changes every thread): a child does.
        // SAFETY: the child only makes system calls before _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            unsafe {
                if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                    libc::_exit(2);
                }
                let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
                let len = size_of::<libc::sockaddr_in>() as libc::socklen_t;
                if fd < 0 || libc::connect(fd, (&to as *const libc::sockaddr_in).cast(), len) != 0 {
                    libc::_exit(1);
                }
                // Held open until the parent has looked and closed its end.
                let mut byte = 0u8;
                libc::read(fd, (&mut byte as *mut u8).cast(), 1);
                libc::_exit(0);
            }
        }
        let (accepted, peer) = listener.accept().unwrap();
        let found = tcp_peer(accepted.local_addr().unwrap(), peer).unwrap();
        drop(accepted);
        let mut status = 0;
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(found.map(|p| p.uid), Some(65534));
    }

    #[test]
    fn reads_attributes_and_refuses_short_answers() {
        let mut attrs = Vec::new();
        attrs.extend_from_slice(&8u16.to_ne_bytes());
        attrs.extend_from_slice(&5u16.to_ne_bytes());
        attrs.extend_from_slice(&[1, 2, 3, 4]);
        attrs.extend_from_slice(&12u16.to_ne_bytes());
        attrs.extend_from_slice(&INET_DIAG_CGROUP_ID.to_ne_bytes());
        attrs.extend_from_slice(&42u64.to_ne_bytes());
        assert_eq!(
            attribute(&attrs, INET_DIAG_CGROUP_ID).and_then(|v| read_struct::<u64>(v, 0)),
            Some(42)
        );
        assert_eq!(attribute(&attrs[..10], INET_DIAG_CGROUP_ID), None);
        assert!(parse_answer(&[0u8; 3], &SockId::default()).is_err());
    }
}
