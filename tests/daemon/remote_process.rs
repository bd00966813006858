//! E2B's `process.Process` on the daemon's network face, as a client meets it: the
//! built daemon on a real TCP port, real jobs, a Connect client written in
//! tests/remote/harness.rs speaking JSON and binary protobuf, unary and streaming,
//! over HTTP/1.1 and h2c. Every daemon is ended by its guard (SIGTERM kills its jobs).
#![cfg(unix)]

use crate::remote_harness as harness;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

use harness::*;
use hyper::StatusCode;
use native_shell_service::daemon::proto::process as pb;
use prost::Message;
use serde_json::{json, Value};

/// A proto3 JSON bool: `false` is left out.
fn flag(v: &Value) -> bool {
    v.as_bool().unwrap_or(false)
}

fn b64(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

async fn start_json(daemon: &Daemon, message: Value) -> (JsonEvents, u64) {
    let mut events = stream_json(daemon, Version::H1, "Start", message, &[]).await;
    assert_eq!(events.0.status, StatusCode::OK);
    let start = events.next().await.unwrap_or_else(|end| panic!("Start failed: {end}"));
    let pid = start["start"]["pid"]
        .as_u64()
        .unwrap_or_else(|| panic!("no start event: {start}"));
    (events, pid)
}

async fn list(daemon: &Daemon) -> Vec<Value> {
    let (status, body) = unary_json(daemon, "List", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body.get("processes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_streams_stdout_stderr_and_the_exit_with_cwd_and_envs() {
    let daemon = Daemon::start(None);
    let cwd = daemon.root().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let (mut events, pid) = start_json(
        &daemon,
        json!({"process": {
            "cmd": "/bin/sh",
            "args": ["-c", "echo \"out $FOO $(pwd)\"; echo err >&2; exit 3"],
            "envs": {"FOO": "bar"},
            "cwd": path_str(&cwd),
        }}),
    )
    .await;
    assert!(pid > 0);
    let seen = events.until_end().await;
    assert_eq!(
        String::from_utf8_lossy(&seen.stdout),
        format!("out bar {}\n", cwd.display())
    );
    assert_eq!(String::from_utf8_lossy(&seen.stderr), "err\n");
    assert!(seen.pty.is_empty());
    assert_eq!(seen.end["exitCode"], 3, "{}", seen.end);
    assert!(flag(&seen.end["exited"]));
    assert_eq!(seen.end["status"], "exit status 3");
    assert_eq!(seen.end["error"], "exit status 3");
    // Then the end of the stream, with no error.
    assert_eq!(events.next().await.unwrap_err(), json!({}));

    // Outside the project root: refused (the face's jobs are confined to it).
    let mut refused = stream_json(
        &daemon,
        Version::H1,
        "Start",
        json!({"process": {"cmd": "/bin/true", "cwd": path_str(daemon.dir.path())}}),
        &[],
    )
    .await;
    assert_eq!(refused.next().await.unwrap_err()["error"]["code"], "invalid_argument");

    // A clean exit has no `error` (proto3 JSON leaves it out).
    let (mut events, _) = start_json(&daemon, json!({"process": {"cmd": "/bin/true"}})).await;
    let seen = events.until_end().await;
    assert!(flag(&seen.end["exited"]), "{}", seen.end);
    assert!(seen.end.get("exitCode").is_none_or(|c| c == 0), "{}", seen.end);
    assert!(seen.end.get("error").is_none(), "{}", seen.end);
}

/// Binary protobuf over h2c, in a terminal: the size asked for, input, a resize, and
/// a signal death reported as envd does (exit code -1, `exited: false`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pty_process_in_binary_protobuf_over_h2() {
    let daemon = Daemon::start(None);
    let start = pb::StartRequest {
        process: Some(pb::ProcessConfig {
            cmd: "/bin/sh".into(),
            args: vec![
                "-c".into(),
                "stty size; while read l; do echo \"got $l\"; stty size; done".into(),
            ],
            ..Default::default()
        }),
        pty: Some(pb::Pty {
            size: Some(pb::pty::Size { cols: 100, rows: 30 }),
        }),
        tag: Some("term".into()),
        stdin: None,
    };
    let req = post(
        &daemon,
        "/process.Process/Start",
        "application/connect+proto",
        &[],
        whole(envelope(0, &start.encode_to_vec())),
    );
    let mut stream = Envelopes::new(send(daemon.addr, Version::H2, req).await);
    assert_eq!(stream.status, StatusCode::OK);
    let mut output = Vec::new();
    let mut pid = 0;
    let mut end = None;
    let mut step = 0;
    while end.is_none() {
        let (flags, payload) = stream.next().await.expect("a message");
        assert_eq!(flags & 0x02, 0, "ended early: {}", String::from_utf8_lossy(&payload));
        let event = pb::StartResponse::decode(payload)
            .unwrap()
            .event
            .unwrap()
            .event
            .unwrap();
        match event {
            pb::process_event::Event::Start(s) => pid = s.pid,
            pb::process_event::Event::Data(d) => match d.output.unwrap() {
                pb::process_event::data_event::Output::Pty(bytes) => output.extend_from_slice(&bytes),
                other => panic!("pipes data from a PTY process: {other:?}"),
            },
            pb::process_event::Event::End(e) => end = Some(e),
            pb::process_event::Event::Keepalive(_) => {}
        }
        let text = String::from_utf8_lossy(&output).to_string();
        let selector = Some(pb::ProcessSelector {
            selector: Some(pb::process_selector::Selector::Pid(pid)),
        });
        if step == 0 && text.contains("30 100") {
            step = 1;
            let update = pb::UpdateRequest {
                process: Some(pb::ProcessSelector {
                    selector: Some(pb::process_selector::Selector::Tag("term".into())),
                }),
                pty: Some(pb::Pty {
                    size: Some(pb::pty::Size { cols: 120, rows: 40 }),
                }),
            };
            assert_eq!(unary_proto(&daemon, "Update", &update).await.0, StatusCode::OK);
            let input = pb::SendInputRequest {
                process: selector.clone(),
                input: Some(pb::ProcessInput {
                    input: Some(pb::process_input::Input::Pty(b"hello\r".to_vec())),
                }),
            };
            let (status, body) = unary_proto(&daemon, "SendInput", &input).await;
            assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
            pb::SendInputResponse::decode(body).unwrap();
        } else if step == 1 && text.contains("got hello") && text.contains("40 120") {
            step = 2;
            let kill = pb::SendSignalRequest {
                process: selector,
                signal: pb::Signal::Sigkill as i32,
            };
            assert_eq!(unary_proto(&daemon, "SendSignal", &kill).await.0, StatusCode::OK);
        }
    }
    let end = end.unwrap();
    assert_eq!(step, 2, "{}", String::from_utf8_lossy(&output));
    assert_eq!(
        (end.exit_code, end.exited, end.status.as_str()),
        (-1, false, "signal: killed")
    );
    assert_eq!(end.error.as_deref(), Some("signal: killed"));
}

/// E2B #1352: a `Connect` after the starting stream went away keeps sending what the
/// process prints, input after input; our replay offset sends what came before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_follows_without_stopping_and_replays_from_an_offset() {
    let daemon = Daemon::start(None);
    let (events, pid) = start_json(
        &daemon,
        json!({"process": {"cmd": "/bin/sh", "args": ["-c", "echo ready; while read l; do echo \"got $l\"; done; echo bye"]}, "tag": "echoer"}),
    )
    .await;
    let mut events = events;
    let mut seen = Collected::default();
    events.until_text(&mut seen, "ready").await;
    drop(events); // the starting client goes; the process runs on

    let mut connected = stream_json(&daemon, Version::H2, "Connect", json!({"process": {"pid": pid}}), &[]).await;
    let first = connected.next().await.unwrap();
    assert_eq!(first["start"]["pid"], pid);
    let mut seen = Collected::default();
    for word in ["one", "two", "three"] {
        let (status, body) = unary_json(
            &daemon,
            "SendInput",
            json!({"process": {"tag": "echoer"}, "input": {"stdin": b64(&format!("{word}\n"))}}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        connected.until_text(&mut seen, &format!("got {word}")).await;
    }
    assert!(!seen.all().contains("ready"), "from then on only: {}", seen.all());

    // The extension: replay from offset 0, then live.
    let mut replay = stream_json(
        &daemon,
        Version::H1,
        "Connect",
        json!({"process": {"pid": pid}, "replayFrom": "0"}),
        &[],
    )
    .await;
    assert_eq!(replay.next().await.unwrap()["start"]["pid"], pid);
    let mut replayed = Collected::default();
    replay.until_text(&mut replayed, "got three").await;
    assert!(replayed.all().starts_with("ready\ngot one\n"), "{}", replayed.all());

    let (status, _) = unary_json(&daemon, "CloseStdin", json!({"process": {"pid": pid}})).await;
    assert_eq!(status, StatusCode::OK);
    let end = connected.until_end().await;
    assert!(end.all().contains("bye"), "{}", end.all());
    assert!(flag(&end.end["exited"]), "{}", end.end);
    assert!(flag(&replay.until_end().await.end["exited"]));
}

/// A tiny client of the daemon's unix socket (its own protocol, docs/daemon.md).
struct SocketClient(UnixStream, u64);

impl SocketClient {
    fn open(daemon: &Daemon, root: &std::path::Path) -> Self {
        let stream = UnixStream::connect(&daemon.socket).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        let mut c = SocketClient(stream, 0);
        c.call("hello", json!({"version": "test", "protocol": 1, "pid": 1}));
        c.call(
            "open",
            json!({"projectRoot": root, "ioDir": daemon.dir.path().join("io")}),
        );
        c
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.1 += 1;
        let body = json!({"id": self.1, "method": method, "params": params}).to_string();
        let mut frame = vec![0u8];
        frame.extend((body.len() as u32).to_be_bytes());
        frame.extend(body.as_bytes());
        self.0.write_all(&frame).unwrap();
        loop {
            let mut head = [0u8; 5];
            self.0.read_exact(&mut head).unwrap();
            let mut body = vec![0u8; u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize];
            self.0.read_exact(&mut body).unwrap();
            let reply: Value = serde_json::from_slice(&body).unwrap();
            if reply["id"] == self.1 {
                assert!(reply.get("error").is_none(), "{method}: {reply}");
                return reply["result"].clone();
            }
        }
    }
}

/// One state for both faces: a job a unix-socket client started is listed (E2B
/// #1031), fed and killed over HTTP; a job started over HTTP is in the socket
/// client's job list (same project root) and takes its calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_are_shared_between_the_socket_and_the_network_face() {
    let daemon = Daemon::start(None);
    let mut client = SocketClient::open(&daemon, &daemon.root());
    // `cat` ends at its input's end (a kill closes it): the shell lives on to be killed.
    let started = client.call(
        "start",
        json!({"command": "cat; exec sleep 300", "options": {"mode": "pipes"}}),
    );
    let their_pid = started["pid"].as_u64().unwrap();

    let (mut ours, our_pid) = start_json(
        &daemon,
        json!({"process": {"cmd": "/bin/sleep", "args": ["300"], "envs": {"A": "1"}}, "tag": "napper"}),
    )
    .await;
    let processes = list(&daemon).await;
    let theirs = processes
        .iter()
        .find(|p| p["pid"] == their_pid)
        .unwrap_or_else(|| panic!("{processes:?}"));
    assert_eq!(theirs["config"]["cmd"], "cat; exec sleep 300");
    let mine = processes
        .iter()
        .find(|p| p["pid"] == our_pid)
        .unwrap_or_else(|| panic!("{processes:?}"));
    assert_eq!(mine["tag"], "napper");
    assert_eq!(mine["config"]["args"], json!(["300"]));
    assert_eq!(mine["config"]["envs"], json!({"A": "1"}));

    let jobs = client.call("getActiveProcesses", json!({}));
    let job = jobs.as_array().unwrap().iter().find(|j| j["pid"] == our_pid).cloned();
    let job = job.unwrap_or_else(|| panic!("the HTTP job in the socket's list: {jobs}"));
    assert_eq!(job["attached"], "other");
    // Their job's directory (the project root, "." to the core) is its cwd over HTTP,
    // absolute as envd's.
    let their_job = jobs.as_array().unwrap().iter().find(|j| j["pid"] == their_pid);
    let their_job = their_job.unwrap_or_else(|| panic!("the socket's job in its list: {jobs}"));
    assert_eq!(their_job["directory"], ".", "{jobs}");
    assert_eq!(theirs["config"]["cwd"], daemon.root().display().to_string(), "{jobs}");

    // Their job, driven over HTTP: input, then SIGTERM (answered at once).
    let mut follow = stream_json(
        &daemon,
        Version::H1,
        "Connect",
        json!({"process": {"pid": their_pid}}),
        &[],
    )
    .await;
    follow.next().await.unwrap();
    let (status, body) = unary_json(
        &daemon,
        "SendInput",
        json!({"process": {"pid": their_pid}, "input": {"stdin": b64("shared\n")}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut seen = Collected::default();
    follow.until_text(&mut seen, "shared").await;
    let (status, _) = unary_json(
        &daemon,
        "SendSignal",
        json!({"process": {"pid": their_pid}, "signal": "SIGNAL_SIGTERM"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let end = follow.until_end().await.end;
    assert_eq!(
        (flag(&end["exited"]), end["status"].clone()),
        (false, json!("signal: terminated")),
        "{end}"
    );

    // Ours, killed by the socket client by its handle.
    let handle = job["handle"].clone();
    client.call("kill", json!({"handle": handle}));
    assert!(!flag(&ours.until_end().await.end["exited"]));
    eventually("the list without either job", async || {
        let now = list(&daemon).await;
        !now.iter().any(|p| p["pid"] == our_pid || p["pid"] == their_pid)
    })
    .await;
}

/// SendSignal ends the whole tree (a background child too) and does not wait for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_ends_the_process_tree() {
    let daemon = Daemon::start(None);
    let (mut events, pid) = start_json(
        &daemon,
        json!({"process": {"cmd": "/bin/sh", "args": ["-c", "sleep 300 & echo child $!; wait"]}}),
    )
    .await;
    let mut seen = Collected::default();
    events.until_text(&mut seen, "\n").await;
    let child: i64 = seen.all().trim().strip_prefix("child ").unwrap().parse().unwrap();
    assert!(pid_alive(child));
    let (status, _) = unary_json(
        &daemon,
        "SendSignal",
        json!({"process": {"pid": pid}, "signal": "SIGNAL_SIGKILL"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(events.until_end().await.end["status"], "signal: killed");
    eventually("the background child gone", async || !pid_alive(child)).await;
}

/// Reads events (keepalives counted) until the stream's end message, which must be an
/// error: its `error` object.
async fn until_error(events: &mut JsonEvents, seen: &mut Collected) -> Value {
    loop {
        match events.next().await {
            Ok(event) => assert!(!seen.take(&event), "an end event, not an error: {event}"),
            Err(end) => return end["error"].clone(),
        }
    }
}

/// Connect-Timeout-Ms on Start is the process's time limit, as in envd, and the
/// stream then ends as envd's does: `deadline_exceeded` (the SDKs' TimeoutError), not
/// an end event. A quiet stream gets keepalives at the interval the client asks for.
/// On Connect the deadline ends the stream only: the process runs on. A Connect after
/// the end gets the start and the end with the exit code (envd keeps them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_timeout_and_keepalives() {
    let daemon = Daemon::start(None);
    let mut events = stream_json(
        &daemon,
        Version::H2,
        "Start",
        json!({"process": {"cmd": "/bin/sh", "args": ["-c", "echo before; exec sleep 300"]}}),
        &[("connect-timeout-ms", "2500"), ("keepalive-ping-interval", "1")],
    )
    .await;
    let pid = events.next().await.unwrap()["start"]["pid"].as_i64().unwrap();
    let mut seen = Collected::default();
    let error = until_error(&mut events, &mut seen).await;
    assert_eq!(error["code"], "deadline_exceeded", "{error}");
    assert!(seen.keepalives >= 1, "{seen:?}");
    assert_eq!(seen.all(), "before\n", "the output before the deadline comes");
    eventually("the timed-out process gone", async || !pid_alive(pid)).await;

    // Connect's deadline ends the stream, not the process.
    let (mut running, pid) = start_json(
        &daemon,
        json!({"process": {"cmd": "/bin/sh", "args": ["-c", "read l; echo got $l"]}}),
    )
    .await;
    let mut connected = stream_json(
        &daemon,
        Version::H1,
        "Connect",
        json!({"process": {"pid": pid}}),
        &[("connect-timeout-ms", "1500")],
    )
    .await;
    assert_eq!(connected.next().await.unwrap()["start"]["pid"], pid);
    let error = until_error(&mut connected, &mut Collected::default()).await;
    assert_eq!(error["code"], "deadline_exceeded", "{error}");
    assert!(pid_alive(pid as i64), "Connect's deadline does not kill");
    let (status, body) = unary_json(
        &daemon,
        "SendInput",
        json!({"process": {"pid": pid}, "input": {"stdin": b64("x\n")}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        running.until_end().await.end["exitCode"],
        Value::Null,
        "exit 0 is the default"
    );

    // A late Connect: the start and the end at once, with the exit code.
    let (mut quick, pid) = start_json(
        &daemon,
        json!({"process": {"cmd": "/bin/sh", "args": ["-c", "exit 7"]}}),
    )
    .await;
    assert_eq!(quick.until_end().await.end["exitCode"], 7);
    let mut late = stream_json(&daemon, Version::H1, "Connect", json!({"process": {"pid": pid}}), &[]).await;
    assert_eq!(late.next().await.unwrap()["start"]["pid"], pid);
    let end = late.until_end().await;
    assert_eq!(
        (end.end["exitCode"].clone(), end.all()),
        (json!(7), String::new()),
        "{}",
        end.end
    );
    assert!(late.next().await.is_err(), "then the stream ends");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_is_open_and_everything_else_needs_the_token() {
    let daemon = Daemon::start(Some("s3cret-token"));
    let bare = |path: &str, headers: &[(&str, &str)]| {
        let mut builder =
            hyper::Request::post(format!("http://{}{path}", daemon.addr)).header("content-type", "application/json");
        for (n, v) in headers {
            builder = builder.header(*n, *v);
        }
        builder.body(whole("{}")).unwrap()
    };
    let health = hyper::Request::get(format!("http://{}/health", daemon.addr))
        .body(whole(""))
        .unwrap();
    assert_eq!(send(daemon.addr, Version::H1, health).await.status(), StatusCode::OK);
    for headers in [
        &[][..],
        &[("x-access-token", "wrong")][..],
        &[("authorization", "Bearer s3cret-tokeN")][..],
        &[("authorization", "s3cret-token")][..],
    ] {
        for version in [Version::H1, Version::H2] {
            let response = send(daemon.addr, version, bare("/process.Process/List", headers)).await;
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{headers:?}");
            assert!(body_bytes(response).await.is_empty());
        }
    }
    for headers in [
        &[("x-access-token", "s3cret-token")][..],
        &[("authorization", "Bearer s3cret-token")][..],
    ] {
        let response = send(daemon.addr, Version::H1, bare("/process.Process/List", headers)).await;
        assert_eq!(response.status(), StatusCode::OK, "{headers:?}");
    }
    // Unknown paths are 401 too without the token: nothing is learnt of the routes.
    let response = send(daemon.addr, Version::H1, bare("/nothing", &[])).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

#[test]
fn a_public_address_without_a_token_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(BIN)
        .arg("--socket")
        .arg(dir.path().join("run").join("d.sock"))
        .args(["--listen", "0.0.0.0:0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // It must exit by itself; one that serves is stopped and the test fails.
    let deadline = std::time::Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{stderr}");
    assert!(stderr.contains("without --access-token-file"), "{stderr}");
}

/// Without a token, a loopback port is the daemon's user's alone: another user's
/// connection is closed before anything is read (the TCP twin of the socket's
/// SO_PEERCRED check). Needs root (to be a second user); skipped, saying so, otherwise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_token_only_the_daemons_user_may_connect() {
    if unsafe { libc::geteuid() } != 0 || std::process::Command::new("setpriv").arg("--help").output().is_err() {
        eprintln!("skipped: needs root and setpriv to connect as another user");
        return;
    }
    let daemon = Daemon::start(None);
    // One raw HTTP/1.1 request through bash's /dev/tcp (a program every user may run);
    // prints the status line, or nothing when the connection is closed unanswered. A
    // refusal may close the connection before the request is written (the check takes
    // microseconds): the write's error (EPIPE, SIGPIPE ignored) is not a failure of the probe.
    let probe = format!(
        "trap '' PIPE; exec 3<>/dev/tcp/127.0.0.1/{} && {{ printf 'GET /health HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n' >&3; head -n 1 <&3 | tr -d '\\r'; }} 2>/dev/null",
        daemon.addr.port()
    );
    let run = |as_nobody: bool| {
        let mut cmd = std::process::Command::new(if as_nobody { "setpriv" } else { "timeout" });
        if as_nobody {
            cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "timeout"]);
        }
        let out = cmd.args(["60", "bash", "-c", &probe]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(run(false), "HTTP/1.1 200 OK");
    assert_eq!(run(true), "", "another user was answered");
    // And the daemon still serves its own user afterwards.
    assert_eq!(run(false), "HTTP/1.1 200 OK");
}

/// Another user sends a whole request and closes at once: its socket is then in
/// FIN_WAIT2 or TIME_WAIT, where /proc/net/tcp names uid 0, so a root daemon without a
/// token that read the socket tables ran that user's command as root. The kernel's
/// record of the exact socket, ESTABLISHED only, refuses it (src/platform/linux/tcp_diag.rs).
#[tokio::test]
async fn a_request_whose_sender_closed_at_once_is_not_run_as_root() {
    if unsafe { libc::geteuid() } != 0 || std::process::Command::new("setpriv").arg("--help").output().is_err() {
        eprintln!("skipped: needs root and setpriv to connect as another user");
        return;
    }
    let daemon = Daemon::start(None);
    let marker = daemon.dir.path().join("ran-as-root");
    let message = json!({ "process": { "cmd": "/bin/sh", "args": ["-c", format!("id -u > {}", marker.display())] } });
    let body = serde_json::to_vec(&message).unwrap();
    let mut request = format!(
        "POST /process.Process/Start HTTP/1.1\r\nHost: x\r\nContent-Type: application/connect+json\r\nContent-Length: {}\r\n\r\n",
        body.len() + 5
    )
    .into_bytes();
    request.push(0);
    request.extend_from_slice(&(body.len() as u32).to_be_bytes());
    request.extend_from_slice(&body);
    let format: String = request.iter().map(|b| format!("\\x{b:02x}")).collect();
    // Sent and closed before the daemon accepts (it is stopped meanwhile; the kernel
    // completes the connection from its backlog), so the check always comes after the
    // close: the race such a client could otherwise only win now and then.
    let probe = format!(
        "trap '' PIPE; exec 3<>/dev/tcp/127.0.0.1/{port} && printf '{format}' >&3; exec 3>&-; sleep 0.2",
        port = daemon.addr.port()
    );
    unsafe { libc::kill(daemon.pid(), libc::SIGSTOP) };
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "timeout",
            "60",
            "bash",
            "-c",
            &probe,
        ])
        .output();
    unsafe { libc::kill(daemon.pid(), libc::SIGCONT) };
    let out = out.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // A request let in starts its process within moments; waited for generously.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert!(
        !marker.exists(),
        "another user's command ran as uid {:?}",
        std::fs::read_to_string(&marker)
    );
}
