//! The daemon's network face, on when `--listen HOST:PORT` is given: one
//! HTTP port, HTTP/1.1 and h2c (HTTP/2 with prior knowledge) side by side through
//! hyper-util's auto server, as envd's clients use both. This file binds, accepts,
//! bounds each connection and routes each request; `auth` says who may ask,
//! `connect` is the Connect protocol, src/daemon/envd/ the E2B services.
//!
//! **Plugging a route in**: one arm in [`route`]'s `match` (after the token check) that
//! hands the request and the shared [`Face`] to the route's handler:
//! `"/mcp" => mcp_proxy::handle(req, face).await,`. A handler returns `Response<Body>`
//! (`full`, `empty`, or a streaming body from `channel`); what it needs of the daemon is
//! in `Face` (the daemon's state and runtimes, the options of `Listen`).

pub mod admission;
pub mod auth;
pub mod browser;
pub mod health;
mod idle;
pub mod mcp_proxy;
pub mod upgrade;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};

use super::conn::Daemon;
use super::protocol::body::{empty, Body};
use admission::{Admission, Slot};

/// A client has this long to send its first bytes and, over HTTP/1.1, a request's
/// headers: a connection that sends nothing does not hold a slot for ever (slowloris).
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connection that has not carried the token may go without an open request
/// (an HTTP/2 connection with no stream, an HTTP/1.1 one kept alive between requests)
/// before it is closed: its slot is one of the few shared ones (admission.rs).
const UNAUTHENTICATED_IDLE: Duration = Duration::from_secs(10);
/// The same for a connection that has carried the token: long enough for a client's
/// pool to reuse it between calls, short enough that forgotten ones are given back.
/// (An HTTP/1.1 connection of either kind is closed sooner, by hyper's header timer:
/// HEADER_TIMEOUT between requests.)
const AUTHENTICATED_IDLE: Duration = Duration::from_secs(60);
/// How long an idle connection told to close (HTTP/2's GOAWAY) may take to do so.
const CLOSE_GRACE: Duration = Duration::from_secs(5);
/// HTTP/2 pings on an idle connection, and how long the answer may take before the
/// connection is dropped (a peer that vanished without closing).
const H2_KEEPALIVE: Duration = Duration::from_secs(30);
const H2_KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(20);
/// Streams one HTTP/2 connection may have open at once.
const H2_MAX_STREAMS: u32 = 256;

/// What `--listen` and its companions ask for.
#[derive(Clone, Debug)]
pub struct Listen {
    pub addr: SocketAddr,
    /// `--access-token-file`'s token; `None`: no token (loopback only).
    pub token: Option<Vec<u8>>,
    /// `--project-root`: the envd service's project root and the default working
    /// directory of the processes it starts (default: `$HOME`, else `/`).
    pub project_root: Option<PathBuf>,
    /// `--mcp-upstream`: the unix socket of the MCP server that `/mcp` is passed to.
    pub mcp_upstream: Option<PathBuf>,
    /// `--allowed-origin` (repeatable): browser origins taken besides loopback ones
    /// (browser.rs).
    pub allowed_origins: Vec<String>,
    /// `--allowed-host` (repeatable): `Host` names taken without a token besides
    /// `localhost` and IP literals (browser.rs).
    pub allowed_hosts: Vec<String>,
}

/// What every request's handler may use.
pub struct Face {
    pub daemon: Arc<Daemon>,
    pub listen: Listen,
    /// E2B's services over the daemon's state.
    pub envd: Arc<super::envd::Envd>,
    /// What `/health` says besides readiness (health.rs).
    pub health: health::Health,
    /// Starts a session of the daemon's own protocol on a socket (src/daemon/session.rs),
    /// for a connection upgraded to it (upgrade.rs). Given by the server, which serves
    /// the unix socket's sessions the same way, so this face needs nothing above it.
    pub session: fn(Arc<Daemon>, tokio::net::UnixStream),
}

