//! The daemon as its clients meet it: the built `native-shell-daemon` binary on a
//! real unix socket in a temporary directory, real jobs, real second connections and
//! processes, a real other uid. Every daemon is ended by its guard (SIGTERM: it kills
//! its jobs), and every test ends its jobs.
#![cfg(unix)]

use crate::stop;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_native-shell-daemon");

/// Polls `check` until it holds; the bound is generous (both cores may be busy).
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

struct Daemon {
    child: Child,
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Daemon {
    fn start(idle_ms: u64) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("run").join("daemon.sock");
        let child = spawn_daemon(&socket, idle_ms);
        let daemon = Daemon {
            child,
            socket,
            _dir: dir,
        };
        eventually("the daemon's socket", || UnixStream::connect(&daemon.socket).is_ok());
        daemon
    }

    fn root(&self) -> PathBuf {
        self._dir.path().to_path_buf()
    }

    fn client(&self) -> Client {
        let mut c = Client::connect(&self.socket);
        let hello = c.call(
            "hello",
            json!({"version": "test", "protocol": 1, "pid": std::process::id()}),
        );
        assert_eq!(hello["result"]["protocol"], 1, "{hello}");
        let io = self.root().join("io");
        let open = c.call("open", json!({"projectRoot": self.root(), "ioDir": io}));
        assert!(open["result"]["sessionId"].is_string(), "{open}");
        c
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

fn spawn_daemon(socket: &Path, idle_ms: u64) -> Child {
    Command::new(BIN)
        .arg("--socket")
        .arg(socket)
        .arg("--idle-exit-ms")
        .arg(idle_ms.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

struct Client {
    stream: UnixStream,
    next: u64,
    events: Vec<Value>,
}

impl Client {
    fn connect(socket: &Path) -> Self {
        let stream = UnixStream::connect(socket).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        Client {
            stream,
            next: 1,
            events: Vec::new(),
        }
    }

    fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next;
        self.next += 1;
        let body = json!({"id": id, "method": method, "params": params}).to_string();
        let mut frame = vec![0u8];
        frame.extend((body.len() as u32).to_be_bytes());
        frame.extend(body.as_bytes());
        self.stream.write_all(&frame).unwrap();
        id
    }

    /// The next message, `None` when the daemon closed the connection.
    fn read(&mut self) -> Option<Value> {
        let mut head = [0u8; 5];
        if self.stream.read_exact(&mut head).is_err() {
            return None;
        }
        assert_eq!(head[0], 0);
        let mut body = vec![0u8; u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize];
        self.stream.read_exact(&mut body).unwrap();
        Some(serde_json::from_slice(&body).unwrap())
    }

    /// The reply to request `id`; events and other replies read meanwhile are kept.
    fn reply(&mut self, id: u64) -> Value {
        if let Some(i) = self.events.iter().position(|m| m["id"] == id) {
            return self.events.remove(i);
        }
        loop {
            let message = self.read().expect("the daemon closed the connection");
            if message["id"] == id {
                return message;
            }
            self.events.push(message);
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.reply(id)
    }

    fn ok(&mut self, method: &str, params: Value) -> Value {
        let reply = self.call(method, params);
        assert!(reply.get("error").is_none(), "{method}: {reply}");
        reply["result"].clone()
    }
}

fn pid_alive(pid: i64) -> bool {
    // A zombie is dead for our purposes: its process has ended.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'),
        Err(_) => false,
    }
}

/// Pids of processes whose command line holds `marker`.
fn with_marker(marker: &str) -> Vec<i64> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i64>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).replace('\0', " ").contains(marker) && pid_alive(pid) {
            found.push(pid);
        }
    }
    found
}

