//! `GET /health`: whether the daemon is ready, as JSON, for probes (Kubernetes,
//! load balancers) and operators. Open without the token, as probes carry none; only
//! `{"ready": ...}` is said then. With the token (or on a daemon without one, whose
//! every connection is its own user's) the modes found at start are added
//! (src/daemon/startup.rs): containment, sandbox and Landlock ABI, reaper, network face.
//!
//! Ready means every route can be served: when `/mcp` has a server behind it, that
//! server accepts a connection (it may be starting, or dead and being restarted:
//! src/daemon/mcp_child.rs). Not ready answers `503`, so a readiness probe keeps
//! clients away until it is.

use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};

use super::Face;
use crate::daemon::protocol::body::{full, Body};

/// How long the MCP server's socket may take to accept before it is taken as not ready.
const MCP_PATIENCE: Duration = Duration::from_secs(2);

/// The modes, as found once at start.
pub struct Health {
    modes: serde_json::Value,
}

impl Health {
    pub fn new(modes: serde_json::Value) -> Self {
        Health { modes }
    }
}

pub async fn handle(req: &Request<Incoming>, face: &Face) -> Response<Body> {
    let ready = match face.listen.mcp_upstream.as_deref() {
        Some(socket) => accepts(socket).await,
        None => true,
    };
    let mut body = serde_json::json!({ "ready": ready });
    if super::auth::authorized(req.headers(), face.listen.token.as_deref()) {
        body["version"] = crate::daemon::version::version().into();
        body["modes"] = face.health.modes.clone();
        if face.listen.mcp_upstream.is_some() {
            body["mcpReady"] = ready.into();
        }
    }
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    full(status, "application/json", Bytes::from(body.to_string()))
}

/// Whether the unix socket accepts a connection (closed at once).
async fn accepts(socket: &Path) -> bool {
    matches!(
        tokio::time::timeout(MCP_PATIENCE, tokio::net::UnixStream::connect(socket)).await,
        Ok(Ok(_))
    )
}
