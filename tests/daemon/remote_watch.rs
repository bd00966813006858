//! envd's directory watchers on the network face over real TCP, on the real kernel's
//! inotify (tests/remote/harness.rs): the WatchDir stream, the polled CreateWatcher /
//! GetWatcherEvents / RemoveWatcher, and their bounds (watchers at once, events
//! queued), each change made by this test in a real directory.
#![cfg(target_os = "linux")]

use crate::remote_harness as harness;

use std::os::unix::fs::PermissionsExt;

use harness::*;
use hyper::StatusCode;
use serde_json::{json, Value};

/// A WatchDir stream in JSON over `version`.
async fn watch(daemon: &Daemon, version: Version, message: Value, headers: &[(&str, &str)]) -> Envelopes {
    let req = post(
        daemon,
        "/filesystem.Filesystem/WatchDir",
        "application/connect+json",
        headers,
        whole(envelope(0, message.to_string().as_bytes())),
    );
    Envelopes::new(send(daemon.addr, version, req).await)
}

/// The next message: `Ok(message)`, or `Err(end message)`.
async fn next(stream: &mut Envelopes) -> Result<Value, Value> {
    let (flags, payload) = stream.next().await.expect("a message before the body ends");
    let value: Value = serde_json::from_slice(&payload).unwrap();
    if flags & 0x02 != 0 {
        Err(value)
    } else {
        Ok(value)
    }
}

/// Filesystem events (`(type, name)`, keepalives skipped) until `last` is among them.
async fn events_until(stream: &mut Envelopes, last: (&str, &str), seen: &mut Vec<Value>) {
    loop {
        let message = next(stream)
            .await
            .unwrap_or_else(|end| panic!("ended: {end}; saw {seen:?}"));
        if let Some(event) = message.get("filesystem") {
            seen.push(event.clone());
            if event["type"] == last.0 && event["name"] == last.1 {
                return;
            }
        }
    }
}

fn has(seen: &[Value], kind: &str, name: &str) -> bool {
    seen.iter().any(|e| e["type"] == kind && e["name"] == name)
}