#[test]
fn calls_answer_as_in_process() {
    let daemon = Daemon::start(60_000);
    let mut c = daemon.client();

    let run = c.ok(
        "run",
        json!({"command": "echo hi; exit 3", "options": {"mode": "pipes"}}),
    );
    assert_eq!(run["status"], "exited");
    assert_eq!(run["exitCode"], 3);
    assert_eq!(run["stdout"], "hi\n");
    assert_eq!(run["signal"], Value::Null);

    let started = c.ok("start", json!({"command": "cat", "options": {}}));
    let h = started["handle"].as_u64().unwrap();
    let sub = c.ok("subscribe", json!({"handle": h}))["sub"].clone();
    let answer = c.ok(
        "sendInput",
        json!({"handle": h, "input": "ping", "options": {"pattern": "ping"}}),
    );
    assert_eq!(answer["status"], "matched");
    assert_eq!(answer["handle"], h);

    // Ordered as sent: the wait is registered before the write reaches the job.
    let wait = c.send(
        "waitFor",
        json!({"handle": h, "options": {"pattern": "pong", "timeoutMs": 30000}}),
    );
    c.ok("writeToPty", json!({"handle": h, "base64": "cG9uZwo="}));
    let waited = c.reply(wait);
    assert_eq!(waited["result"]["status"], "matched", "{waited}");

    assert!(c.ok("isPtyActive", json!({"handle": h})).as_bool().unwrap());
    let screen = c.ok("getScreen", json!({"handle": h}));
    assert_eq!(screen["cols"], 80);

    let killed = c.ok("kill", json!({"handle": h, "options": {"reason": "task-cancelled"}}));
    assert_eq!(killed["status"], "killed");
    // The kill's reason is kept with the job, for any client that lists it later.
    let listed = c.ok("getActiveProcesses", json!({}));
    let job = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["handle"] == h)
        .cloned()
        .unwrap();
    assert_eq!(job["killReason"], "task-cancelled", "{job}");
    eventually("the exit event", || {
        if c.events
            .iter()
            .any(|e| e["event"] == "output" && e["sub"] == sub && e["data"]["exited"] == true)
        {
            return true;
        }
        let message = c.read().unwrap();
        c.events.push(message);
        false
    });
    assert_eq!(c.ok("getResult", json!({"handle": h}))["status"], "killed");
    let chunk = c.ok("readOutput", json!({"handle": h, "options": {"since": 0}}));
    assert!(chunk["text"].as_str().unwrap().contains("pong"), "{chunk}");

    // Errors carry the in-process codes.
    assert_eq!(
        c.call("getResult", json!({"handle": 9999}))["error"]["code"],
        "PROCESS_NOT_FOUND"
    );
    assert_eq!(
        c.call("run", json!({"command": "true", "options": {"timeoutMs": -1}}))["error"]["code"],
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        c.call("run", json!({"command": "true", "options": 42}))["error"]["code"],
        "INVALID_ARGUMENT"
    );
    let failed = c.call("start", json!({"command": "/nonexistent/x", "options": {"args": []}}));
    assert_eq!(failed["error"]["code"], "SPAWN_FAILED", "{failed}");
    assert_eq!(failed["error"]["result"]["status"], "failed");
    assert_eq!(c.call("nonsense", json!({}))["error"]["code"], "INVALID_ARGUMENT");
}

#[test]
fn requests_before_hello_or_open_are_refused() {
    let daemon = Daemon::start(60_000);
    let mut c = Client::connect(&daemon.socket);
    assert_eq!(
        c.call("start", json!({"command": "true"}))["error"]["code"],
        "INVALID_ARGUMENT"
    );
    c.ok("hello", json!({"version": "test", "protocol": 1, "pid": 1}));
    assert_eq!(
        c.call("start", json!({"command": "true"}))["error"]["code"],
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        c.ok("checkCommand", json!({"command": "rm -rf /"}))["roots"],
        json!(["rm"])
    );
}

#[test]
fn handles_outlive_their_connection_and_unkept_jobs_do_not() {
    let daemon = Daemon::start(60_000);
    let mut first = daemon.client();
    let kept = first.ok(
        "start",
        json!({"command": "echo started; sleep 300", "options": {"mode": "pipes"}}),
    );
    let unkept = first.ok("start", json!({"command": "sleep 301", "options": {"keep": false}}));
    let (kept, unkept) = (kept["handle"].as_u64().unwrap(), unkept["handle"].as_u64().unwrap());
    let unkept_pid = first
        .ok("getActiveProcesses", json!({}))
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["handle"] == unkept)
        .map(|p| p["pid"].as_i64().unwrap())
        .unwrap();
    first.ok(
        "waitFor",
        json!({"handle": kept, "options": {"pattern": "started", "fromStart": true}}),
    );
    drop(first);

    let mut second = daemon.client();
    eventually("the keep:false job's death", || !pid_alive(unkept_pid));
    let list = second.ok("getActiveProcesses", json!({}));
    let entry = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["handle"] == kept)
        .cloned()
        .unwrap();
    assert_eq!(entry["attached"], "none", "{entry}");
    assert_eq!(entry["status"], "running");
    let chunk = second.ok("readOutput", json!({"handle": kept}));
    assert_eq!(chunk["text"], "started\n");
    // A third connection sees the second's jobs as another client's.
    let mine = second.ok("start", json!({"command": "sleep 302"}))["handle"].clone();
    let mut third = daemon.client();
    let list = third.ok("getActiveProcesses", json!({}));
    let entry = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["handle"] == mine)
        .cloned()
        .unwrap();
    assert_eq!(entry["attached"], "other");
    assert_eq!(second.ok("kill", json!({"handle": kept}))["status"], "killed");
    assert_eq!(third.ok("kill", json!({"handle": mine}))["status"], "killed");
}