/// Checks the exposure rules, then binds. Called before the daemon serves anything,
/// so a refused or busy address ends the daemon with its reason.
pub async fn bind(listen: &Listen) -> Result<TcpListener, String> {
    auth::check_exposure(&listen.addr, listen.token.as_deref())?;
    TcpListener::bind(listen.addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", listen.addr))
}

/// Accepts connections until the daemon's runtime ends. Every connection is taken at
/// once (none waits in the backlog behind a flood): admission.rs gives it a slot,
/// displacing a connection without the token when the shared ones are full.
pub async fn serve(listener: TcpListener, face: Arc<Face>) {
    match listener.local_addr() {
        Ok(addr) => eprintln!("native-shell-daemon: listening on http://{addr}"),
        Err(e) => eprintln!("native-shell-daemon: listening (address unknown: {e})"),
    }
    let admission = Arc::new(Admission::default());
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                let face = face.clone();
                let slot = Arc::new(admission.admit(peer.ip()));
                tokio::spawn(async move {
                    let serving = async {
                        // Who may connect: auth.rs.
                        if !auth::may_connect(&stream, peer, face.listen.token.is_some()).await {
                            return;
                        }
                        if face.listen.token.is_none() {
                            // The owner check's time does not count against the connection's
                            // grace before it may be displaced (admission.rs).
                            slot.serving();
                        }
                        connection(stream, face, slot.clone()).await;
                    };
                    // Displaced to make room: the connection is dropped, so closed, at once.
                    tokio::select! {
                        _ = serving => {}
                        _ = slot.displaced() => {}
                    }
                });
            }
            // Out of descriptors and the like: a pause rather than a busy loop.
            Err(e) => {
                eprintln!("native-shell-daemon: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

async fn connection(stream: TcpStream, face: Arc<Face>, slot: Arc<Slot>) {
    let _ = stream.set_nodelay(true);
    // The auto server reads the first bytes to tell HTTP/2's preface from HTTP/1.1 with
    // no deadline of its own: a client must have sent something by then.
    let mut first = [0u8; 1];
    match tokio::time::timeout(HEADER_TIMEOUT, stream.peek(&mut first)).await {
        Ok(Ok(n)) if n > 0 => {}
        _ => return,
    }
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .max_buf_size(64 * 1024);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(H2_KEEPALIVE))
        .keep_alive_timeout(H2_KEEPALIVE_TIMEOUT)
        .max_concurrent_streams(H2_MAX_STREAMS)
        .max_header_list_size(64 * 1024);
    let activity = idle::Activity::new();
    let service = {
        let slot = slot.clone();
        let activity = activity.clone();
        hyper::service::service_fn(move |req| {
            let open = activity.begin();
            // The connection's kind is settled by its requests: the first that carries
            // the token moves it to the reserved slots (admission.rs).
            if carries_the_token(&req, &face) {
                slot.authenticate();
            } else {
                slot.mark_refused();
            }
            let face = face.clone();
            async move { Ok::<_, Infallible>(idle::held_until_sent(route(req, face).await, open)) }
        })
    };
    // With upgrades: the daemon's own protocol is reached by an HTTP/1.1 Upgrade.
    let serving = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
    tokio::pin!(serving);
    // Until it ends, the connection is looked at whenever it may have become idle for
    // longer than its kind may be; then it is told to close (HTTP/2: GOAWAY; HTTP/1.1:
    // closed between requests), and dropped if it has not within CLOSE_GRACE.
    loop {
        let limit = if slot.is_authenticated() {
            AUTHENTICATED_IDLE
        } else {
            UNAUTHENTICATED_IDLE
        };
        let idle = activity.idle_for();
        if idle >= limit {
            serving.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(CLOSE_GRACE, serving.as_mut()).await;
            return;
        }
        tokio::select! {
            _ = serving.as_mut() => return,
            _ = tokio::time::sleep(limit - idle) => {}
        }
    }
}

/// Whether a request proves its connection a token holder's: any but `/health` with
/// the token, or, on a daemon without one (whose connections are its own user's), any
/// but `/health` (a poller of which proves nothing).
fn carries_the_token(req: &Request<Incoming>, face: &Face) -> bool {
    req.uri().path() != "/health" && auth::authorized(req.headers(), face.listen.token.as_deref())
}

/// One request: what a web page could send is refused first (browser.rs), then
/// `/health` is open; everything else needs the token, then goes to its route.
async fn route(req: Request<Incoming>, face: Arc<Face>) -> Response<Body> {
    if let Err(refusal) = browser::admit(req.method(), req.uri(), req.headers(), &face.listen) {
        discard_body(req.into_body()).await;
        return refusal.into_response();
    }
    let path = req.uri().path();
    if path == "/health" {
        let answer = health::handle(&req, &face).await;
        discard_body(req.into_body()).await;
        return answer;
    }
    if !auth::authorized(req.headers(), face.listen.token.as_deref()) {
        discard_body(req.into_body()).await;
        return empty(StatusCode::UNAUTHORIZED);
    }
    if face.listen.token.is_none() {
        if let Err(refusal) = browser::preflighted(req.method(), path, req.headers()) {
            discard_body(req.into_body()).await;
            return refusal.into_response();
        }
    }
    match path {
        p if p.starts_with("/process.Process/") => super::envd::process::handle(req, face.envd.clone()).await,
        p if p.starts_with(super::envd::filesystem::PREFIX) => {
            super::envd::filesystem::handle(req, face.envd.clone()).await
        }
        super::envd::files::PATH => super::envd::files::handle(req, face.envd.clone()).await,
        "/mcp" | "/mcp/" => mcp_proxy::handle(req, face).await,
        "/daemon" => upgrade::handle(req, face).await,
        _ => empty(StatusCode::NOT_FOUND),
    }
}

/// Reads and drops what a refused request still sends (at most 1 MiB, for at most
/// 5 s), so a client in the middle of an upload gets the 401 rather than a connection
/// reset under its feet (e2b's files.write saw "fetch failed"). Bounded, so a refused
/// client cannot make the daemon read for long.
async fn discard_body(body: Incoming) {
    let limited = http_body_util::Limited::new(body, 1 << 20);
    let _ = tokio::time::timeout(Duration::from_secs(5), limited.collect()).await;
}
