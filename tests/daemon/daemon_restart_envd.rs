//! Live upgrade with the envd face's jobs (src/daemon/carry.rs, `CarriedFace`): a job
//! its `Start` made runs on across a restart in place, keeps its tag, its config (envs
//! included) and its stdin, and a `Connect` after the restart streams it on. The
//! built daemon on a real TCP port, restarted in place into the same binary (the
//! version does not matter here: tests/daemon/daemon_restart_jobs.rs changes it), and the
//! Connect client of tests/remote/harness.rs.
#![cfg(target_os = "linux")]

use crate::remote_harness as harness;

use harness::*;
use hyper::StatusCode;
use serde_json::{json, Value};

fn b64(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

async fn list(daemon: &Daemon) -> Vec<Value> {
    let (status, body) = unary_json(daemon, "List", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body.get("processes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// `native-shell-daemon --restart --socket S`: its exit status and stderr.
fn restart(daemon: &Daemon) -> (bool, String) {
    let out = std::process::Command::new(BIN)
        .arg("--restart")
        .arg("--socket")
        .arg(&daemon.socket)
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

async fn send_input(daemon: &Daemon, tag: &str, text: &str) {
    let (status, body) = unary_json(
        daemon,
        "SendInput",
        json!({"process": {"tag": tag}, "input": {"stdin": b64(text)}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn envd_jobs_run_on_across_a_restart_with_their_tags_envs_and_stdin() {
    let daemon = Daemon::start(None);
    let mut started = stream_json(
        &daemon,
        Version::H1,
        "Start",
        json!({"process": {"cmd": "/bin/sh", "args": ["-c", "echo \"ready $FOO\"; while read -r l; do echo \"got $l\"; done; echo eof"], "envs": {"FOO": "bar"}}, "tag": "repl"}),
        &[],
    )
    .await;
    let start = started.next().await.unwrap_or_else(|end| panic!("Start failed: {end}"));
    let pid = start["start"]["pid"].as_u64().unwrap_or_else(|| panic!("{start}"));
    let mut seen = Collected::default();
    started.until_text(&mut seen, "ready bar").await;
    send_input(&daemon, "repl", "one\n").await;
    started.until_text(&mut seen, "got one").await;
    // A second job, its stdin closed at its start (`stdin: false`): it stays closed.
    let mut closed = stream_json(
        &daemon,
        Version::H1,
        "Start",
        json!({"process": {"cmd": "/bin/sh", "args": ["-c", "cat; echo \"eof at once\"; exec sleep 300"]}, "tag": "shut", "stdin": false}),
        &[],
    )
    .await;
    let mut shut = Collected::default();
    closed.until_text(&mut shut, "eof at once").await;
    // The restart closes the face's connections: these streams end with it.
    drop((started, closed));

    let (ok, said) = restart(&daemon);
    assert!(ok, "the restart failed: {said}");
    assert!(said.contains("restarted in place"), "{said}");

    let processes = list(&daemon).await;
    let repl = processes
        .iter()
        .find(|p| p["pid"] == pid)
        .unwrap_or_else(|| panic!("the job is not listed after the restart: {processes:?}"));
    assert_eq!(repl["tag"], "repl");
    assert_eq!(repl["config"]["envs"], json!({"FOO": "bar"}));
    assert_eq!(repl["config"]["cmd"], "/bin/sh");
    assert!(processes.iter().any(|p| p["tag"] == "shut"), "{processes:?}");

    // Reached by tag, streamed on by a Connect, its stdin still open.
    let mut connected = stream_json(
        &daemon,
        Version::H1,
        "Connect",
        json!({"process": {"tag": "repl"}}),
        &[],
    )
    .await;
    assert_eq!(connected.0.status, StatusCode::OK);
    let mut after = Collected::default();
    send_input(&daemon, "repl", "two\n").await;
    connected.until_text(&mut after, "got two").await;
    let (status, body) = unary_json(&daemon, "CloseStdin", json!({"process": {"tag": "repl"}})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let end = connected.until_end().await;
    assert!(end.all().contains("eof"), "{}", end.all());
    assert_eq!(end.end["exitCode"].as_i64().unwrap_or(0), 0, "{}", end.end);

    // The job whose stdin was closed runs on, and is reached by its tag.
    let (status, body) = unary_json(
        &daemon,
        "SendSignal",
        json!({"process": {"tag": "shut"}, "signal": "SIGNAL_SIGKILL"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}
