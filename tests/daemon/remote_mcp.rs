//! The daemon's own routes on its network face, as a client meets them: the built
//! daemon on a real TCP port (tests/remote/harness.rs). `/daemon`: an HTTP/1.1 Upgrade
//! to the unix socket's framed protocol (src/daemon/http/upgrade.rs), then real calls;
//! `/mcp` without an MCP server beside the daemon, and with a foreign `Origin`
//! (src/daemon/http/mcp_proxy.rs). The MCP server itself is driven from TypeScript
//! (__test__/remote/mcp-http.test.ts: it runs in the package's Node command).
#![cfg(unix)]

use crate::remote_harness as harness;

use harness::*;
use hyper::{Method, Request, StatusCode};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends the upgrade request; returns the answer's head and the connection.
async fn upgrade(daemon: &Daemon, token: Option<&str>) -> (String, TcpStream) {
    let mut stream = TcpStream::connect(daemon.addr).await.unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "GET /daemon HTTP/1.1\r\nHost: {}\r\nConnection: Upgrade\r\nUpgrade: native-shell-service/1\r\n{auth}\r\n",
        daemon.addr
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // Byte by byte up to the blank line: nothing after it is taken from the stream.
    let mut answer = Vec::new();
    while !answer.ends_with(b"\r\n\r\n") {
        let byte = stream.read_u8().await.unwrap();
        answer.push(byte);
    }
    (String::from_utf8(answer).unwrap(), stream)
}

async fn call(stream: &mut TcpStream, id: u64, method: &str, params: Value) -> Value {
    let body = json!({ "id": id, "method": method, "params": params }).to_string();
    let mut frame = vec![0u8];
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(body.as_bytes());
    stream.write_all(&frame).await.unwrap();
    loop {
        let mut head = [0u8; 5];
        stream.read_exact(&mut head).await.unwrap();
        assert_eq!(head[0], 0);
        let mut message = vec![0u8; u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize];
        stream.read_exact(&mut message).await.unwrap();
        let message: Value = serde_json::from_slice(&message).unwrap();
        // Events (none are asked for here) would be skipped.
        if message["id"] == json!(id) {
            return message;
        }
    }
}

#[tokio::test]
async fn the_upgrade_speaks_the_sockets_protocol_with_the_token() {
    let daemon = Daemon::start(Some("s3cret"));
    let (head, mut stream) = upgrade(&daemon, Some("s3cret")).await;
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    assert!(
        head.to_ascii_lowercase().contains("upgrade: native-shell-service/1"),
        "{head}"
    );
    let hello = call(
        &mut stream,
        1,
        "hello",
        json!({ "version": "test", "protocol": 1, "pid": 1 }),
    )
    .await;
    assert_eq!(hello["result"]["protocol"], json!(1), "{hello}");
    let root = daemon.root();
    let opened = call(&mut stream, 2, "open", json!({ "projectRoot": root.to_str().unwrap() })).await;
    assert!(opened["result"]["sessionId"].is_string(), "{opened}");
    let ran = call(
        &mut stream,
        3,
        "run",
        json!({ "command": "echo over-the-port", "options": { "mode": "pipes" } }),
    )
    .await;
    assert_eq!(ran["result"]["stdout"], json!("over-the-port\n"), "{ran}");
    assert_eq!(ran["result"]["exitCode"], json!(0), "{ran}");
    // The job is in this service's history, by the daemon's handle.
    let handle = ran["result"]["handle"].clone();
    let listed = call(&mut stream, 4, "getExecutionHistory", json!({})).await;
    assert!(
        listed["result"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["handle"] == handle),
        "{listed}"
    );
}

#[tokio::test]
async fn no_token_or_no_upgrade_is_refused_with_a_status() {
    let daemon = Daemon::start(Some("s3cret"));
    let (head, _) = upgrade(&daemon, None).await;
    assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    let (head, _) = upgrade(&daemon, Some("wrong")).await;
    assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    // Authenticated, but no Upgrade (or HTTP/2, which has none): 426 and a code.
    for version in [Version::H1, Version::H2] {
        let req = Request::builder()
            .method(Method::GET)
            .uri(format!("http://{}/daemon", daemon.addr))
            .header("authorization", "Bearer s3cret")
            .body(whole(""))
            .unwrap();
        let response = send(daemon.addr, version, req).await;
        assert_eq!(response.status(), StatusCode::UPGRADE_REQUIRED);
        let body: Value = serde_json::from_slice(&body_bytes(response).await).unwrap();
        assert_eq!(body["error"]["code"], json!("UPGRADE_REQUIRED"));
    }
}

#[tokio::test]
async fn mcp_without_its_server_is_503_and_a_foreign_origin_403() {
    let daemon = Daemon::start(Some("s3cret"));
    let ask = |origin: Option<&str>| {
        let mut req = Request::builder()
            .method(Method::POST)
            .uri(format!("http://{}/mcp", daemon.addr))
            .header("authorization", "Bearer s3cret")
            .header("content-type", "application/json");
        if let Some(origin) = origin {
            req = req.header("origin", origin);
        }
        req.body(whole(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)).unwrap()
    };
    let response = send(daemon.addr, Version::H1, ask(None)).await;
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = serde_json::from_slice(&body_bytes(response).await).unwrap();
    assert_eq!(body["error"]["code"], json!("MCP_UNAVAILABLE"));
    // The Origin is checked first, whatever serves behind.
    let response = send(daemon.addr, Version::H2, ask(Some("http://attacker.example"))).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let body: Value = serde_json::from_slice(&body_bytes(response).await).unwrap();
    assert_eq!(body["error"]["code"], json!("ORIGIN_REFUSED"));
}