/// A stream gets envd's events for what is done in the directory: create, write,
/// chmod, rename (the old name's RENAME, the new one's CREATE), remove; entries when
/// asked for, not on REMOVE/RENAME; below it only when recursive; keepalives; and
/// deadline_exceeded at Connect-Timeout-Ms.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_dir_streams_changes() {
    let daemon = Daemon::start(None);
    let dir = daemon.root().join("w");
    std::fs::create_dir_all(dir.join("sub")).unwrap();

    let mut flat = watch(&daemon, Version::H1, json!({ "path": "w", "includeEntry": true }), &[]).await;
    assert_eq!(flat.status, StatusCode::OK);
    assert_eq!(next(&mut flat).await.unwrap(), json!({ "start": {} }));
    let mut deep = watch(
        &daemon,
        Version::H2,
        json!({ "path": dir, "recursive": true }),
        &[("keepalive-ping-interval", "1")],
    )
    .await;
    assert_eq!(next(&mut deep).await.unwrap(), json!({ "start": {} }));

    std::fs::write(dir.join("a.txt"), b"hello").unwrap();
    std::fs::set_permissions(dir.join("a.txt"), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::rename(dir.join("a.txt"), dir.join("b.txt")).unwrap();
    std::fs::write(dir.join("sub/deep.txt"), b"x").unwrap();
    std::fs::remove_file(dir.join("b.txt")).unwrap();

    let mut seen = Vec::new();
    events_until(&mut flat, ("EVENT_TYPE_REMOVE", "b.txt"), &mut seen).await;
    for (kind, name) in [
        ("EVENT_TYPE_CREATE", "a.txt"),
        ("EVENT_TYPE_WRITE", "a.txt"),
        ("EVENT_TYPE_CHMOD", "a.txt"),
        ("EVENT_TYPE_RENAME", "a.txt"),
        ("EVENT_TYPE_CREATE", "b.txt"),
    ] {
        assert!(has(&seen, kind, name), "{kind} {name} in {seen:?}");
    }
    assert!(
        !seen.iter().any(|e| e["name"] == "sub/deep.txt"),
        "not recursive: {seen:?}"
    );
    // Entries (of what is still there when the event is read: a.txt went on at once).
    std::fs::write(dir.join("kept.txt"), b"kept").unwrap();
    events_until(&mut flat, ("EVENT_TYPE_WRITE", "kept.txt"), &mut seen).await;
    let created = seen.iter().find(|e| e["name"] == "kept.txt").unwrap();
    assert_eq!(
        created["entry"]["path"],
        dir.join("kept.txt").display().to_string(),
        "{created}"
    );
    assert_eq!(created["entry"]["type"], "FILE_TYPE_FILE", "{created}");
    for e in seen
        .iter()
        .filter(|e| e["type"] == "EVENT_TYPE_REMOVE" || e["type"] == "EVENT_TYPE_RENAME")
    {
        assert!(e.get("entry").is_none(), "no entry on {e}");
    }

    let mut seen = Vec::new();
    events_until(&mut deep, ("EVENT_TYPE_REMOVE", "b.txt"), &mut seen).await;
    assert!(has(&seen, "EVENT_TYPE_CREATE", "sub/deep.txt"), "{seen:?}");
    assert!(
        seen.iter().all(|e| e.get("entry").is_none()),
        "no entries unasked: {seen:?}"
    );
    // A directory made after the watch began is watched too.
    std::fs::create_dir(dir.join("later")).unwrap();
    let mut seen = Vec::new();
    events_until(&mut deep, ("EVENT_TYPE_CREATE", "later"), &mut seen).await;
    // (The watch on it is added when its creation is seen: a write before that is not
    // an event, so write until one is.)
    let mut got = Vec::new();
    let mut attempts = 0;
    loop {
        std::fs::write(dir.join("later/f"), b"1").unwrap();
        let wait = events_until(&mut deep, ("EVENT_TYPE_WRITE", "later/f"), &mut got);
        if tokio::time::timeout(std::time::Duration::from_secs(2), wait)
            .await
            .is_ok()
        {
            break;
        }
        attempts += 1;
        assert!(attempts < 15, "no event from the new directory: {got:?}");
    }
    // A directory renamed inside the tree: what happens in it is named by its new name.
    std::fs::rename(dir.join("later"), dir.join("renamed")).unwrap();
    let mut got = Vec::new();
    let mut attempts = 0;
    loop {
        std::fs::write(dir.join("renamed/g"), b"1").unwrap();
        let wait = events_until(&mut deep, ("EVENT_TYPE_WRITE", "renamed/g"), &mut got);
        if tokio::time::timeout(std::time::Duration::from_secs(2), wait)
            .await
            .is_ok()
        {
            break;
        }
        attempts += 1;
        assert!(attempts < 15, "no event from the renamed directory: {got:?}");
    }
    assert!(has(&got, "EVENT_TYPE_RENAME", "later"), "{got:?}");
    assert!(
        !got.iter().any(|e| e["name"] == "later/g"),
        "named by the old name: {got:?}"
    );
    // Moved out of the tree: nothing of it is reported any more (the events of one
    // watch come in order, so a later change in the tree marks the end).
    std::fs::rename(dir.join("renamed"), daemon.root().join("outside")).unwrap();
    std::fs::write(daemon.root().join("outside/h"), b"1").unwrap();
    std::fs::write(dir.join("sentinel"), b"1").unwrap();
    let mut got = Vec::new();
    events_until(&mut deep, ("EVENT_TYPE_WRITE", "sentinel"), &mut got).await;
    assert!(has(&got, "EVENT_TYPE_RENAME", "renamed"), "{got:?}");
    assert!(
        !got.iter()
            .any(|e| e["name"].as_str().is_some_and(|n| n.ends_with("/h"))),
        "a moved-out directory still reported: {got:?}"
    );
    // Quiet: keepalives.
    loop {
        let message = next(&mut deep).await.unwrap();
        if message.get("keepalive").is_some() {
            break;
        }
        assert!(message.get("filesystem").is_some(), "{message}");
    }

    let mut limited = watch(
        &daemon,
        Version::H1,
        json!({ "path": "w" }),
        &[("connect-timeout-ms", "1000")],
    )
    .await;
    assert_eq!(next(&mut limited).await.unwrap(), json!({ "start": {} }));
    let end = loop {
        if let Err(end) = next(&mut limited).await {
            break end;
        }
    };
    assert_eq!(end["error"]["code"], "deadline_exceeded", "{end}");

    for (message, code) in [
        (json!({ "path": "none" }), "not_found"),
        (json!({ "path": "w/sub/deep.txt" }), "invalid_argument"),
    ] {
        let mut refused = watch(&daemon, Version::H1, message.clone(), &[]).await;
        let end = next(&mut refused).await.unwrap_err();
        assert_eq!(end["error"]["code"], code, "{message}: {end}");
    }
}

