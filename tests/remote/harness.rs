//! For tests/remote_*.rs: the built daemon with `--listen 127.0.0.1:0` (its port read
//! from its log), and a small Connect client written here (envelopes, JSON and binary
//! protobuf, unary and streaming) over hyper's client connections, HTTP/1.1 or h2c.
#![allow(dead_code)]

// tests/common/stop.rs, loaded once by tests/daemon/main.rs.
use crate::stop;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Child, Command, Stdio};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt, Full};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::sync::mpsc;

pub const BIN: &str = env!("CARGO_BIN_EXE_native-shell-daemon");
/// Generous: both cores may be busy.
pub const PATIENCE: Duration = Duration::from_secs(30);

pub struct Daemon {
    child: Child,
    pub addr: SocketAddr,
    pub socket: PathBuf,
    pub dir: tempfile::TempDir,
    pub token: Option<String>,
}

impl Daemon {
    /// A daemon on its own socket, listening on a free loopback port; `token`: with
    /// `--access-token-file`.
    pub fn start(token: Option<&str>) -> Self {
        Self::start_with(token, &[])
    }

    /// As `start`, with more of the daemon's arguments (`--allowed-host devbox`, ...).
    pub fn start_with(token: Option<&str>, extra: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("run").join("daemon.sock");
        let root = dir.path().join("root");
        std::fs::create_dir_all(&root).unwrap();
        let mut cmd = Command::new(BIN);
        cmd.arg("--socket")
            .arg(&socket)
            .args(["--listen", "127.0.0.1:0", "--project-root"])
            .arg(&root);
        if let Some(token) = token {
            let file = dir.path().join("token");
            std::fs::write(&file, format!("{token}\n")).unwrap();
            cmd.arg("--access-token-file").arg(&file);
        }
        cmd.args(extra);
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(addr) = line.strip_prefix("native-shell-daemon: listening on http://") {
                    let _ = tx.send(addr.parse::<SocketAddr>().unwrap());
                }
            }
        });
        let addr = rx.recv_timeout(PATIENCE).expect("the daemon's listening line");
        Daemon {
            child,
            addr,
            socket,
            dir,
            token: token.map(str::to_string),
        }
    }

    /// The daemon's process id.
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    fn alive(&mut self) -> bool {
        stop::running(&mut self.child)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        stop::stop(&mut self.child);
    }
}

/// Polls `check` until it holds, within [`PATIENCE`].
pub async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    H1,
    H2,
}

/// A request body a test feeds piece by piece (a client stream).
pub struct Feed {
    rx: mpsc::Receiver<Bytes>,
}

impl hyper::body::Body for Feed {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.rx.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

pub type AnyBody = http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>;

pub fn whole(bytes: impl Into<Bytes>) -> AnyBody {
    Full::new(bytes.into()).boxed()
}

pub fn feed() -> (mpsc::Sender<Bytes>, AnyBody) {
    let (tx, rx) = mpsc::channel(16);
    (tx, Feed { rx }.boxed())
}

/// One request on a new connection of `version`.
pub async fn send(addr: SocketAddr, version: Version, req: Request<AnyBody>) -> Response<Incoming> {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let io = TokioIo::new(stream);
    match version {
        Version::H1 => {
            let (mut sender, conn) = hyper::client::conn::http1::handshake(io).await.unwrap();
            tokio::spawn(conn);
            sender.send_request(req).await.unwrap()
        }
        Version::H2 => {
            let (mut sender, conn) = hyper::client::conn::http2::handshake(hyper_util::rt::TokioExecutor::new(), io)
                .await
                .unwrap();
            tokio::spawn(conn);
            sender.send_request(req).await.unwrap()
        }
    }
}

/// A POST to `path` with these headers and body.
pub fn post(
    daemon: &Daemon,
    path: &str,
    content_type: &str,
    headers: &[(&str, &str)],
    body: AnyBody,
) -> Request<AnyBody> {
    let mut builder = Request::post(format!("http://{}{path}", daemon.addr)).header("content-type", content_type);
    if let Some(token) = &daemon.token {
        builder = builder.header("x-access-token", token.as_str());
    }
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(body).unwrap()
}

pub async fn body_bytes(response: Response<Incoming>) -> Bytes {
    tokio::time::timeout(PATIENCE, response.into_body().collect())
        .await
        .expect("the body in time")
        .unwrap()
        .to_bytes()
}

/// A unary JSON call to `process.Process`: the status and the JSON body (`Null` when
/// empty).
pub async fn unary_json(daemon: &Daemon, method: &str, message: serde_json::Value) -> (StatusCode, serde_json::Value) {
    unary_json_to(daemon, "process.Process", method, message).await
}

/// A unary JSON call to `filesystem.Filesystem`, as `unary_json`.
pub async fn fs_json(daemon: &Daemon, method: &str, message: serde_json::Value) -> (StatusCode, serde_json::Value) {
    unary_json_to(daemon, "filesystem.Filesystem", method, message).await
}

/// A unary JSON call to `service`'s `method` (`filesystem.Filesystem`, ...): the status
/// and the JSON body (`Null` when empty).
pub async fn unary_json_to(
    daemon: &Daemon,
    service: &str,
    method: &str,
    message: serde_json::Value,
) -> (StatusCode, serde_json::Value) {
    let req = post(
        daemon,
        &format!("/{service}/{method}"),
        "application/json",
        &[],
        whole(message.to_string()),
    );
    let response = send(daemon.addr, Version::H1, req).await;
    let status = response.status();
    let body = body_bytes(response).await;
    let value = if body.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::from_slice(&body).unwrap()
    };
    (status, value)
}