#[test]
fn a_second_daemon_on_the_same_socket_leaves_the_first_serving() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("run").join("daemon.sock");
    let mut a = spawn_daemon(&socket, 60_000);
    let mut b = spawn_daemon(&socket, 60_000);
    // One takes the lock; the other sees it held and exits 0 at once.
    let deadline = Instant::now() + Duration::from_secs(20);
    let (loser, winner) = loop {
        assert!(Instant::now() < deadline, "neither daemon gave way");
        if let Some(status) = a.try_wait().unwrap() {
            break ((status, a), b);
        }
        if let Some(status) = b.try_wait().unwrap() {
            break ((status, b), a);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let (status, mut loser) = loser;
    assert!(status.success());
    let mut message = String::new();
    loser.stderr.take().unwrap().read_to_string(&mut message).unwrap();
    assert!(message.contains("another daemon"), "{message}");
    let mut winner = Daemon {
        child: winner,
        socket: socket.clone(),
        _dir: dir,
    };
    eventually("the winner's socket", || UnixStream::connect(&socket).is_ok());
    let mut c = Client::connect(&socket);
    c.ok("hello", json!({"version": "t", "protocol": 1, "pid": 1}));
    assert!(winner.alive());
}

#[test]
fn a_stale_socket_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let socket = run.join("daemon.sock");
    // A dead daemon's socket: bound, then nobody listening.
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    assert!(UnixStream::connect(&socket).is_err());
    let daemon = Daemon {
        child: spawn_daemon(&socket, 60_000),
        socket: socket.clone(),
        _dir: dir,
    };
    eventually("the new socket", || UnixStream::connect(&daemon.socket).is_ok());
    daemon.client().ok("checkCommand", json!({"command": "ls"}));
}

#[test]
fn a_directory_others_can_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let out = Command::new(BIN)
        .arg("--socket")
        .arg(run.join("d.sock"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("group and others"));
}

#[test]
fn it_exits_when_idle_but_not_while_a_job_runs() {
    let mut daemon = Daemon::start(300);
    let mut c = daemon.client();
    let h = c.ok("start", json!({"command": "sleep 303"}))["handle"].clone();
    drop(c);
    // Well past the idle time, with a job running: still serving.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(daemon.alive());
    let mut c = daemon.client();
    c.ok("kill", json!({"handle": h}));
    drop(c);
    eventually("the idle exit", || !daemon.alive());
    assert!(!daemon.socket.exists());
}

#[test]
fn a_killed_daemon_leaves_no_job_running() {
    let mut daemon = Daemon::start(60_000);
    let mut c = daemon.client();
    c.ok("start", json!({"command": "sleep 3041 & sleep 3042"}));
    c.ok("start", json!({"command": "sleep 3043", "options": {"mode": "pipes"}}));
    eventually("the jobs", || with_marker("sleep 304").len() >= 3);
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    eventually("the jobs' deaths", || with_marker("sleep 304").is_empty());
}

#[test]
fn another_user_gets_nothing() {
    if rustix::process::geteuid().as_raw() != 0 {
        eprintln!("skipped: needs root to connect as another uid");
        return;
    }
    let daemon = Daemon::start(60_000);
    let mut c = daemon.client();
    c.ok("start", json!({"command": "sleep 305"}));
    // Opened up after the daemon checked them, so uid 65534 can reach the socket at
    // all: what refuses it must be the daemon's peer check.
    let run = daemon.socket.parent().unwrap();
    for p in [daemon.root().as_path(), run, daemon.socket.as_path()] {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    }
    let script = r#"
import socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(15)
s.connect(sys.argv[1])
b = b'{"id":1,"method":"hello","params":{}}'
try:
    s.sendall(b"\0" + struct.pack(">I", len(b)) + b)
    b = b'{"id":2,"method":"getActiveProcesses","params":{}}'
    s.sendall(b"\0" + struct.pack(">I", len(b)) + b)
except OSError:
    pass
got = b""
try:
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        got += chunk
except OSError:
    pass
print("connected, got", len(got), "bytes")
"#;
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
            script,
        ])
        .arg(&daemon.socket)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.trim(),
        "connected, got 0 bytes",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The daemon still serves its own user.
    assert_eq!(c.ok("getActiveProcesses", json!({})).as_array().unwrap().len(), 1);
}