/// The polled watchers: events between polls, removal, the bound on watchers open at
/// once (a stream's given back when it ends) and on events queued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn polled_watchers_and_their_bounds() {
    let daemon = Daemon::start(None);
    let dir = daemon.root().join("p");
    std::fs::create_dir_all(&dir).unwrap();

    let (status, created) = fs_json(&daemon, "CreateWatcher", json!({ "path": "p" })).await;
    assert_eq!(status, StatusCode::OK, "{created}");
    let id = created["watcherId"].as_str().unwrap().to_string();
    // A poll answers every change made before it, whatever the load: the kernel's
    // pending events are read first (the SDKs' watch_dir, write, get_new_events).
    std::fs::write(dir.join("one"), b"1").unwrap();
    let (status, got) = fs_json(&daemon, "GetWatcherEvents", json!({ "watcherId": id })).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    let seen = got["events"].as_array().cloned().unwrap_or_default();
    assert!(has(&seen, "EVENT_TYPE_CREATE", "one"), "{got}");
    assert!(has(&seen, "EVENT_TYPE_WRITE", "one"), "{got}");
    // An upload, as envd's: created, given to its owner (CHMOD), written.
    let req = post(
        &daemon,
        "/files?path=p/up.txt",
        "application/octet-stream",
        &[],
        whole("up"),
    );
    assert_eq!(send(daemon.addr, Version::H1, req).await.status(), StatusCode::OK);
    let (_, got) = fs_json(&daemon, "GetWatcherEvents", json!({ "watcherId": id })).await;
    let kinds: Vec<(&str, &str)> = got["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["type"].as_str().unwrap(), e["name"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("EVENT_TYPE_CREATE", "up.txt"),
            ("EVENT_TYPE_CHMOD", "up.txt"),
            ("EVENT_TYPE_WRITE", "up.txt")
        ],
        "{got}"
    );
    let (status, _) = fs_json(&daemon, "RemoveWatcher", json!({ "watcherId": id })).await;
    assert_eq!(status, StatusCode::OK);
    let (status, gone) = fs_json(&daemon, "GetWatcherEvents", json!({ "watcherId": id })).await;
    assert_eq!(
        (status, gone["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );

    // 64 at once; the next is refused until one goes.
    let mut ids = Vec::new();
    for _ in 0..64 {
        let (status, created) = fs_json(&daemon, "CreateWatcher", json!({ "path": "p" })).await;
        assert_eq!(status, StatusCode::OK, "{created}");
        ids.push(created["watcherId"].as_str().unwrap().to_string());
    }
    let (status, refused) = fs_json(&daemon, "CreateWatcher", json!({ "path": "p" })).await;
    assert_eq!(refused["code"], "resource_exhausted", "{status} {refused}");
    let mut stream = watch(&daemon, Version::H1, json!({ "path": "p" }), &[]).await;
    assert_eq!(
        next(&mut stream).await.unwrap_err()["error"]["code"],
        "resource_exhausted"
    );
    let (status, _) = fs_json(&daemon, "RemoveWatcher", json!({ "watcherId": ids.pop().unwrap() })).await;
    assert_eq!(status, StatusCode::OK);
    let mut stream = watch(&daemon, Version::H1, json!({ "path": "p" }), &[]).await;
    assert_eq!(next(&mut stream).await.unwrap(), json!({ "start": {} }));
    drop(stream); // the client leaves: its watcher goes
    eventually("the stream's watcher given back", async || {
        let (status, _) = fs_json(&daemon, "CreateWatcher", json!({ "path": "p" })).await;
        status == StatusCode::OK
    })
    .await;

    // A watcher nobody polls stops at 10 000 queued events, and says so; another,
    // of the same directory's parent, is not affected: only its own queue counts.
    let (status, _) = fs_json(&daemon, "RemoveWatcher", json!({ "watcherId": ids[0] })).await;
    assert_eq!(status, StatusCode::OK);
    let many = dir.join("many");
    std::fs::create_dir(&many).unwrap();
    let (status, created) = fs_json(&daemon, "CreateWatcher", json!({ "path": many })).await;
    assert_eq!(status, StatusCode::OK, "{created}");
    let flood = created["watcherId"].as_str().unwrap().to_string();
    for i in 0..10_050 {
        std::fs::File::create(many.join(i.to_string())).unwrap();
    }
    eventually("the flood refused", async || {
        let (status, got) = fs_json(&daemon, "GetWatcherEvents", json!({ "watcherId": flood })).await;
        status != StatusCode::OK && got["code"] == "resource_exhausted"
    })
    .await;
    let (status, got) = fs_json(&daemon, "GetWatcherEvents", json!({ "watcherId": ids[1] })).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    assert!(
        has(got["events"].as_array().unwrap(), "EVENT_TYPE_CREATE", "many"),
        "{got}"
    );
}
