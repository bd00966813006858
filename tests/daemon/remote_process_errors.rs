//! The network face's refusals: every bad request gets its Connect error code, never a
//! panic, a hang or a dropped connection (tests/remote/harness.rs).
#![cfg(unix)]

use crate::remote_harness as harness;

use harness::*;
use hyper::StatusCode;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_their_codes() {
    let daemon = Daemon::start(None);
    let call = |path: &str, content_type: &str, body: AnyBody| post(&daemon, path, content_type, &[], body);

    // Bad JSON, bad protobuf, a wrong type: invalid_argument, 400.
    for (content_type, body) in [
        ("application/json", whole("{\"process\":")),
        ("application/json", whole("{\"process\":{\"pid\":\"x\"}}")),
        ("application/proto", whole(vec![0x0a, 0xff, 0xff])),
    ] {
        let response = send(
            daemon.addr,
            Version::H1,
            call("/process.Process/SendInput", content_type, body),
        )
        .await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        let error: serde_json::Value = serde_json::from_slice(&body_bytes(response).await).unwrap();
        assert_eq!(error["code"], "invalid_argument", "{error}");
    }
    // An unknown pid: not_found, 404; a signal envd does not allow: invalid_argument.
    let (status, error) = unary_json(
        &daemon,
        "SendInput",
        json!({"process": {"pid": 999999999u32}, "input": {"stdin": "eA=="}}),
    )
    .await;
    assert_eq!(
        (status, error["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found")),
        "{error}"
    );
    let (status, error) = unary_json(
        &daemon,
        "SendSignal",
        json!({"process": {"pid": 1}, "signal": "SIGNAL_UNSPECIFIED"}),
    )
    .await;
    assert_eq!(
        (status, error["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_argument")),
        "{error}"
    );
    let (status, error) = unary_json(&daemon, "SendSignal", json!({"process": {"pid": 1}, "signal": 1})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    // No selector at all.
    let (status, error) = unary_json(&daemon, "CloseStdin", json!({})).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_argument")),
        "{error}"
    );
    // Unknown method, wrong content type, wrong HTTP method.
    let (status, error) = unary_json(&daemon, "Explode", json!({})).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    // A content type Connect does not speak: 415 (with Connect's header, as a Connect
    // client sends; bare, text/plain is what a web page posts unasked: src/daemon/http/browser.rs).
    let response = send(
        daemon.addr,
        Version::H1,
        post(
            &daemon,
            "/process.Process/List",
            "text/plain",
            &[("connect-protocol-version", "1")],
            whole("{}"),
        ),
    )
    .await;
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let response = send(
        daemon.addr,
        Version::H1,
        call("/process.Process/Start", "application/json", whole("{}")),
    )
    .await;
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);

    // Streaming: a process that cannot start, an unknown pid, a bad envelope: the
    // stream's end message carries the error.
    for (method, body, code) in [
        (
            "Start",
            envelope(0, br#"{"process":{"cmd":"/nonexistent/program"}}"#),
            "invalid_argument",
        ),
        ("Start", envelope(0, br#"{"process":{"cmd":""}}"#), "invalid_argument"),
        ("Connect", envelope(0, br#"{"process":{"pid":999999999}}"#), "not_found"),
        ("Connect", envelope(0, b"not json"), "invalid_argument"),
        ("Start", envelope(0x80, b"{}"), "invalid_argument"),
        (
            "Start",
            bytes::Bytes::from_static(&[0, 0, 0, 0, 9, b'{']),
            "invalid_argument",
        ),
    ] {
        let req = call(
            &format!("/process.Process/{method}"),
            "application/connect+json",
            whole(body),
        );
        let mut stream = Envelopes::new(send(daemon.addr, Version::H2, req).await);
        let (flags, payload) = stream.next().await.unwrap();
        assert_eq!(flags, 0x02, "{method}: {}", String::from_utf8_lossy(&payload));
        let end: serde_json::Value = serde_json::from_slice(&payload).unwrap();
        assert_eq!(end["error"]["code"], code, "{method}: {end}");
    }
}

/// A message over the limit is refused from its declared size, without the daemon
/// reading (or the client sending) the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_messages_are_refused_before_they_are_read() {
    let daemon = Daemon::start(None);
    // A unary call that declares 1 GiB and sends 10 bytes.
    let mut tcp = tokio::net::TcpStream::connect(daemon.addr).await.unwrap();
    tcp.write_all(b"POST /process.Process/List HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 1073741824\r\n\r\n{}        ")
        .await
        .unwrap();
    let mut reply = vec![0u8; 4096];
    let n = tokio::time::timeout(PATIENCE, tcp.read(&mut reply))
        .await
        .unwrap()
        .unwrap();
    let reply = String::from_utf8_lossy(&reply[..n]);
    assert!(reply.starts_with("HTTP/1.1 429"), "{reply}");
    assert!(reply.contains("resource_exhausted"), "{reply}");

    // A stream whose first envelope declares 4 GiB: the end message says so at once.
    let (tx, body) = feed();
    tx.send(bytes::Bytes::from_static(&[0, 0xff, 0xff, 0xff, 0xff, b'{']))
        .await
        .unwrap();
    let req = post(&daemon, "/process.Process/Start", "application/connect+json", &[], body);
    let mut stream = Envelopes::new(send(daemon.addr, Version::H2, req).await);
    let (flags, payload) = stream.next().await.unwrap();
    assert_eq!(flags, 0x02);
    let end: serde_json::Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(end["error"]["code"], "resource_exhausted", "{end}");
    drop(tx);
}

/// StreamInput over HTTP/2: a start naming the process, input in order, the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_input_over_h2() {
    let daemon = Daemon::start(None);
    let mut events = stream_json(
        &daemon,
        Version::H1,
        "Start",
        json!({"process": {"cmd": "/bin/cat"}, "tag": "cat"}),
        &[],
    )
    .await;
    let pid = events.next().await.unwrap()["start"]["pid"].as_u64().unwrap();
    let (tx, body) = feed();
    let req = post(
        &daemon,
        "/process.Process/StreamInput",
        "application/connect+json",
        &[],
        body,
    );
    let reply = tokio::spawn(async move { Envelopes::new(send(daemon_addr(&req), Version::H2, req).await) });
    let message = |m: serde_json::Value| envelope(0, m.to_string().as_bytes());
    tx.send(message(json!({"start": {"process": {"pid": pid}}})))
        .await
        .unwrap();
    for (i, piece) in ["alpha\n", "beta\n", "gamma\n"].iter().enumerate() {
        use base64::Engine;
        let data = base64::engine::general_purpose::STANDARD.encode(piece);
        tx.send(message(json!({"data": {"input": {"stdin": data}}})))
            .await
            .unwrap();
        if i == 1 {
            tx.send(message(json!({"keepalive": {}}))).await.unwrap();
        }
    }
    let mut seen = Collected::default();
    events.until_text(&mut seen, "gamma").await;
    assert_eq!(String::from_utf8_lossy(&seen.stdout), "alpha\nbeta\ngamma\n");
    tx.send(envelope(0x02, b"{}")).await.unwrap();
    drop(tx);
    let mut reply = reply.await.unwrap();
    assert_eq!(reply.next().await.unwrap().0, 0);
    assert_eq!(reply.next().await.unwrap(), (0x02, bytes::Bytes::from_static(b"{}")));
    let (status, _) = unary_json(&daemon, "CloseStdin", json!({"process": {"tag": "cat"}})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(events.until_end().await.end["exited"], true, "a clean exit");
}

fn daemon_addr(req: &hyper::Request<AnyBody>) -> std::net::SocketAddr {
    req.uri().authority().unwrap().as_str().parse().unwrap()
}

/// A connection that sends nothing is closed after the header timeout; one that sends
/// garbage gets 400 and is closed; the daemon serves on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_garbage_connections_are_closed() {
    let daemon = Daemon::start(None);
    let mut silent = tokio::net::TcpStream::connect(daemon.addr).await.unwrap();
    let mut garbage = tokio::net::TcpStream::connect(daemon.addr).await.unwrap();
    garbage
        .write_all(b"\x16\x03\x01 not http at all\r\n\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(PATIENCE, garbage.read_to_end(&mut buf))
        .await
        .expect("garbage closed");
    let mut one = [0u8; 1];
    let n = tokio::time::timeout(PATIENCE, silent.read(&mut one))
        .await
        .expect("silent closed");
    assert_eq!(n.unwrap_or(0), 0);
    let (status, _) = unary_json(&daemon, "List", json!({})).await;
    assert_eq!(status, StatusCode::OK);
}