#[test]
fn stop_ends_the_daemon_and_its_jobs() {
    let mut daemon = Daemon::start(60_000);
    let mut c = daemon.client();
    c.ok("start", json!({"command": "sleep 3061"}));
    eventually("the job", || !with_marker("sleep 3061").is_empty());
    let out = Command::new(BIN)
        .arg("--stop")
        .arg("--socket")
        .arg(&daemon.socket)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Told before it went: a `bye`.
    let bye = c.read().expect("a bye before the close");
    assert_eq!(bye["event"], "bye", "{bye}");
    eventually("the daemon's exit", || !daemon.alive());
    eventually("the job's death", || with_marker("sleep 3061").is_empty());
    let again = Command::new(BIN)
        .arg("--stop")
        .arg("--socket")
        .arg(&daemon.socket)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&again.stderr).contains("no daemon"));
}

#[test]
fn an_unkept_run_still_waiting_dies_with_its_connection() {
    let daemon = Daemon::start(60_000);
    let mut c = daemon.client();
    c.send("run", json!({"command": "sleep 3071", "options": {"keep": false}}));
    c.send("run", json!({"command": "sleep 3072"}));
    eventually("the runs' jobs", || with_marker("sleep 307").len() == 2);
    drop(c);
    eventually("the unkept run's death", || with_marker("sleep 3071").is_empty());
    let mut other = daemon.client();
    let running = |list: &Value| -> Vec<Value> {
        let all = list.as_array().cloned().unwrap_or_default();
        all.into_iter().filter(|p| p["status"] == "running").collect()
    };
    // Its process leaves /proc's command lines as it dies, a little before the daemon
    // has reaped it and published its end: asked until the daemon has.
    let mut list = Value::Null;
    eventually("the unkept run's end in the daemon's list", || {
        list = other.ok("getActiveProcesses", json!({}));
        running(&list).len() == 1
    });
    let left = running(&list);
    assert_eq!(left[0]["command"], "sleep 3072", "{list}");
    other.ok("kill", json!({"handle": left[0]["handle"]}));
}

#[test]
fn a_client_killed_mid_call_loses_only_its_unkept_jobs() {
    let daemon = Daemon::start(60_000);
    // Another process, SIGKILLed while its `waitFor` is pending.
    let script = r#"
import socket, struct, sys, json
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
def send(i, m, p):
    b = json.dumps({"id": i, "method": m, "params": p}).encode()
    s.sendall(b"\0" + struct.pack(">I", len(b)) + b)
send(1, "hello", {})
send(2, "open", {"projectRoot": sys.argv[2], "ioDir": sys.argv[2] + "/io"})
# Spelled apart: this script's own command line must not match the jobs' marker.
send(3, "start", {"command": "sleep " + "3081", "options": {"keep": False}})
send(4, "start", {"command": "sleep " + "3082"})
send(5, "waitFor", {"handle": 1, "options": {"pattern": "never", "timeoutMs": 600000}})
print("sent", flush=True)
sys.stdin.read()
"#;
    let mut client = Command::new("/usr/bin/python3")
        .args(["-c", script])
        .arg(&daemon.socket)
        .arg(daemon.root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = [0u8; 5];
    client.stdout.take().unwrap().read_exact(&mut line).unwrap();
    eventually("the client's jobs", || with_marker("sleep 308").len() == 2);
    client.kill().unwrap();
    client.wait().unwrap();
    eventually("its keep:false job's death", || with_marker("sleep 3081").is_empty());
    let mut c = daemon.client();
    let list = c.ok("getActiveProcesses", json!({}));
    let kept = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["command"] == "sleep 3082")
        .cloned()
        .unwrap();
    assert_eq!(kept["status"], "running");
    assert_eq!(kept["attached"], "none");
    c.ok("kill", json!({"handle": kept["handle"]}));
}

#[test]
fn exit_daemon_spares_running_jobs_unless_told() {
    let mut daemon = Daemon::start(60_000);
    let mut c = daemon.client();
    c.ok("start", json!({"command": "sleep 3101"}));
    let refused = c.call("exitDaemon", json!({}));
    assert_eq!(refused["error"]["code"], "DAEMON_BUSY", "{refused}");
    assert_eq!(refused["error"]["jobs"], 1);
    assert!(daemon.alive());
    c.ok("exitDaemon", json!({"killJobs": true}));
    eventually("the daemon's exit", || !daemon.alive());
    eventually("the job's death", || with_marker("sleep 3101").is_empty());
}

