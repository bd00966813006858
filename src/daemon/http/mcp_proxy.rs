//! `/mcp`: MCP over Streamable HTTP, served by the Node MCP server beside the daemon
//! (tools/mcp/http.ts, run by `native-shell-service daemon --listen`: tools/daemon-front.ts)
//! on a unix socket in a private directory, given as `--mcp-upstream`. Each request is
//! passed there on a connection of its own and its answer streamed back as it comes
//! (SSE: progress, list changes, the GET stream), so this file holds no MCP state.
//!
//! The token was checked by the router (auth.rs) and is not passed on. What is checked
//! here is `Origin`, against DNS rebinding: a web page whose name an attacker points at
//! 127.0.0.1 is, to the browser, same-origin with this port, and could drive the tools
//! of a daemon that listens without a token. A request without `Origin` (every
//! non-browser client) passes; a browser's must name a loopback host, this very IP
//! address (a page from this machine's own address, which no rebinding can forge), or
//! one of `--allowed-origin`. Anything else: 403 with a coded JSON body.

use std::net::IpAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderName, HeaderValue, HOST, ORIGIN};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;

use super::body::{full, Body, BodyError};
use super::Face;

/// Headers that belong to one hop (RFC 9110 7.6.1) or carry the token: never passed on.
const NOT_FORWARDED: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "authorization",
    "x-access-token",
];

pub async fn handle(req: Request<Incoming>, face: Arc<Face>) -> Response<Body> {
    if let Err(why) = origin_allowed(req.headers(), &face.listen.allowed_origins) {
        return coded(StatusCode::FORBIDDEN, "ORIGIN_REFUSED", &why);
    }
    let Some(upstream) = face.listen.mcp_upstream.clone() else {
        return coded(
            StatusCode::SERVICE_UNAVAILABLE,
            "MCP_UNAVAILABLE",
            "no MCP server runs beside this daemon: start it with `native-shell-service daemon --listen ...` (the package's command), not the bare binary",
        );
    };
    match forward(req, &upstream).await {
        Ok(response) => response,
        Err(why) => {
            eprintln!("native-shell-daemon: /mcp: {why}");
            coded(
                StatusCode::SERVICE_UNAVAILABLE,
                "MCP_UNAVAILABLE",
                &format!("the MCP server cannot be reached: {why}"),
            )
        }
    }
}

/// One request to the upstream and its answer, both bodies streamed.
async fn forward(req: Request<Incoming>, upstream: &std::path::Path) -> Result<Response<Body>, String> {
    private_dir(upstream)?;
    let stream = UnixStream::connect(upstream)
        .await
        .map_err(|e| format!("{}: {e}", upstream.display()))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake::<_, Incoming>(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    // Ends when the answer's body is read or dropped (the client went away).
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let (parts, body) = req.into_parts();
    let path = parts.uri.path_and_query().map_or("/mcp", |p| p.as_str()).to_owned();
    let mut up = Request::builder().method(parts.method).uri(path);
    if let Some(headers) = up.headers_mut() {
        copy_headers(&parts.headers, headers);
        // The upstream listens on a unix socket: any name does.
        headers.insert(HOST, HeaderValue::from_static("localhost"));
    }
    let up = up.body(body).map_err(|e| e.to_string())?;
    let response = sender.send_request(up).await.map_err(|e| e.to_string())?;
    let (mut parts, body) = response.into_parts();
    let mut headers = HeaderMap::new();
    copy_headers(&parts.headers, &mut headers);
    parts.headers = headers;
    Ok(Response::from_parts(
        parts,
        body.map_err(|e| Box::new(e) as BodyError).boxed(),
    ))
}

/// The upstream's directory must be this user's alone (a real directory, mode 0700 or
/// stricter), checked before every connection, failing closed: a socket in a directory
/// another user can write could be swapped for theirs, which would then read the
/// commands sent to `/mcp` and answer in our server's name.
fn private_dir(upstream: &std::path::Path) -> Result<(), String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = upstream
        .parent()
        .ok_or_else(|| format!("{} has no directory", upstream.display()))?;
    let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let uid = rustix::process::getuid().as_raw();
    if !meta.file_type().is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "{} is not a private directory of uid {uid} (mode {:o}, owner {}): refused",
            dir.display(),
            meta.permissions().mode() & 0o777,
            meta.uid()
        ));
    }
    Ok(())
}

