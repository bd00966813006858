//! envd's file API on the network face over real TCP (tests/remote/harness.rs):
//! filesystem.Filesystem in JSON (HTTP/1.1) and binary protobuf (h2c), GET/POST /files
//! with multipart and streamed raw bodies, and every refusal with its code.
#![cfg(unix)]

use crate::remote_harness as harness;

use harness::*;
use hyper::{Request, StatusCode};
use serde_json::{json, Value};

/// A GET of /files?path=... (percent-encoded here).
async fn get_file(daemon: &Daemon, path: &str) -> (StatusCode, bytes::Bytes) {
    let encoded: String = path
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"/._-".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    let mut builder = Request::get(format!("http://{}/files?path={encoded}&username=user", daemon.addr));
    if let Some(token) = &daemon.token {
        builder = builder.header("x-access-token", token.as_str());
    }
    let response = send(daemon.addr, Version::H1, builder.body(whole("")).unwrap()).await;
    let status = response.status();
    (status, body_bytes(response).await)
}

fn multipart(parts: &[(&str, &[u8])]) -> (String, Vec<u8>) {
    let boundary = "----nss-test-boundary";
    let mut body = Vec::new();
    for (filename, data) in parts {
        body.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes());
        body.extend_from_slice(data);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_calls_in_json_and_protobuf() {
    let daemon = Daemon::start(None);
    let root = daemon.root();

    let (status, made) = fs_json(&daemon, "MakeDir", json!({ "path": "a/b" })).await;
    assert_eq!(status, StatusCode::OK, "{made}");
    assert_eq!(made["entry"]["type"], "FILE_TYPE_DIRECTORY");
    assert_eq!(made["entry"]["path"], root.join("a/b").display().to_string());
    let (status, again) = fs_json(&daemon, "MakeDir", json!({ "path": "a/b" })).await;
    assert_eq!(
        (status, again["code"].as_str()),
        (StatusCode::CONFLICT, Some("already_exists"))
    );

    std::fs::write(root.join("a/f.txt"), b"12345").unwrap();
    let (status, stat) = fs_json(&daemon, "Stat", json!({ "path": root.join("a/f.txt") })).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (stat["entry"]["name"].as_str(), stat["entry"]["size"].as_str()),
        (Some("f.txt"), Some("5"))
    );
    let (status, missing) = fs_json(&daemon, "Stat", json!({ "path": "none" })).await;
    assert_eq!(
        (status, missing["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );

    let (_, listed) = fs_json(&daemon, "ListDir", json!({ "path": "a", "depth": 2 })).await;
    let names: Vec<&str> = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["b", "f.txt"]);

    let (status, moved) = fs_json(
        &daemon,
        "Move",
        json!({ "source": "a/f.txt", "destination": "c/g.txt" }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!(std::fs::read(root.join("c/g.txt")).unwrap(), b"12345");
    let (status, _) = fs_json(&daemon, "Remove", json!({ "path": "a" })).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!root.join("a").exists());

    // Binary protobuf over h2c: ListDir { path: "c" (field 1), depth: 1 (field 2) }.
    let req = post(
        &daemon,
        "/filesystem.Filesystem/ListDir",
        "application/proto",
        &[],
        whole(vec![0x0a, 1, b'c', 0x10, 1]),
    );
    let response = send(daemon.addr, Version::H2, req).await;
    assert_eq!(response.status(), StatusCode::OK);
    let body = body_bytes(response).await;
    assert!(body.windows(5).any(|w| w == b"g.txt"), "{body:?}");
}

/// As envd answers: Remove of nothing succeeds (os.RemoveAll); a symlink is described
/// with its target's type and mode and the resolved absolute path, in Stat and ListDir;
/// permission strings are Go's (`Lrwxrwxrwx`, `dtrwxrwxrwx`, `urwxr-xr-x`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symlinks_modes_and_removes_as_envd_gives_them() {
    use std::os::unix::fs::PermissionsExt;
    let daemon = Daemon::start(None);
    let root = daemon.root();
    let (status, body) = fs_json(&daemon, "Remove", json!({ "path": "never/there" })).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    std::fs::create_dir(root.join("d")).unwrap();
    std::fs::write(root.join("d/f.txt"), b"abc").unwrap();
    std::fs::set_permissions(root.join("d/f.txt"), std::fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink("d/f.txt", root.join("to-file")).unwrap();
    std::os::unix::fs::symlink("d", root.join("to-dir")).unwrap();
    std::os::unix::fs::symlink("nowhere", root.join("dangling")).unwrap();
    let real = std::fs::canonicalize(&root).unwrap();

    let (_, stat) = fs_json(&daemon, "Stat", json!({ "path": "to-file" })).await;
    let entry = &stat["entry"];
    assert_eq!(entry["type"], "FILE_TYPE_FILE", "{stat}");
    assert_eq!(entry["mode"], 0o640, "{stat}");
    assert_eq!(entry["permissions"], "Lrwxrwxrwx", "{stat}");
    assert_eq!(
        entry["symlinkTarget"],
        real.join("d/f.txt").display().to_string(),
        "{stat}"
    );
    assert_eq!(entry["path"], root.join("to-file").display().to_string(), "{stat}");
    assert_eq!(entry["name"], "to-file", "{stat}");

    let (_, stat) = fs_json(&daemon, "Stat", json!({ "path": "to-dir" })).await;
    assert_eq!(stat["entry"]["type"], "FILE_TYPE_DIRECTORY", "{stat}");
    let (_, stat) = fs_json(&daemon, "Stat", json!({ "path": "dangling" })).await;
    assert_eq!(stat["entry"]["type"], Value::Null, "unspecified, the default: {stat}");
    assert_eq!(
        stat["entry"]["symlinkTarget"],
        root.join("dangling").display().to_string()
    );

    let (_, listed) = fs_json(&daemon, "ListDir", json!({ "path": "" })).await;
    let by_name = |name: &str| {
        listed["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} not listed: {listed}"))
    };
    assert_eq!(by_name("to-dir")["type"], "FILE_TYPE_DIRECTORY");
    assert_eq!(
        by_name("to-file")["symlinkTarget"],
        real.join("d/f.txt").display().to_string()
    );
    assert_eq!(by_name("d")["permissions"], "drwxr-xr-x");
    // Through a symlinked directory: paths under the path as asked.
    let (_, listed) = fs_json(&daemon, "ListDir", json!({ "path": "to-dir" })).await;
    assert_eq!(
        listed["entries"][0]["path"],
        root.join("to-dir/f.txt").display().to_string()
    );
    assert_eq!(listed["entries"][0]["permissions"], "-rw-r-----");

    std::fs::create_dir(root.join("sticky")).unwrap();
    std::fs::set_permissions(root.join("sticky"), std::fs::Permissions::from_mode(0o1777)).unwrap();
    std::fs::write(root.join("suid"), b"").unwrap();
    std::fs::set_permissions(root.join("suid"), std::fs::Permissions::from_mode(0o4755)).unwrap();
    for (path, permissions, mode) in [("sticky", "dtrwxrwxrwx", 0o777), ("suid", "urwxr-xr-x", 0o755)] {
        let (_, stat) = fs_json(&daemon, "Stat", json!({ "path": path })).await;
        assert_eq!(
            (stat["entry"]["permissions"].clone(), stat["entry"]["mode"].clone()),
            (json!(permissions), json!(mode)),
            "{stat}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_refusals() {
    let daemon = Daemon::start(None);
    let call = |method: &str, content_type: &str, body: AnyBody| {
        post(
            &daemon,
            &format!("/filesystem.Filesystem/{method}"),
            content_type,
            &[],
            body,
        )
    };
    for (method, content_type, body, status, code) in [
        (
            "Stat",
            "application/json",
            whole("{\"path\":"),
            StatusCode::BAD_REQUEST,
            "invalid_argument",
        ),
        (
            "Stat",
            "application/proto",
            whole(vec![0x0a, 0xff, 0xff]),
            StatusCode::BAD_REQUEST,
            "invalid_argument",
        ),
        (
            "Stat",
            "application/json",
            whole("{\"path\":\"a\\u0000b\"}"),
            StatusCode::BAD_REQUEST,
            "invalid_argument",
        ),
        (
            "ListDir",
            "application/json",
            whole("{\"path\":\"/dev/null\"}"),
            StatusCode::BAD_REQUEST,
            "invalid_argument",
        ),
        (
            "Nope",
            "application/json",
            whole("{}"),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            "CreateWatcher",
            "application/json",
            whole("{\"path\":\"/none/such\"}"),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            "GetWatcherEvents",
            "application/json",
            whole("{\"watcherId\":\"w0\"}"),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
    ] {
        let response = send(daemon.addr, Version::H1, call(method, content_type, body)).await;
        assert_eq!(response.status(), status, "{method}");
        let value: Value = serde_json::from_slice(&body_bytes(response).await).unwrap();
        assert_eq!(value["code"], code, "{method}: {value}");
    }
    // WatchDir is a stream: a refusal is its one (end) message.
    let req = call(
        "WatchDir",
        "application/connect+json",
        whole(envelope(0, b"{\"path\":\"/dev/null\"}")),
    );
    let mut envelopes = Envelopes::new(send(daemon.addr, Version::H1, req).await);
    let (flags, payload) = envelopes.next().await.unwrap();
    assert_eq!(flags, 0x02);
    let end: Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(end["error"]["code"], "invalid_argument", "{end}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_upload_and_download() {
    let daemon = Daemon::start(Some("files-token"));
    let root = daemon.root();

    // Multipart, two files, one into a directory that does not exist yet.
    let (content_type, body) = multipart(&[
        ("x/one.bin", &[0, 1, 2, 255]),
        (&root.join("two.txt").display().to_string(), b"two"),
    ]);
    let response = send(
        daemon.addr,
        Version::H1,
        post(&daemon, "/files", &content_type, &[], whole(body)),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let written: Value = serde_json::from_slice(&body_bytes(response).await).unwrap();
    assert_eq!(
        written,
        json!([
            { "name": "one.bin", "type": "file", "path": root.join("x/one.bin").display().to_string() },
            { "name": "two.txt", "type": "file", "path": root.join("two.txt").display().to_string() },
        ])
    );
    let (status, got) = get_file(&daemon, "x/one.bin").await;
    assert_eq!((status, got.as_ref()), (StatusCode::OK, &[0u8, 1, 2, 255][..]));

    // A raw body streamed in pieces to a path with a space, over h2c.
    let (tx, body) = feed();
    let req = post(
        &daemon,
        "/files?path=big%20file.dat",
        "application/octet-stream",
        &[],
        body,
    );
    let sending = tokio::spawn(async move {
        for i in 0..64u8 {
            tx.send(bytes::Bytes::from(vec![i; 16 * 1024])).await.unwrap();
        }
    });
    let response = send(daemon.addr, Version::H2, req).await;
    sending.await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let (status, got) = get_file(&daemon, "big file.dat").await;
    assert_eq!((status, got.len()), (StatusCode::OK, 64 * 16 * 1024));
    assert!(got
        .chunks(16 * 1024)
        .enumerate()
        .all(|(i, c)| c.iter().all(|&b| b == i as u8)));

    // Empty files both ways.
    std::fs::write(root.join("empty"), b"").unwrap();
    assert_eq!(get_file(&daemon, "empty").await, (StatusCode::OK, bytes::Bytes::new()));

    // Refusals, each with envd's JSON error.
    let (status, body) = get_file(&daemon, "x").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a directory");
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap()["code"], 400);
    assert_eq!(get_file(&daemon, "none").await.0, StatusCode::NOT_FOUND);
    let refused = [
        (
            "multipart/form-data; boundary=B",
            vec![],
            "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"t\"\r\n\r\nno end",
        ),
        ("application/octet-stream", vec![("content-encoding", "gzip")], "x"),
        ("text/plain", vec![], "x"),
        ("application/octet-stream", vec![], "no path in the query"),
    ];
    for (content_type, headers, body) in refused {
        let path = if body == "no path in the query" {
            "/files"
        } else {
            "/files?path=r.txt"
        };
        let response = send(
            daemon.addr,
            Version::H1,
            post(&daemon, path, content_type, &headers, whole(body)),
        )
        .await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{content_type} {headers:?}");
    }
    assert!(!root.join("r.txt").exists());

    // Without the token: 401, body unread or not, and nothing written.
    let mut anonymous = Request::post(format!("http://{}/files?path=anon.txt", daemon.addr))
        .header("content-type", "application/octet-stream")
        .body(whole(vec![b'a'; 200 * 1024]))
        .unwrap();
    anonymous.headers_mut().remove("x-access-token");
    let response = send(daemon.addr, Version::H1, anonymous).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(!root.join("anon.txt").exists());
}

fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

/// `Content-Encoding: gzip` uploads, as the SDKs' `files.write(..., { gzip: true })`
/// send them: a raw body inflated as it streams (h2c, in pieces), a multipart form
/// inflated whole; a body that is not gzip, another coding and a zip bomb (a form
/// inflating past the 64 MiB a form may have) are refused with 400 and leave nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gzip_uploads_are_inflated_within_bounds() {
    let daemon = Daemon::start(None);
    let root = daemon.root();
    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 256) as u8).collect();
    let compressed = gzip(&data);

    let (tx, body) = feed();
    let req = post(
        &daemon,
        "/files?path=g%2Fraw.bin",
        "application/octet-stream",
        &[("content-encoding", "gzip")],
        body,
    );
    let pieces: Vec<bytes::Bytes> = compressed.chunks(5000).map(bytes::Bytes::copy_from_slice).collect();
    let sending = tokio::spawn(async move {
        for piece in pieces {
            tx.send(piece).await.unwrap();
        }
    });
    let response = send(daemon.addr, Version::H2, req).await;
    sending.await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(std::fs::read(root.join("g/raw.bin")).unwrap(), data);

    let (content_type, form) = multipart(&[("g/form.bin", &data[..1000]), ("g/two.bin", b"two")]);
    let response = send(
        daemon.addr,
        Version::H1,
        post(
            &daemon,
            "/files",
            &content_type,
            // What both E2B SDKs send with a multipart upload: a tokenless daemon takes a
            // multipart body only with a header no web page can add (src/daemon/http/browser.rs).
            &[("content-encoding", "GZIP"), ("e2b-sandbox-id", "sdk")],
            whole(gzip(&form)),
        ),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(std::fs::read(root.join("g/form.bin")).unwrap(), &data[..1000]);
    assert_eq!(std::fs::read(root.join("g/two.bin")).unwrap(), b"two");

    let zeros = vec![0u8; 65 << 20];
    let (content_type, bomb_form) = multipart(&[("g/bomb.bin", &zeros)]);
    let bomb = gzip(&bomb_form);
    assert!(bomb.len() < 1 << 20, "{}", bomb.len());
    for (path, content_type, encoding, body, what) in [
        (
            "/files?path=g/bad.bin",
            "application/octet-stream",
            "gzip",
            b"not gzip".to_vec(),
            "not gzip",
        ),
        (
            "/files?path=g/bad.bin",
            "application/octet-stream",
            "gzip",
            compressed[..compressed.len() / 2].to_vec(),
            "cut short",
        ),
        (
            "/files?path=g/bad.bin",
            "application/octet-stream",
            "br",
            b"x".to_vec(),
            "another coding",
        ),
        ("/files", content_type.as_str(), "gzip", bomb, "a zip bomb"),
    ] {
        let response = send(
            daemon.addr,
            Version::H1,
            post(
                &daemon,
                path,
                content_type,
                &[("content-encoding", encoding), ("e2b-sandbox-id", "sdk")],
                whole(body),
            ),
        )
        .await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{what}");
        let error: Value = serde_json::from_slice(&body_bytes(response).await).unwrap();
        assert_eq!(error["code"], 400, "{what}: {error}");
    }
    assert!(!root.join("g/bad.bin").exists());
    assert!(!root.join("g/bomb.bin").exists());
}

/// Uploads' `X-Metadata-*` headers kept on the files (extended attributes) and given
/// back by the upload's answer and by Stat and ListDir; a later upload replaces the
/// whole set; metadata that is not printable ASCII or too large is refused, unwritten.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_metadata_is_kept_and_returned() {
    let daemon = Daemon::start(None);
    let root = daemon.root();
    let upload = async |path: &str, content_type: &str, headers: &[(&str, &str)], body: Vec<u8>| {
        // As the SDKs do: without a token, a multipart body needs a header no web page can
        // add (src/daemon/http/browser.rs).
        let headers = [headers, &[("e2b-sandbox-id", "sdk")]].concat();
        let headers = &headers[..];
        let response = send(
            daemon.addr,
            Version::H1,
            post(
                &daemon,
                &format!("/files?path={path}"),
                content_type,
                headers,
                whole(body),
            ),
        )
        .await;
        let status = response.status();
        (
            status,
            serde_json::from_slice::<Value>(&body_bytes(response).await).unwrap(),
        )
    };
    let (status, written) = upload(
        "m.txt",
        "application/octet-stream",
        &[("X-Metadata-Owner", "alice"), ("x-metadata-stage", "draft 1")],
        b"data".to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{written}");
    assert_eq!(written[0]["metadata"], json!({ "owner": "alice", "stage": "draft 1" }));
    let (_, stat) = fs_json(&daemon, "Stat", json!({ "path": "m.txt" })).await;
    assert_eq!(
        stat["entry"]["metadata"],
        json!({ "owner": "alice", "stage": "draft 1" }),
        "{stat}"
    );

    let (content_type, form) = multipart(&[("m.txt", b"again")]);
    let (status, written) = upload("m.txt", &content_type, &[("x-metadata-owner", "bob")], form).await;
    assert_eq!(status, StatusCode::OK, "{written}");
    assert_eq!(
        written[0]["metadata"],
        json!({ "owner": "bob" }),
        "the whole set replaced"
    );
    let (_, listed) = fs_json(&daemon, "ListDir", json!({ "path": "" })).await;
    assert_eq!(listed["entries"][0]["metadata"], json!({ "owner": "bob" }), "{listed}");
    let (_, written) = upload("plain.txt", "application/octet-stream", &[], b"x".to_vec()).await;
    assert!(written[0].get("metadata").is_none(), "{written}");

    let long = "v".repeat(5000);
    for (headers, what) in [
        (vec![("x-metadata-k", long.as_str())], "over 4096 bytes"),
        (vec![("x-metadata-k", "tab\there")], "not printable"),
    ] {
        let (status, error) = upload("refused.txt", "application/octet-stream", &headers, b"x".to_vec()).await;
        assert_eq!(
            (status, error["code"].clone()),
            (StatusCode::BAD_REQUEST, json!(400)),
            "{what}: {error}"
        );
    }
    assert!(!root.join("refused.txt").exists());
}
