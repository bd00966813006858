//! No lock-out on the network face (src/daemon/http/admission.rs, idle.rs;
//! src/daemon/envd/regular_file.rs): after each flood or stall, a legitimate call (with
//! the token; or, on a daemon without one, from its own user) is still answered. Each
//! test prints how long that call took (the goal is within 100 ms; the assertion is
//! only that it is answered within the harness's generous PATIENCE).
//!
//! The floods: HTTP/2 connections that never open a stream, `/health` pollers that
//! reconnect when closed, slowloris headers, `GET`/`POST /files` on a FIFO; and, as
//! another user (uid 65534, needs root and setpriv, skipped saying so otherwise),
//! connections that never open a stream against a daemon with a token and against one
//! without (which refuses them). Floods run one at a time (both cores are theirs).
#![cfg(unix)]

use crate::remote_harness as harness;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::*;
use hyper::{Request, StatusCode};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// More connections than the daemon ever served at once before these limits (512).
const FLOOD: usize = 600;
/// HTTP/2's connection preface and an empty SETTINGS frame: a connection that is ready
/// to open streams and never does.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

static ONE_FLOOD_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A legitimate call on a new connection (filesystem Stat of the project root, with the
/// daemon's token if it has one): asserts it is answered, prints and returns its time.
async fn legitimate_call(daemon: &Daemon, after: &str) -> Duration {
    legitimate_call_within(daemon, after, PATIENCE).await
}

async fn legitimate_call_within(daemon: &Daemon, after: &str, bound: Duration) -> Duration {
    let started = Instant::now();
    let (status, body) = tokio::time::timeout(bound, fs_json(daemon, "Stat", json!({ "path": "" })))
        .await
        .unwrap_or_else(|_| panic!("a legitimate call was not answered within {bound:?} after {after}"));
    let took = started.elapsed();
    assert_eq!(status, StatusCode::OK, "{body}");
    let who = if daemon.token.is_some() {
        "with the token"
    } else {
        "from the owner, no token"
    };
    eprintln!("after {after}: a legitimate call ({who}) answered in {took:?}");
    took
}

/// `n` connections that send HTTP/2's preface and nothing more.
async fn h2_without_streams(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    let mut held = Vec::with_capacity(n);
    for _ in 0..n {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        // A write into a connection the daemon already dropped may fail: still a try.
        let _ = stream.write_all(H2_PREFACE).await;
        held.push(stream);
    }
    held
}

/// `n` tasks, each polling `/health` on a kept-alive connection and reconnecting
/// whenever it is closed, until `stop`; `connected` counts their connections.
fn health_pollers(
    addr: SocketAddr,
    n: usize,
    stop: Arc<AtomicBool>,
    connected: Arc<AtomicUsize>,
) -> Vec<tokio::task::JoinHandle<u64>> {
    (0..n)
        .map(|_| {
            let stop = stop.clone();
            let connected = connected.clone();
            tokio::spawn(async move {
                let mut answered = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let Ok(mut stream) = TcpStream::connect(addr).await else {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    };
                    connected.fetch_add(1, Ordering::Relaxed);
                    let mut buf = [0u8; 1024];
                    'polling: while !stop.load(Ordering::Relaxed) {
                        if stream
                            .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                            .await
                            .is_err()
                        {
                            break;
                        }
                        let mut got = Vec::new();
                        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                            match stream.read(&mut buf).await {
                                Ok(0) | Err(_) => break 'polling,
                                Ok(n) => got.extend_from_slice(&buf[..n]),
                            }
                        }
                        answered += 1;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
                answered
            })
        })
        .collect()
}

