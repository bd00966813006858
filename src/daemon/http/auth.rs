//! Who may use the network face, failing closed:
//! - it listens on 127.0.0.1 unless told otherwise, and refuses any address that is not
//!   loopback without an access token: a port open to a network with no token would
//!   give anyone who reaches it a shell as this user;
//! - with a token, every request but `/health` (for probes; without the token it says
//!   nothing but whether the daemon is ready: health.rs)
//!   must carry it, as `X-Access-Token: T` (envd's clients) or `Authorization: Bearer T`
//!   (MCP clients); anything else gets 401 with an empty body, so a caller without the
//!   token learns nothing of what is served;
//! - the comparison takes the same time wherever the first difference is, so the
//!   token cannot be guessed byte by byte from response times;
//! - without a token, a loopback port is still reachable by every user of the machine:
//!   each connection's client socket must then belong to the daemon's own user, as the
//!   unix socket's `SO_PEERCRED` check demands (`may_connect`), else it is closed
//!   before a byte is read. Where the kernel cannot tell (not Linux), a token is
//!   required for any address;
//! - token or not, a process of one of the daemon's own jobs is refused the same way
//!   (src/daemon/peer.rs says how it is told).
//!
//! TLS is the reverse proxy's job (a pod's ingress, a sidecar): the token travels in
//! clear on the hop to this port.

use std::net::SocketAddr;
use std::path::Path;

use hyper::header::{HeaderMap, AUTHORIZATION};

/// The token from its file: its content less surrounding whitespace (a trailing newline
/// is how most tools write one). An empty or unreadable file is an error, never "no
/// token".
pub fn read_token_file(path: &Path) -> Result<Vec<u8>, String> {
    let bytes =
        std::fs::read(path).map_err(|e| format!("cannot read the access token file {}: {e}", path.display()))?;
    let token = bytes.trim_ascii();
    if token.is_empty() {
        return Err(format!("the access token file {} is empty", path.display()));
    }
    if token.iter().any(|b| !b.is_ascii_graphic()) {
        // It travels in an HTTP header: a byte a header cannot hold could never match.
        return Err(format!(
            "the access token in {} must be printable ASCII without spaces",
            path.display()
        ));
    }
    Ok(token.to_vec())
}

/// Refuses to listen on a non-loopback address without a token, and on any address
/// without one where a connection's user cannot be checked.
pub fn check_exposure(addr: &SocketAddr, token: Option<&[u8]>) -> Result<(), String> {
    if token.is_some() {
        return Ok(());
    }
    if !addr.ip().is_loopback() {
        return Err(format!(
            "refusing to listen on {addr} without --access-token-file: only a loopback address (127.0.0.1, ::1) may go without a token"
        ));
    }
    if !cfg!(target_os = "linux") {
        return Err(format!(
            "refusing to listen on {addr} without --access-token-file: on this platform the user behind a connection cannot be checked, so any local user could use the port"
        ));
    }
    Ok(())
}

/// Whether the TCP client may use the port at all, decided before a byte is read
/// (src/daemon/peer.rs): without a token, only the daemon's own user, from a socket
/// the kernel lists as ESTABLISHED with the connection's exact four-tuple; with or
/// without one, never a process of one of the daemon's jobs. A refusal is said on
/// stderr; the connection is then closed.
pub async fn may_connect(stream: &tokio::net::TcpStream, peer: SocketAddr, token: bool) -> bool {
    match super::super::peer::tcp_client(stream, peer, token).await {
        Ok(()) => true,
        Err(why) => {
            eprintln!("native-shell-daemon: refused a connection on the TCP port: {why}");
            false
        }
    }
}

/// Whether the request carries the token (always, when none is set).
pub fn authorized(headers: &HeaderMap, token: Option<&[u8]>) -> bool {
    let Some(token) = token else { return true };
    let given = headers.get_all("x-access-token").iter().map(|v| v.as_bytes()).chain(
        headers
            .get_all(AUTHORIZATION)
            .iter()
            .filter_map(|v| bearer(v.as_bytes())),
    );
    // Every value is compared (no early exit on a match either).
    given.fold(false, |ok, value| same(value, token) | ok)
}

fn bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(7)?;
    scheme.eq_ignore_ascii_case(b"bearer ").then(|| rest.trim_ascii())
}

/// Equal, in a time that depends only on the lengths.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_checked_in_both_headers() {
        let mut headers = HeaderMap::new();
        assert!(authorized(&headers, None));
        assert!(!authorized(&headers, Some(b"secret")));
        headers.insert("x-access-token", "secret".parse().unwrap());
        assert!(authorized(&headers, Some(b"secret")));
        assert!(!authorized(&headers, Some(b"secreT")));
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, "Bearer secret".parse().unwrap());
        assert!(authorized(&headers, Some(b"secret")));
        headers.insert(AUTHORIZATION, "Basic secret".parse().unwrap());
        assert!(!authorized(&headers, Some(b"secret")));
    }

    #[test]
    fn only_loopback_goes_without_a_token() {
        assert!(check_exposure(&"127.0.0.1:1".parse().unwrap(), None).is_ok());
        assert!(check_exposure(&"[::1]:1".parse().unwrap(), None).is_ok());
        assert!(check_exposure(&"0.0.0.0:1".parse().unwrap(), None).is_err());
        assert!(check_exposure(&"0.0.0.0:1".parse().unwrap(), Some(b"t")).is_ok());
    }
}
