//! `/mcp`: MCP over Streamable HTTP, served by the Node MCP server beside the daemon
//! (tools/mcp/http.ts, run by `native-shell-service daemon --listen`: tools/daemon-front.ts)
//! on a unix socket in a private directory, given as `--mcp-upstream`. Each request is
//! passed there on a connection of its own and its answer streamed back as it comes
//! (SSE: progress, list changes, the GET stream), so this file holds no MCP state.
//!
//! The token, `Host` and `Origin` were checked by the router (auth.rs, browser.rs);
//! the token is not passed on. The upstream's own CORS headers are not passed back
//! either: this port grants no CORS (browser.rs says why).

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderName, HeaderValue, HOST};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;

use super::Face;
use crate::daemon::protocol::body::{full, Body, BodyError};

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

/// Passes headers on but those of one hop, the token, `Host`, and any CORS grant (the
/// upstream's answer may carry `Access-Control-Allow-*`; this port grants none).
fn copy_headers(from: &HeaderMap, to: &mut HeaderMap) {
    for (name, value) in from {
        let cors = name.as_str().starts_with("access-control-");
        if !NOT_FORWARDED.contains(&name.as_str()) && name != HOST && !cors {
            to.append(HeaderName::clone(name), value.clone());
        }
    }
}

/// A refusal the MCP client can show: `{"error": {"code", "message"}}`.
fn coded(status: StatusCode, code: &str, message: &str) -> Response<Body> {
    let body = serde_json::json!({ "error": { "code": code, "message": message } }).to_string();
    full(status, "application/json", Bytes::from(body))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
