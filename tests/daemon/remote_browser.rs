//! What a web page can make a browser send, sent by hand on raw sockets: DNS rebinding's
//! foreign `Host`, foreign `Origin`s, preflights, and the "simple" requests a page sends
//! cross-site without one (src/daemon/http/browser.rs). A real browser trying the same
//! is __test__/remote/browser-doors.test.ts.
#![cfg(unix)]

use crate::remote_harness as harness;

use std::net::SocketAddr;

use harness::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One HTTP/1.1 request written as given (plus `Connection: close`), and the status,
/// the head and the body of its answer.
async fn raw(addr: SocketAddr, head: &str, body: &[u8]) -> (u16, String, String) {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("{head}\r\nconnection: close\r\ncontent-length: {}\r\n\r\n", body.len());
    tcp.write_all(request.as_bytes()).await.unwrap();
    tcp.write_all(body).await.unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(PATIENCE, tcp.read_to_end(&mut reply))
        .await
        .expect("the answer in time")
        .unwrap();
    let reply = String::from_utf8_lossy(&reply).into_owned();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {reply:?}"));
    (status, head.to_ascii_lowercase(), body.to_owned())
}

fn code(body: &str) -> String {
    // A chunked body: the JSON sits between the chunk sizes.
    let start = body.find('{').unwrap_or(0);
    let end = body.rfind('}').map_or(body.len(), |e| e + 1);
    let value: serde_json::Value = serde_json::from_str(&body[start..end]).unwrap_or_default();
    value["error"]["code"].as_str().unwrap_or("").to_owned()
}

const START: &str = r#"{"process":{"cmd":"/bin/sh","args":["-c","touch ran"]}}"#;

