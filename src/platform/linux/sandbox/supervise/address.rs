//! What a job's socket address names, and what the supervisor does with it: pure
//! functions over the bytes copied out of the job (`super::job::read`), so nothing the
//! job changes afterwards reaches them.

use crate::sandbox::Network;

/// `sizeof(struct sockaddr_storage)`: the kernel refuses a longer address (`EINVAL`).
pub const MAX_ADDRESS: usize = 128;
/// `offsetof(struct sockaddr_un, sun_path)`.
const UNIX_PATH_AT: usize = 2;
/// `sizeof(struct sockaddr_in)` and `SIN6_LEN_RFC2133`: the shortest the kernel takes.
const INET_LEN: usize = 16;
const INET6_LEN: usize = 24;

/// An address, as far as the decision needs it.
#[derive(Debug, PartialEq, Eq)]
pub enum Target<'a> {
    /// A pathname unix socket: the path's bytes up to its first NUL.
    UnixPath(&'a [u8]),
    /// An abstract unix socket (the path starts with a NUL).
    Abstract,
    /// An internet address with its port.
    Inet { port: u16 },
    /// Anything that names no socket elsewhere: `AF_UNSPEC` (a datagram socket's
    /// disconnect), a unix address without a path, another family (only those the
    /// filter lets a job make: `AF_NETLINK` with the network on).
    Nothing,
}

/// Reads `address` (the bytes the job passed, `addrlen` of them). `Err(errno)`: the
/// kernel would refuse it as malformed.
pub fn target(address: &[u8]) -> Result<Target<'_>, i32> {
    if address.len() > MAX_ADDRESS {
        return Err(libc::EINVAL);
    }
    let Some(family) = address.get(..2).map(|f| u16::from_ne_bytes([f[0], f[1]])) else {
        return Err(libc::EINVAL);
    };
    match i32::from(family) {
        libc::AF_UNIX => {
            let path = &address[UNIX_PATH_AT..];
            match path.first() {
                None => Ok(Target::Nothing),
                Some(0) => Ok(Target::Abstract),
                Some(_) => Ok(Target::UnixPath(path.split(|&b| b == 0).next().unwrap_or(path))),
            }
        }
        libc::AF_INET | libc::AF_INET6 => {
            let shortest = if i32::from(family) == libc::AF_INET {
                INET_LEN
            } else {
                INET6_LEN
            };
            if address.len() < shortest {
                return Err(libc::EINVAL);
            }
            Ok(Target::Inet {
                port: u16::from_be_bytes([address[2], address[3]]),
            })
        }
        _ => Ok(Target::Nothing),
    }
}

/// What is done with a call to `target` from a socket of type `kind`, under the job's
/// (effective) `network`.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Made as asked, with the bytes copied.
    Make,
    /// A pathname socket: made only if the socket file found is allowed (`super::unix_path`).
    Judge,
    Refuse(i32),
}

/// The supervisor makes the call itself, outside the job's Landlock domain, so what
/// Landlock would have checked on the job's own call is checked here:
/// - internet addresses: none with the network off; TCP to the allowed ports only with
///   `tcpPorts` (what Landlock ABI 4 refuses with `EACCES`; the filter lets no other
///   internet socket be made then, one handed in from outside is refused the same way);
/// - abstract unix sockets: always `EPERM`. Landlock's scoping (ABI 6) would let a job
///   reach its own, but it judges the caller, which would be the supervisor: no
///   abstract socket is reachable from a supervised job rather than every one.
pub fn verdict(target: &Target<'_>, kind: i32, network: &Network) -> Verdict {
    match target {
        Target::UnixPath(_) => Verdict::Judge,
        Target::Abstract => Verdict::Refuse(libc::EPERM),
        Target::Nothing => Verdict::Make,
        Target::Inet { port } => match network {
            Network::On => Verdict::Make,
            Network::TcpPorts(ports) if kind == libc::SOCK_STREAM && ports.contains(port) => Verdict::Make,
            _ => Verdict::Refuse(libc::EACCES),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unix(path: &[u8]) -> Vec<u8> {
        let mut a = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        a.extend_from_slice(path);
        a
    }

    fn inet(family: i32, port: u16, len: usize) -> Vec<u8> {
        let mut a = (family as u16).to_ne_bytes().to_vec();
        a.extend_from_slice(&port.to_be_bytes());
        a.resize(len, 0);
        a
    }

    #[test]
    fn addresses_are_read_as_the_kernel_reads_them() {
        assert_eq!(target(&unix(b"/run/bus\0junk")), Ok(Target::UnixPath(b"/run/bus")));
        assert_eq!(target(&unix(b"rel/sock")), Ok(Target::UnixPath(b"rel/sock")));
        assert_eq!(target(&unix(b"\0abstract")), Ok(Target::Abstract));
        assert_eq!(target(&unix(b"")), Ok(Target::Nothing));
        assert_eq!(target(&[1]), Err(libc::EINVAL));
        assert_eq!(target(&[0; 129]), Err(libc::EINVAL));
        assert_eq!(target(&inet(libc::AF_INET, 443, 16)), Ok(Target::Inet { port: 443 }));
        assert_eq!(target(&inet(libc::AF_INET, 443, 8)), Err(libc::EINVAL));
        assert_eq!(target(&inet(libc::AF_INET6, 22, 28)), Ok(Target::Inet { port: 22 }));
        assert_eq!(target(&inet(libc::AF_INET6, 22, 16)), Err(libc::EINVAL));
        assert_eq!(target(&(libc::AF_UNSPEC as u16).to_ne_bytes()), Ok(Target::Nothing));
    }

    #[test]
    fn internet_addresses_follow_the_network_mode() {
        let stream = libc::SOCK_STREAM;
        let to = |port| Target::Inet { port };
        assert_eq!(verdict(&to(80), stream, &Network::Off), Verdict::Refuse(libc::EACCES));
        let ports = Network::TcpPorts(vec![3000]);
        assert_eq!(verdict(&to(3000), stream, &ports), Verdict::Make);
        assert_eq!(verdict(&to(3001), stream, &ports), Verdict::Refuse(libc::EACCES));
        assert_eq!(
            verdict(&to(3000), libc::SOCK_DGRAM, &ports),
            Verdict::Refuse(libc::EACCES)
        );
        assert_eq!(verdict(&to(1), libc::SOCK_DGRAM, &Network::On), Verdict::Make);
        assert_eq!(
            verdict(&Target::Abstract, stream, &Network::On),
            Verdict::Refuse(libc::EPERM)
        );
        assert_eq!(verdict(&Target::UnixPath(b"/x"), stream, &Network::Off), Verdict::Judge);
    }
}