#[test]
fn screens_come_whole_and_packed() {
    let daemon = Daemon::start(60_000);
    let mut c = daemon.client();
    let h = c.ok(
        "start",
        json!({"command": "printf '\\033[31mred\\033[0m plain\\n'; sleep 3111"}),
    )["handle"]
        .clone();
    c.ok(
        "waitFor",
        json!({"handle": h, "options": {"pattern": "plain", "fromStart": true}}),
    );
    let screen = c.ok("getScreen", json!({"handle": h}));
    assert_eq!(screen["lines"][0][0]["text"], "red", "{screen}");
    assert_eq!(screen["lines"][0][0]["fg"], "#800000");
    let packed = c.ok("readScreenPacked", json!({"handle": h}));
    assert!(packed["text"].as_str().unwrap().starts_with("red plain"), "{packed}");
    let colors = packed["colors"].as_array().unwrap();
    assert_eq!(
        colors[packed["runFg"][0].as_u64().unwrap() as usize],
        screen["lines"][0][0]["fg"]
    );
    assert_eq!(packed["runLengths"][0], 3);
    c.ok("kill", json!({"handle": h}));
}

#[test]
fn a_daemon_started_as_the_old_one_exits_takes_over() {
    let mut old = Daemon::start(60_000);
    let mut c = old.client();
    // As a client replacing a daemon of another version: exit, and start one as soon as
    // the old one has said it will (it may still be ending: the new one waits for it).
    let id = c.send("exitDaemon", json!({}));
    assert!(c.reply(id).get("error").is_none());
    let new = spawn_daemon(&old.socket, 60_000);
    eventually("the old daemon's exit", || !old.alive());
    let mut new = Daemon {
        child: new,
        socket: old.socket.clone(),
        _dir: tempfile::tempdir().unwrap(),
    };
    eventually("the new daemon's socket", || UnixStream::connect(&new.socket).is_ok());
    let mut c = Client::connect(&new.socket);
    c.ok("hello", json!({"version": "t", "protocol": 1, "pid": 1}));
    assert!(new.alive());
}

#[test]
fn replies_over_the_request_limit_come_whole_as_in_process() {
    // 20 MB of `"\` lines: a 16 MiB `readOutput` (clamped there as in process,
    // `MAX_READ_BYTES`) is a 32 MiB reply in JSON's escapes, over the 16 MiB a request may
    // be (frame::MAX_REQUEST), and comes whole as the in-process call returns it.
    let daemon = Daemon::start(60_000);
    let mut c = daemon.client();
    let run = c.ok(
        "run",
        json!({"command": r#"yes '"\' | head -c 20000000"#, "options": {"mode": "pipes"}}),
    );
    assert_eq!(run["exitCode"], 0, "{run}");
    let chunk = c.ok(
        "readOutput",
        json!({"handle": run["handle"], "options": {"since": 0, "maxBytes": 32 << 20}}),
    );
    assert_eq!(chunk["text"].as_str().unwrap().len(), 16 << 20);
    assert!(chunk["text"].as_str().unwrap().starts_with("\"\\\n\"\\\n"));
    assert_eq!(chunk["next"], 16 << 20);
    // What a client sends stays held to the request limit: the connection is closed.
    let mut raw = UnixStream::connect(&daemon.socket).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    raw.write_all(&[0, 0x01, 0x00, 0x00, 0x01]).unwrap();
    let mut rest = Vec::new();
    let _ = raw.read_to_end(&mut rest);
    assert!(String::from_utf8_lossy(&rest).contains("over the limit"), "{rest:?}");
}

#[test]
fn a_signal_ends_the_daemon_and_its_jobs_and_removes_its_socket() {
    for signal in [libc::SIGTERM, libc::SIGHUP] {
        let mut daemon = Daemon::start(60_000);
        let mut c = daemon.client();
        c.ok("start", json!({"command": "sleep 3121"}));
        eventually("the job", || !with_marker("sleep 3121").is_empty());
        unsafe { libc::kill(daemon.child.id() as i32, signal) };
        eventually("the daemon's exit", || !daemon.alive());
        assert!(daemon.child.wait().unwrap().success(), "signal {signal}");
        assert!(!daemon.socket.exists());
        eventually("the job's death", || with_marker("sleep 3121").is_empty());
    }
}
