//! Who is on the other end of a loopback TCP connection: the uid that owns the client's
//! socket, read from the kernel's socket tables (/proc/net/tcp and tcp6), where both
//! ends of a loopback connection are listed, each with its owner.
//!
//! Why: a unix socket tells its peer's uid (`SO_PEERCRED`); TCP does not, and a daemon
//! listening on 127.0.0.1 without a token would otherwise run commands for every user of
//! the machine (src/daemon/http/auth.rs). The lookup names the client's socket by its
//! exact four-tuple, so a socket of another user cannot stand in for it.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The uid owning the socket whose local end is `peer` and remote end is `local` (our
/// accepted connection's addresses, seen from the other side); `None` when no such
/// socket is listed (it closed meanwhile: a caller refuses it).
pub fn loopback_peer_uid(local: SocketAddr, peer: SocketAddr) -> io::Result<Option<u32>> {
    // A client may reach an IPv4 listener from an IPv6 socket (a v4-mapped address),
    // which tcp6 lists: both tables are searched.
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = match std::fs::read_to_string(table) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        if let Some(uid) = find_owner(&text, peer, local) {
            return Ok(Some(uid));
        }
    }
    Ok(None)
}

/// The uid column of the table's line whose local address is `local` and remote
/// address is `remote`.
fn find_owner(table: &str, local: SocketAddr, remote: SocketAddr) -> Option<u32> {
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // sl local rem st queues timer retransmits uid ...
        if fields.len() < 8 {
            return None;
        }
        let same = parse_address(fields[1]).is_some_and(|a| same_endpoint(a, local))
            && parse_address(fields[2]).is_some_and(|a| same_endpoint(a, remote));
        if same {
            fields[7].parse().ok()
        } else {
            None
        }
    })
}

/// `0100007F:1F90` (IPv4: the address as the kernel's 32-bit word, printed in this
/// machine's byte order) or 32 hex digits for IPv6 (four such words).
fn parse_address(field: &str) -> Option<SocketAddr> {
    let (address, port) = field.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let ip = match address.len() {
        8 => IpAddr::V4(Ipv4Addr::from(u32::from_str_radix(address, 16).ok()?.to_ne_bytes())),
        32 => {
            let mut bytes = [0u8; 16];
            for (i, word) in bytes.chunks_mut(4).enumerate() {
                let value = u32::from_str_radix(address.get(i * 8..i * 8 + 8)?, 16).ok()?;
                word.copy_from_slice(&value.to_ne_bytes());
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// The same endpoint, a v4-mapped IPv6 address being its IPv4 one.
fn same_endpoint(a: SocketAddr, b: SocketAddr) -> bool {
    let plain = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    a.port() == b.port() && plain(a.ip()) == plain(b.ip())
}

#[cfg(test)]
mod tests {
    use std::net::{TcpListener, TcpStream};

    use super::*;

    #[test]
    fn finds_the_owner_of_a_real_loopback_client() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, peer) = listener.accept().unwrap();
        let local = accepted.local_addr().unwrap();
        let uid = loopback_peer_uid(local, peer).unwrap();
        assert_eq!(uid, Some(rustix::process::geteuid().as_raw()));
        // The four-tuple names one socket: the listener's own address as the peer does not.
        assert_eq!(loopback_peer_uid(local, local).unwrap(), None);
        drop(client);
    }

    #[test]
    fn finds_a_v6_client_of_a_v6_listener() {
        let Ok(listener) = TcpListener::bind("[::1]:0") else {
            return; // no IPv6 loopback on this machine
        };
        let _client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, peer) = listener.accept().unwrap();
        let uid = loopback_peer_uid(accepted.local_addr().unwrap(), peer).unwrap();
        assert_eq!(uid, Some(rustix::process::geteuid().as_raw()));
    }

    #[test]
    fn reads_the_tables_format() {
        let table =
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
                     0: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1234        0 1 1 0\n";
        let local: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let remote: SocketAddr = "127.0.0.1:54321".parse().unwrap();
        if cfg!(target_endian = "little") {
            assert_eq!(find_owner(table, local, remote), Some(1234));
            assert_eq!(find_owner(table, remote, local), None);
        }
        assert_eq!(find_owner("header\n garbage line\n", local, remote), None);
    }
}