/// `n` tasks, each sending a request's headers a line every second and never ending
/// them, reconnecting whenever closed, until `stop`; `connected` counts their
/// connections.
fn slowloris(
    addr: SocketAddr,
    n: usize,
    stop: Arc<AtomicBool>,
    connected: Arc<AtomicUsize>,
) -> Vec<tokio::task::JoinHandle<()>> {
    (0..n)
        .map(|_| {
            let stop = stop.clone();
            let connected = connected.clone();
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let Ok(mut stream) = TcpStream::connect(addr).await else {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    };
                    connected.fetch_add(1, Ordering::Relaxed);
                    if stream.write_all(b"GET /health HTTP/1.1\r\n").await.is_err() {
                        continue;
                    }
                    while !stop.load(Ordering::Relaxed) {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        if stream.write_all(b"X-Slow: y\r\n").await.is_err() {
                            break;
                        }
                    }
                }
            })
        })
        .collect()
}

async fn stop_all<T>(stop: &AtomicBool, tasks: Vec<tokio::task::JoinHandle<T>>) {
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.abort();
    }
}

async fn h2_connections_without_streams(token: Option<&str>) {
    let _one = ONE_FLOOD_AT_A_TIME.lock().await;
    let daemon = Daemon::start(token);
    let held = h2_without_streams(daemon.addr, FLOOD).await;
    legitimate_call(&daemon, &format!("{FLOOD} HTTP/2 connections without a stream")).await;
    drop(held);
}

/// (Against a daemon without a token the same flood can come only from its own user:
/// another user's connections are refused, the last test.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_connections_without_streams_lock_nobody_out() {
    h2_connections_without_streams(Some("floods-token")).await;
}