fn envelope_of(json: &str) -> Vec<u8> {
    envelope(0, json.as_bytes()).to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dns_rebinding_is_refused_by_host_without_a_token() {
    let daemon = Daemon::start_with(None, &["--allowed-host", "devbox"]);
    let root = daemon.root();
    std::fs::write(root.join("secret"), "s3cret").unwrap();
    let secret = root.join("secret").display().to_string();
    let addr = daemon.addr;
    let port = addr.port();

    // The rebound page's requests: its own name as Host, with (POST) or without (GET)
    // its own origin.
    let (status, _, body) = raw(
        addr,
        &format!("GET /files?path={secret} HTTP/1.1\r\nhost: evil.example:{port}"),
        b"",
    )
    .await;
    assert_eq!((status, code(&body).as_str()), (403, "HOST_REFUSED"), "{body}");
    assert!(!body.contains("s3cret"));
    let (status, _, body) = raw(
        addr,
        &format!("POST /process.Process/Start HTTP/1.1\r\nhost: evil.example:{port}\r\norigin: http://evil.example:{port}\r\ncontent-type: application/connect+json"),
        &envelope_of(START),
    )
    .await;
    assert_eq!((status, code(&body).as_str()), (403, "HOST_REFUSED"), "{body}");
    // Even /health: a rebound page learns nothing, not even that a daemon is here.
    let (status, _, _) = raw(addr, "GET /health HTTP/1.1\r\nhost: evil.example", b"").await;
    assert_eq!(status, 403);
    // Names that look like ours but may go to DNS.
    for host in ["app.localhost", "localhost.", "localhost.evil.example"] {
        let (status, _, _) = raw(addr, &format!("GET /health HTTP/1.1\r\nhost: {host}:{port}"), b"").await;
        assert_eq!(status, 403, "{host}");
    }
    // An absolute-form target is the Host too.
    let (status, _, _) = raw(
        addr,
        &format!("GET http://evil.example:{port}/health HTTP/1.1\r\nhost: 127.0.0.1:{port}"),
        b"",
    )
    .await;
    assert_eq!(status, 403);

    // What a program on this machine uses: localhost, IP literals, --allowed-host.
    for host in [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        "[::1]".to_owned(),
        format!("DevBox:{port}"),
    ] {
        let (status, _, body) = raw(addr, &format!("GET /files?path={secret} HTTP/1.1\r\nhost: {host}"), b"").await;
        assert_eq!((status, body.contains("s3cret")), (200, true), "{host}");
    }
    assert!(!root.join("ran").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_any_host_reaches_health_and_the_token_guards_the_rest() {
    let daemon = Daemon::start(Some("doors-token"));
    let addr = daemon.addr;
    // A kubelet's probe names the pod's IP; an ingress, its own name.
    let (status, _, _) = raw(addr, "GET /health HTTP/1.1\r\nhost: 10.1.2.3:49983", b"").await;
    assert_eq!(status, 200);
    let (status, _, _) = raw(addr, "GET /health HTTP/1.1\r\nhost: sandbox.example.com", b"").await;
    assert_eq!(status, 200);
    let (status, _, _) = raw(addr, "GET /files?path=x HTTP/1.1\r\nhost: evil.example", b"").await;
    assert_eq!(status, 401);
    let (status, _, _) = raw(
        addr,
        "POST /files?path=t.txt HTTP/1.1\r\nhost: sandbox.example.com\r\nx-access-token: doors-token\r\ncontent-type: text/plain",
        b"x",
    )
    .await;
    // The token is the proof: text/plain reaches the route (which takes no text/plain).
    assert_eq!(status, 400);
    // A foreign page is refused even with the token.
    let (status, _, body) = raw(
        addr,
        "GET /health HTTP/1.1\r\nhost: sandbox.example.com\r\norigin: https://evil.example",
        b"",
    )
    .await;
    assert_eq!((status, code(&body).as_str()), (403, "ORIGIN_REFUSED"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_origins_are_refused_on_every_route() {
    let daemon = Daemon::start_with(None, &["--allowed-origin", "https://ide.example"]);
    let root = daemon.root();
    let addr = daemon.addr;
    let host = format!("127.0.0.1:{}", addr.port());
    for (head, body) in [
        (format!("GET /health HTTP/1.1\r\nhost: {host}"), vec![]),
        (format!("GET /files?path=x HTTP/1.1\r\nhost: {host}"), vec![]),
        (
            format!("POST /files?path=o.txt HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/octet-stream"),
            b"o".to_vec(),
        ),
        (
            format!("POST /process.Process/Start HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/connect+json"),
            envelope_of(START),
        ),
        (
            format!("POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json"),
            b"{}".to_vec(),
        ),
        (
            format!("GET /daemon HTTP/1.1\r\nhost: {host}\r\nupgrade: native-shell-service/1\r\nconnection: upgrade"),
            vec![],
        ),
    ] {
        for origin in ["https://evil.example", "null", "http://localhost.evil.example"] {
            let (status, _, answer) = raw(addr, &format!("{head}\r\norigin: {origin}"), &body).await;
            assert_eq!(
                (status, code(&answer).as_str()),
                (403, "ORIGIN_REFUSED"),
                "{head} from {origin}: {answer}"
            );
        }
    }
    assert!(!root.join("o.txt").exists() && !root.join("ran").exists());
    // --allowed-origin and loopback pages pass this check (then meet the others).
    let (status, _, _) = raw(
        addr,
        &format!("GET /health HTTP/1.1\r\nhost: {host}\r\norigin: https://ide.example"),
        b"",
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_token_what_a_page_sends_unasked_changes_nothing() {
    let daemon = Daemon::start(None);
    let root = daemon.root();
    let addr = daemon.addr;
    let port = addr.port();
    // A page of another local server (a loopback origin passes the Origin check).
    let page = format!(
        "host: 127.0.0.1:{port}\r\norigin: http://localhost:{}",
        port.wrapping_add(1)
    );
    let multipart =
        b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\npwned\r\n--B--\r\n".to_vec();
    let attempts: Vec<(String, Vec<u8>)> = vec![
        // A no-cors fetch of a Blob without a type: no Content-Type at all.
        (format!("POST /files?path=none.txt HTTP/1.1\r\n{page}"), b"pwned".to_vec()),
        (
            format!("POST /files?path=plain.txt HTTP/1.1\r\n{page}\r\ncontent-type: text/plain;charset=UTF-8"),
            b"pwned".to_vec(),
        ),
        (
            format!("POST /files?path=form.txt HTTP/1.1\r\n{page}\r\ncontent-type: multipart/form-data; boundary=B"),
            multipart.clone(),
        ),
        (
            format!("POST /files?path=url.txt HTTP/1.1\r\n{page}\r\ncontent-type: application/x-www-form-urlencoded"),
            b"file=pwned".to_vec(),
        ),
        (
            format!("POST /process.Process/Start HTTP/1.1\r\n{page}\r\ncontent-type: text/plain"),
            envelope_of(START),
        ),
        (
            format!("POST /filesystem.Filesystem/MakeDir HTTP/1.1\r\n{page}\r\ncontent-type: text/plain"),
            br#"{"path":"made"}"#.to_vec(),
        ),
        (
            format!("GET /filesystem.Filesystem/MakeDir?connect=v1&encoding=json&message=%7B%22path%22%3A%22made%22%7D HTTP/1.1\r\n{page}"),
            vec![],
        ),
        (
            format!("POST /mcp HTTP/1.1\r\n{page}\r\ncontent-type: text/plain"),
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_vec(),
        ),
        // A WebSocket is the only Upgrade a page can ask for.
        (
            format!("GET /daemon HTTP/1.1\r\n{page}\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ=="),
            vec![],
        ),
    ];
    for (head, body) in &attempts {
        let (status, answer_head, answer) = raw(addr, head, body).await;
        assert_eq!(
            (status, code(&answer).as_str()),
            (403, "SIMPLE_REQUEST_REFUSED"),
            "{head}: {answer}"
        );
        assert!(!answer_head.contains("access-control-"), "{answer_head}");
    }
    // Preflights are refused, so nothing that needs one is ever sent.
    let (status, head, body) = raw(
        addr,
        &format!("OPTIONS /files?path=p.txt HTTP/1.1\r\n{page}\r\naccess-control-request-method: POST\r\naccess-control-request-headers: e2b-sandbox-id"),
        b"",
    )
    .await;
    assert_eq!((status, code(&body).as_str()), (403, "PREFLIGHT_REFUSED"));
    assert!(!head.contains("access-control-"), "{head}");
    for name in ["none.txt", "plain.txt", "form.txt", "url.txt", "made", "ran"] {
        assert!(!root.join(name).exists(), "{name} was made");
    }

    // What the SDKs send passes: their multipart upload carries E2b-Sandbox-Id, their
    // raw upload application/octet-stream, Connect calls their content types.
    let host = format!("host: localhost:{port}");
    let (status, _, body) = raw(
        addr,
        &format!("POST /files?path=sdk.txt HTTP/1.1\r\n{host}\r\ncontent-type: multipart/form-data; boundary=B\r\ne2b-sandbox-id: debug"),
        &multipart,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = raw(
        addr,
        &format!("POST /files?path=raw.txt HTTP/1.1\r\n{host}\r\ncontent-type: application/octet-stream"),
        b"raw",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = raw(
        addr,
        &format!("POST /filesystem.Filesystem/MakeDir HTTP/1.1\r\n{host}\r\ncontent-type: application/json"),
        br#"{"path":"made"}"#,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(root.join("sdk.txt").exists() && root.join("raw.txt").exists() && root.join("made").is_dir());
}
