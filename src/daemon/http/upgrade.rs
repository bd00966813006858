//! `/daemon`: the daemon's own protocol over the HTTP port, for what envd's API lacks
//! (waits for a pattern or for input, the screen, `readOutput` from an offset, results).
//! An HTTP/1.1 request with `Connection: Upgrade` and `Upgrade: native-shell-service/1`
//! (authenticated like every request, by the router: auth.rs) gets `101 Switching
//! Protocols`; from then on the connection carries exactly the unix socket's framed
//! messages (docs/daemon.md, "Wire"), served by the same code (src/daemon/session.rs
//! `connection`, which the server gives the face as `Face::session`), so the TypeScript
//! client (client/link.ts `openUrl`) works over TCP as over the socket.
//!
//! Who may connect: on the unix socket the peer's uid must be the daemon's; here the
//! router's rules (auth.rs) stand in for that check: the token, or, without one, a
//! loopback port whose every connection's client socket must belong to the daemon's
//! user (Linux; elsewhere a token is required). Past them, a client has what a socket
//! client has: every job of the daemon, and new ones as its user.

use std::sync::Arc;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONNECTION, UPGRADE};
use hyper::{Request, Response, StatusCode, Version};
use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;

use super::Face;
use crate::daemon::protocol::body::{empty, full, Body};

/// The `Upgrade` token (client/link.ts `UPGRADE_PROTOCOL`); its number follows the
/// wire's `PROTOCOL`.
pub const PROTOCOL_TOKEN: &str = "native-shell-service/1";

pub async fn handle(mut req: Request<Incoming>, face: Arc<Face>) -> Response<Body> {
    if !asks_for_us(&req) {
        // Only an HTTP/1.1 Upgrade reaches the protocol (HTTP/2 has no Upgrade).
        let body = serde_json::json!({ "error": {
            "code": "UPGRADE_REQUIRED",
            "message": format!("/daemon speaks the daemon's protocol after an HTTP/1.1 `Connection: Upgrade`, `Upgrade: {PROTOCOL_TOKEN}`"),
        }})
        .to_string();
        let mut response = full(StatusCode::UPGRADE_REQUIRED, "application/json", Bytes::from(body));
        response
            .headers_mut()
            .insert(UPGRADE, HeaderValue::from_static(PROTOCOL_TOKEN));
        return response;
    }
    let upgrading = hyper::upgrade::on(&mut req);
    let (daemon, session) = (face.daemon.clone(), face.session);
    tokio::spawn(async move {
        match upgrading.await {
            Ok(upgraded) => bridge(daemon, session, TokioIo::new(upgraded)).await,
            Err(e) => eprintln!("native-shell-daemon: /daemon: the upgrade failed: {e}"),
        }
    });
    let mut response = empty(StatusCode::SWITCHING_PROTOCOLS);
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("upgrade"));
    response
        .headers_mut()
        .insert(UPGRADE, HeaderValue::from_static(PROTOCOL_TOKEN));
    response
}

fn asks_for_us(req: &Request<Incoming>) -> bool {
    let has = |name, token: &str| {
        req.headers()
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    };
    req.version() == Version::HTTP_11 && has(CONNECTION, "upgrade") && has(UPGRADE, PROTOCOL_TOKEN)
}

/// Serves the upgraded connection as a socket connection: one end of a socket pair
/// goes to the socket's connection code (whose writes are non-blocking writes to a unix
/// socket: src/daemon/outbox.rs), the other is copied to and from the TCP connection.
async fn bridge<T>(
    daemon: Arc<crate::daemon::conn::Daemon>,
    session: fn(Arc<crate::daemon::conn::Daemon>, UnixStream),
    mut tcp: T,
) where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (ours, mut theirs) = match UnixStream::pair() {
        Ok(pair) => pair,
        Err(e) => {
            eprintln!("native-shell-daemon: /daemon: no socket pair: {e}");
            return;
        }
    };
    session(daemon, ours);
    // Ends when either side closes: the client went (its `keep: false` jobs end, as
    // on the socket), or the daemon closed the connection.
    let _ = tokio::io::copy_bidirectional(&mut tcp, &mut theirs).await;
}