/// Waits for the daemon to close `stream` (reads until the end, dropping what comes);
/// how long that took.
async fn closed_by_the_daemon(mut stream: TcpStream, what: &str) -> Duration {
    let started = Instant::now();
    let mut buf = [0u8; 4096];
    let ended = tokio::time::timeout(PATIENCE, async {
        while let Ok(n) = stream.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "{what} was not closed within {PATIENCE:?}");
    let took = started.elapsed();
    eprintln!("{what}: closed by the daemon after {took:?}");
    took
}

/// Connections with no request open are closed: an HTTP/2 one that never opens a stream
/// (10 s, then GOAWAY and up to 5 s to go) and an HTTP/1.1 one kept alive after a
/// `/health` (10 s); a token holder's HTTP/2 connection is kept longer (60 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed() {
    let _one = ONE_FLOOD_AT_A_TIME.lock().await;
    let daemon = Daemon::start(Some("floods-token"));
    let mut h2 = TcpStream::connect(daemon.addr).await.unwrap();
    h2.write_all(H2_PREFACE).await.unwrap();
    let mut h1 = TcpStream::connect(daemon.addr).await.unwrap();
    h1.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    // A token holder's HTTP/2 connection, idle after one call.
    let mut authenticated = h2_sender(daemon.addr).await;
    let stat = || {
        post(
            &daemon,
            "/filesystem.Filesystem/Stat",
            "application/json",
            &[],
            whole(json!({ "path": "" }).to_string()),
        )
    };
    let response = authenticated.send_request(stat()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    body_bytes(response).await;
    let (h2_took, h1_took) = tokio::join!(
        closed_by_the_daemon(h2, "an HTTP/2 connection without a stream"),
        closed_by_the_daemon(h1, "an HTTP/1.1 connection idle after /health"),
    );
    assert!(h2_took >= Duration::from_secs(5) && h1_took >= Duration::from_secs(5));
    // The token holder's, idle as long, is still open and serves the next call.
    assert!(
        !authenticated.is_closed(),
        "the token holder's idle connection was closed"
    );
    let response = authenticated.send_request(stat()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_pollers_lock_nobody_out() {
    // With the token: the pollers have none. (A daemon without a token serves its own
    // user alone; another user's pollers are refused: the test below.)
    {
        let _one = ONE_FLOOD_AT_A_TIME.lock().await;
        let daemon = Daemon::start(Some("floods-token"));
        let stop = Arc::new(AtomicBool::new(false));
        let connected = Arc::new(AtomicUsize::new(0));
        let pollers = health_pollers(daemon.addr, FLOOD, stop.clone(), connected.clone());
        // Every poller has connected (the kernel completes a connection the daemon has
        // not accepted yet, so this holds whatever the daemon does with them).
        eventually("every poller connected", async || {
            connected.load(Ordering::Relaxed) >= FLOOD
        })
        .await;
        legitimate_call(&daemon, &format!("{FLOOD} clients polling /health")).await;
        stop_all(&stop, pollers).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slowloris_locks_nobody_out() {
    let _one = ONE_FLOOD_AT_A_TIME.lock().await;
    let daemon = Daemon::start(Some("floods-token"));
    let stop = Arc::new(AtomicBool::new(false));
    let connected = Arc::new(AtomicUsize::new(0));
    let slow = slowloris(daemon.addr, FLOOD, stop.clone(), connected.clone());
    eventually("every slow client connected", async || {
        connected.load(Ordering::Relaxed) >= FLOOD
    })
    .await;
    legitimate_call(&daemon, &format!("{FLOOD} slowloris clients")).await;
    stop_all(&stop, slow).await;
}

/// A request to `/files?path=...` with the daemon's token.
fn files_request(daemon: &Daemon, method: &str, path: &str, body: &'static str) -> Request<AnyBody> {
    let mut builder = Request::builder()
        .method(method)
        .uri(format!("http://{}/files?path={path}", daemon.addr))
        .header("content-type", "application/octet-stream");
    if let Some(token) = &daemon.token {
        builder = builder.header("x-access-token", token.as_str());
    }
    builder.body(whole(body)).unwrap()
}

/// An HTTP/2 connection to send many requests on at once.
async fn h2_sender(addr: SocketAddr) -> hyper::client::conn::http2::SendRequest<AnyBody> {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (sender, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(stream),
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    sender
}

/// Reads and writes of a FIFO are refused at once (400, envd's JSON error), so hundreds
/// of them hold no blocking thread: file calls and, on a daemon without a token, the
/// owner check of new connections (which runs on those threads) still go on. The
/// requests are streams of a few HTTP/2 connections: the threads are what is attacked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifo_reads_and_writes_are_refused_without_blocking() {
    for token in [Some("floods-token"), None] {
        let _one = ONE_FLOOD_AT_A_TIME.lock().await;
        let daemon = Daemon::start(token);
        // One FIFO read and one written: a read and a write of the same FIFO would open
        // each other's end and go through.
        let fifo = |name: &str| {
            let path = daemon.root().join(name);
            // libc's mkfifo: rustix has `mkfifoat` on Linux only, and this runs on macOS too.
            let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a NUL-terminated path that outlives the call.
            assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
            path_str(&path)
        };
        let (read_fifo, written_fifo) = (fifo("read-pipe"), fifo("written-pipe"));
        let mut senders = Vec::new();
        for _ in 0..4 {
            senders.push(h2_sender(daemon.addr).await);
        }
        let mut calls = Vec::new();
        for i in 0..FLOOD + FLOOD / 4 {
            let req = if i < FLOOD {
                files_request(&daemon, "GET", &read_fifo, "")
            } else {
                files_request(&daemon, "POST", &written_fifo, "into the pipe")
            };
            let mut sender = senders[i % senders.len()].clone();
            calls.push(tokio::spawn(async move {
                let response = sender.send_request(req).await.unwrap();
                let status = response.status();
                (status, body_bytes(response).await)
            }));
        }
        // The flood has landed: every call answered, or (before the calls were refused
        // without blocking) a while given for them to reach their threads and block.
        let landed = async {
            while !calls.iter().all(|call| call.is_finished()) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(5), landed).await;
        legitimate_call(&daemon, &format!("{FLOOD} reads and {} writes of a FIFO", FLOOD / 4)).await;
        // A file call as well: the blocking threads are free.
        std::fs::write(daemon.root().join("plain.txt"), b"plain").unwrap();
        let plain = path_str(&daemon.root().join("plain.txt"));
        let read = send(daemon.addr, Version::H1, files_request(&daemon, "GET", &plain, ""));
        let response = tokio::time::timeout(PATIENCE, read)
            .await
            .expect("a file read after the FIFO flood");
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(&body_bytes(response).await[..], b"plain");
        for call in calls {
            let (status, body) = tokio::time::timeout(PATIENCE, call)
                .await
                .expect("a FIFO read or write answered")
                .unwrap();
            assert_eq!(status, StatusCode::BAD_REQUEST);
            let error: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(error["code"], 400);
            assert!(error["message"].as_str().unwrap().contains("a FIFO"), "{error}");
        }
    }
}

/// Another user's flood, run by python3 as uid 65534: `n` connections that send
/// HTTP/2's preface and nothing more, each opened again `pause` seconds after the daemon
/// closes it (never if `pause` is negative), until its stdin closes. It prints `ready`
/// once all `n` were opened once.
const OTHER_USER_FLOOD: &str = r#"
import selectors, socket, sys, time
addr, port, n, pause = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
reopen = []
preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"
sel = selectors.DefaultSelector()
sel.register(sys.stdin, selectors.EVENT_READ, None)
def open_one():
    try:
        s = socket.create_connection((addr, port))
        s.sendall(preface)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, s)
    except OSError:
        pass
for _ in range(n):
    open_one()
print("ready", flush=True)
while True:
    now = time.monotonic()
    while reopen and reopen[0] <= now:
        reopen.pop(0)
        open_one()
    for key, _ in sel.select(timeout=0.05):
        if key.data is None:
            if not sys.stdin.readline():
                sys.exit(0)
            continue
        s = key.data
        try:
            data = s.recv(65536)
        except OSError:
            data = b""
        if not data:
            sel.unregister(s)
            s.close()
            if pause >= 0:
                reopen.append(time.monotonic() + pause)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_users_flood_locks_the_owner_out_of_nothing() {
    if unsafe { libc::geteuid() } != 0 || std::process::Command::new("setpriv").arg("--help").output().is_err() {
        eprintln!("skipped: needs root and setpriv to flood as another user");
        return;
    }
    for token in [Some("floods-token"), None] {
        let _one = ONE_FLOOD_AT_A_TIME.lock().await;
        let daemon = Daemon::start(token);
        // Debian's own python3: one under root's home (pyenv) is not another user's to run.
        let python = if std::path::Path::new("/usr/bin/python3").exists() {
            "/usr/bin/python3"
        } else {
            "python3"
        };
        let mut flood = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", python, "-c"])
            .arg(OTHER_USER_FLOOD)
            .args([
                daemon.addr.ip().to_string(),
                daemon.addr.port().to_string(),
                FLOOD.to_string(),
                // Refused or not, each connection is reopened at once: a sustained stream.
                // Without a token each costs the daemon one owner check (one sock_diag
                // lookup, src/platform/linux/tcp_diag.rs, on a thread of its own).
                "0".to_string(),
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3 as uid 65534");
        let mut out = flood.stdout.take().unwrap();
        let ready = tokio::task::spawn_blocking(move || {
            let mut ready = [0u8; 6];
            std::io::Read::read_exact(&mut out, &mut ready).map(|_| ready)
        });
        let ready = tokio::time::timeout(PATIENCE, ready)
            .await
            .expect("the flood under way in time")
            .unwrap();
        assert_eq!(&ready.expect("the flood's ready line"), b"ready\n");
        let what = if token.is_some() {
            "uid 65534's HTTP/2 connections without a stream (no token)"
        } else {
            "uid 65534's connections, refused"
        };
        legitimate_call_within(&daemon, &format!("{FLOOD} of {what}"), PATIENCE).await;
        // Its stdin closed, the flood ends; killed if it has not.
        drop(flood.stdin.take());
        let ended = tokio::task::spawn_blocking(move || {
            let deadline = Instant::now() + PATIENCE;
            while flood.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = flood.kill();
            let _ = flood.wait();
        });
        let _ = ended.await;
    }
}