/// A unary binary-protobuf call.
pub async fn unary_proto<M: prost::Message>(daemon: &Daemon, method: &str, message: &M) -> (StatusCode, Bytes) {
    let req = post(
        daemon,
        &format!("/process.Process/{method}"),
        "application/proto",
        &[],
        whole(message.encode_to_vec()),
    );
    let response = send(daemon.addr, Version::H2, req).await;
    let status = response.status();
    (status, body_bytes(response).await)
}

pub fn envelope(flags: u8, payload: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(5 + payload.len());
    out.push(flags);
    out.extend((payload.len() as u32).to_be_bytes());
    out.extend_from_slice(payload);
    out.into()
}

/// A server stream's envelopes as they come.
pub struct Envelopes {
    body: Incoming,
    buf: BytesMut,
    pub status: StatusCode,
}

impl Envelopes {
    pub fn new(response: Response<Incoming>) -> Self {
        Envelopes {
            status: response.status(),
            body: response.into_body(),
            buf: BytesMut::new(),
        }
    }

    /// The next `(flags, payload)`; `None` at the end of the body.
    pub async fn next(&mut self) -> Option<(u8, Bytes)> {
        loop {
            if self.buf.len() >= 5 {
                let len = u32::from_be_bytes([self.buf[1], self.buf[2], self.buf[3], self.buf[4]]) as usize;
                if self.buf.len() >= 5 + len {
                    let whole = self.buf.split_to(5 + len).freeze();
                    return Some((whole[0], whole.slice(5..)));
                }
            }
            let frame = tokio::time::timeout(PATIENCE, self.body.frame())
                .await
                .expect("the next message in time")?;
            if let Ok(data) = frame.unwrap().into_data() {
                self.buf.extend_from_slice(&data);
            }
        }
    }
}

/// A streaming call (`Start`, `Connect`) in JSON, one request message.
pub async fn stream_json(
    daemon: &Daemon,
    version: Version,
    method: &str,
    message: serde_json::Value,
    headers: &[(&str, &str)],
) -> JsonEvents {
    let req = post(
        daemon,
        &format!("/process.Process/{method}"),
        "application/connect+json",
        headers,
        whole(envelope(0, message.to_string().as_bytes())),
    );
    JsonEvents(Envelopes::new(send(daemon.addr, version, req).await))
}

/// A JSON server stream's messages.
pub struct JsonEvents(pub Envelopes);

impl JsonEvents {
    /// The next message's `event`, or `Err(end message)` at the end of the stream.
    pub async fn next(&mut self) -> Result<serde_json::Value, serde_json::Value> {
        let (flags, payload) = self
            .0
            .next()
            .await
            .expect("an end-of-stream message before the body ends");
        let value: serde_json::Value = serde_json::from_slice(&payload).unwrap();
        if flags & 0x02 != 0 {
            return Err(value);
        }
        Ok(value["event"].clone())
    }

    /// Reads events until the end event: the bytes of each data kind (decoded from
    /// base64) and the end event; keepalives skipped.
    pub async fn until_end(&mut self) -> Collected {
        let mut seen = Collected::default();
        loop {
            let event = self
                .next()
                .await
                .unwrap_or_else(|end| panic!("the stream ended before its end event: {end}"));
            if seen.take(&event) {
                return seen;
            }
        }
    }

    /// Reads until `text` has been seen in the data of any kind.
    pub async fn until_text(&mut self, seen: &mut Collected, text: &str) {
        while !seen.all().contains(text) {
            let event = self
                .next()
                .await
                .unwrap_or_else(|end| panic!("ended before {text:?}: {end}"));
            assert!(!seen.take(&event), "the process ended before {text:?}: {}", seen.all());
        }
    }
}

#[derive(Default, Debug)]
pub struct Collected {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub pty: Vec<u8>,
    pub end: serde_json::Value,
    pub keepalives: usize,
}

impl Collected {
    /// Takes an event; true for the end event.
    pub fn take(&mut self, event: &serde_json::Value) -> bool {
        use base64::Engine;
        let decode = |v: &serde_json::Value| {
            base64::engine::general_purpose::STANDARD
                .decode(v.as_str().unwrap())
                .unwrap()
        };
        if let Some(data) = event.get("data") {
            for (kind, into) in [
                ("stdout", &mut self.stdout),
                ("stderr", &mut self.stderr),
                ("pty", &mut self.pty),
            ] {
                if let Some(bytes) = data.get(kind) {
                    into.extend(decode(bytes));
                }
            }
        } else if event.get("keepalive").is_some() {
            self.keepalives += 1;
        } else if let Some(end) = event.get("end") {
            self.end = end.clone();
            return true;
        }
        false
    }

    pub fn all(&self) -> String {
        let mut all = self.stdout.clone();
        all.extend(&self.stderr);
        all.extend(&self.pty);
        String::from_utf8_lossy(&all).into_owned()
    }
}

pub fn pid_alive(pid: i64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'),
        Err(_) => false,
    }
}

pub fn path_str(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}