fn copy_headers(from: &HeaderMap, to: &mut HeaderMap) {
    for (name, value) in from {
        if !NOT_FORWARDED.contains(&name.as_str()) && name != HOST {
            to.append(HeaderName::clone(name), value.clone());
        }
    }
}

/// A refusal the MCP client can show: `{"error": {"code", "message"}}`.
fn coded(status: StatusCode, code: &str, message: &str) -> Response<Body> {
    let body = serde_json::json!({ "error": { "code": code, "message": message } }).to_string();
    full(status, "application/json", Bytes::from(body))
}

/// Whether a request's `Origin` may reach the tools (the file's comment says why).
pub fn origin_allowed(headers: &HeaderMap, allowed: &[String]) -> Result<(), String> {
    let Some(origin) = headers.get(ORIGIN) else {
        return Ok(());
    };
    let refused = |o: &str| {
        Err(format!(
            "Origin {o} may not use /mcp (DNS rebinding guard); allow it with --allowed-origin {o}"
        ))
    };
    let Ok(origin) = origin.to_str() else {
        return refused("(not text)");
    };
    let origin = origin.trim_end_matches('/');
    if allowed
        .iter()
        .any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(origin))
    {
        return Ok(());
    }
    // scheme://host[:port]; "null" (a sandboxed frame, a file) has no host and is refused.
    let Some((_, rest)) = origin.split_once("://") else {
        return refused(origin);
    };
    let host = host_of(rest);
    if host.eq_ignore_ascii_case("localhost") {
        return Ok(());
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        if ip.is_loopback() {
            return Ok(());
        }
        // A page from this machine's own address: the request's Host names the same IP.
        let own = headers.get(HOST).and_then(|h| h.to_str().ok()).map(host_of);
        if own.and_then(|h| h.parse::<IpAddr>().ok()) == Some(ip) {
            return Ok(());
        }
    }
    refused(origin)
}

/// The host of `host[:port]` (an IPv6 literal without its brackets).
fn host_of(authority: &str) -> &str {
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split(']').next().unwrap_or(v6);
    }
    authority.rsplit_once(':').map_or(authority, |(h, _)| h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(origin: &str, host: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(ORIGIN, HeaderValue::from_str(origin).unwrap());
        h.insert(HOST, HeaderValue::from_str(host).unwrap());
        h
    }

    #[test]
    fn the_upstream_must_sit_in_a_private_directory() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("mcp.sock");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(private_dir(&socket).is_ok());
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(private_dir(&socket).unwrap_err().contains("not a private directory"));
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        assert!(private_dir(&link.join("mcp.sock")).is_err());
    }

    #[test]
    fn browsers_are_held_to_loopback_this_address_or_the_list() {
        assert!(origin_allowed(&HeaderMap::new(), &[]).is_ok());
        assert!(origin_allowed(&with("http://localhost:3000", "127.0.0.1:8"), &[]).is_ok());
        assert!(origin_allowed(&with("http://127.0.0.1", "127.0.0.1:8"), &[]).is_ok());
        assert!(origin_allowed(&with("http://[::1]:5", "[::1]:8"), &[]).is_ok());
        assert!(origin_allowed(&with("http://10.0.0.5:3000", "10.0.0.5:8"), &[]).is_ok());
        // DNS rebinding: the attacker's name, sent as both Origin and Host.
        assert!(origin_allowed(&with("http://evil.example:8", "evil.example:8"), &[]).is_err());
        assert!(origin_allowed(&with("http://10.0.0.6", "10.0.0.5:8"), &[]).is_err());
        assert!(origin_allowed(&with("null", "127.0.0.1:8"), &[]).is_err());
        assert!(origin_allowed(&with("http://localhost.evil.example", "127.0.0.1:8"), &[]).is_err());
        let list = ["https://ide.example".to_owned()];
        assert!(origin_allowed(&with("https://ide.example", "ide.example"), &list).is_ok());
    }
}
