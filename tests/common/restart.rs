//! The live-upgrade tests' harness (tests/daemon/daemon_restart.rs, tests/daemon/daemon_restart_jobs.rs):
//! a real daemon run from a copy of the built binary in a temporary directory (so a
//! test can put another binary at that path), a client of its unix socket, a probe of
//! its TCP port, and the stamped second build (scripts/build-next-daemon.sh).
#![allow(dead_code)]

// tests/common/stop.rs, loaded once by tests/daemon/main.rs.
use crate::stop;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub const BIN: &str = env!("CARGO_BIN_EXE_native-shell-daemon");

/// Held while this test process writes an executable and while it forks: a child forked
/// while a binary's write descriptor is open holds it until its exec, and running that
/// binary then fails with ETXTBSY ("Text file busy"). The tests run in parallel threads.
pub static FORKS: Mutex<()> = Mutex::new(());

pub fn forking<T>(f: impl FnOnce() -> T) -> T {
    let _held = FORKS.lock().unwrap_or_else(|e| e.into_inner());
    f()
}

pub fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A daemon run from `dir/bin/native-shell-daemon`, its stderr collected line by line
/// (the same pipe across its images).
pub struct Daemon {
    pub child: Child,
    pub binary: PathBuf,
    pub socket: PathBuf,
    pub log: Arc<Mutex<Vec<String>>>,
    pub dir: tempfile::TempDir,
}

impl Daemon {
    pub fn start(listen: bool) -> Self {
        Self::start_with(listen, None, &[])
    }

    /// `start`, with `--access-token-file` holding `token` (when given) and `env` set.
    pub fn start_with(listen: bool, token: Option<&str>, env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("bin")).unwrap();
        let binary = dir.path().join("bin").join("native-shell-daemon");
        forking(|| std::fs::copy(BIN, &binary)).unwrap();
        let socket = dir.path().join("run").join("daemon.sock");
        let mut command = Command::new(&binary);
        command.arg("--socket").arg(&socket).arg("--idle-exit-ms").arg("600000");
        if listen {
            command.arg("--listen").arg("127.0.0.1:0");
        }
        if let Some(token) = token {
            let file = dir.path().join("token");
            std::fs::write(&file, token).unwrap();
            command.arg("--access-token-file").arg(file);
        }
        command.envs(env.iter().copied());
        let mut child = forking(|| {
            command
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
        })
        .unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let lines = BufReader::new(child.stderr.take().unwrap());
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let daemon = Daemon {
            child,
            binary,
            socket,
            log,
            dir,
        };
        eventually("the daemon's socket", || UnixStream::connect(&daemon.socket).is_ok());
        daemon
    }

    /// Puts `from` at the daemon's binary path, as an upgrade does (a rename over it).
    pub fn replace_binary(&self, from: &Path) {
        let staged = self.dir.path().join("bin").join("staged");
        forking(|| std::fs::copy(from, &staged)).unwrap();
        std::fs::rename(&staged, &self.binary).unwrap();
    }

    pub fn replace_binary_with_script(&self, script: &str) {
        let staged = self.dir.path().join("bin").join("staged");
        forking(|| std::fs::write(&staged, script)).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::rename(&staged, &self.binary).unwrap();
    }

    pub fn logged(&self, needle: &str) -> Option<String> {
        self.log.lock().unwrap().iter().find(|l| l.contains(needle)).cloned()
    }

    pub fn tcp_addr(&self) -> SocketAddr {
        eventually("the HTTP port", || self.logged("listening on http://").is_some());
        let line = self.logged("listening on http://").unwrap();
        line.rsplit("http://").next().unwrap().trim().parse().unwrap()
    }

    /// `native-shell-daemon --restart --socket S` (the tool, not the daemon's binary
    /// path): its exit status and stderr.
    pub fn restart(&self) -> (bool, String) {
        let child = forking(|| {
            Command::new(BIN)
                .arg("--restart")
                .arg("--socket")
                .arg(&self.socket)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
        })
        .unwrap();
        let out = child.wait_with_output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
    }

    pub fn alive(&mut self) -> bool {
        stop::running(&mut self.child)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if std::thread::panicking() {
            for line in self.log.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                eprintln!("daemon: {line}");
            }
        }
        stop::stop(&mut self.child);
    }
}

/// A connection the protocol's frames go over: the unix socket, or the TCP port's
/// `/daemon` upgrade.
pub trait Duplex: Read + Write + Send {}
impl<T: Read + Write + Send> Duplex for T {}

pub struct Client {
    pub stream: Box<dyn Duplex>,
    pub next: u64,
}

impl Client {
    pub fn connect(socket: &Path) -> Self {
        let stream = UnixStream::connect(socket).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        Client {
            stream: Box::new(stream),
            next: 1,
        }
    }

    /// The protocol over the TCP port, as the TS client's `daemon: { url, token }`
    /// speaks it: `GET /daemon` upgraded to the unix socket's frames, with the token.
    /// `Err`: the upgrade's answer, when it is not 101.
    pub fn over_tcp(addr: SocketAddr, token: &str) -> Result<Self, String> {
        let mut stream = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let head = format!(
            "GET /daemon HTTP/1.1\r\nHost: {addr}\r\nConnection: Upgrade\r\nUpgrade: native-shell-service/1\r\nAuthorization: Bearer {token}\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).map_err(|e| format!("write: {e}"))?;
        // Byte by byte up to the blank line: nothing after it is taken from the stream.
        let mut answer = Vec::new();
        while !answer.ends_with(b"\r\n\r\n") {
            let mut byte = [0u8];
            stream.read_exact(&mut byte).map_err(|e| format!("read: {e}"))?;
            answer.push(byte[0]);
        }
        let answer = String::from_utf8_lossy(&answer).into_owned();
        if !answer.starts_with("HTTP/1.1 101") {
            return Err(answer);
        }
        Ok(Client {
            stream: Box::new(stream),
            next: 1,
        })
    }

    pub fn send(&mut self, method: &str, params: Value) -> u64 {
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
    pub fn read(&mut self) -> Option<Value> {
        let mut head = [0u8; 5];
        self.stream.read_exact(&mut head).ok()?;
        let mut body = vec![0u8; u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize];
        self.stream.read_exact(&mut body).ok()?;
        serde_json::from_slice(&body).ok()
    }

    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        loop {
            let message = self.read().expect("the daemon closed the connection");
            if message["id"] == id {
                return message;
            }
        }
    }

    /// `open` on this connection, with the daemon's folder as project root and ioDir.
    pub fn open(&mut self, daemon: &Daemon) {
        let root = daemon.dir.path().to_path_buf();
        let open = self.call("open", json!({"projectRoot": root, "ioDir": root.join("io")}));
        assert!(open["result"]["sessionId"].is_string(), "{open}");
    }

    pub fn start(&mut self, command: &str, mode: &str) -> u64 {
        let started = self.call("start", json!({"command": command, "options": {"mode": mode}}));
        started["result"]["handle"]
            .as_u64()
            .unwrap_or_else(|| panic!("not started: {started}"))
    }

    pub fn input(&mut self, handle: u64, text: &str) {
        let wrote = self.call("writeToPty", json!({"handle": handle, "data": text}));
        assert!(wrote.get("error").is_none(), "{wrote}");
    }

    /// The job's committed text from `since` on, and where the next read starts.
    pub fn read_output(&mut self, handle: u64, since: u64) -> (String, u64) {
        let read = self.call(
            "readOutput",
            json!({"handle": handle, "since": since, "maxBytes": 1 << 20}),
        );
        let chunk = &read["result"];
        assert!(chunk["next"].is_u64(), "{read}");
        assert_eq!(chunk["omitted"].as_u64().unwrap_or(0), 0, "{read}");
        (
            chunk["text"].as_str().unwrap_or_default().to_string(),
            chunk["next"].as_u64().unwrap(),
        )
    }

    /// Every committed byte of the job's text.
    pub fn all_output(&mut self, handle: u64) -> String {
        let (mut text, mut at) = (String::new(), 0);
        loop {
            let (more, next) = self.read_output(handle, at);
            if next == at {
                return text;
            }
            text.push_str(&more);
            at = next;
        }
    }

    pub fn result(&mut self, handle: u64) -> Value {
        self.call("getResult", json!({"handle": handle}))["result"].clone()
    }

    pub fn output_contains(&mut self, handle: u64, needle: &str) {
        self.output_contains_within(handle, needle, Duration::from_secs(30));
    }

    /// `output_contains`, waiting up to `limit` (a job printing much, on a loaded machine).
    pub fn output_contains_within(&mut self, handle: u64, needle: &str, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            let text = self.call("getProcessOutput", json!({"handle": handle}));
            if text["result"].as_str().is_some_and(|t| t.contains(needle)) {
                return;
            }
            let tail: String = text
                .to_string()
                .chars()
                .rev()
                .take(300)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            assert!(Instant::now() < deadline, "no {needle:?} in ...{tail}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn until_ended(&mut self, handle: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let result = self.result(handle);
            if result["status"] != "running" {
                return result;
            }
            assert!(Instant::now() < deadline, "job {handle} still runs: {result}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn hello(&mut self) -> Value {
        let hello = self.call(
            "hello",
            json!({"version": "test", "protocol": 1, "pid": std::process::id()}),
        );
        hello["result"].clone()
    }
}

/// How a `/health` probe went.
pub enum Probe {
    Answered(Duration),
    /// Connected, then reset: a request in flight in the old image at the exec
    /// (docs/daemon.md, "Restarting in place": such requests are dropped).
    Reset(String),
    /// Refused or answered wrongly: what must never happen.
    Failed(String),
}

pub fn probe(addr: SocketAddr) -> Probe {
    let began = Instant::now();
    let mut stream = match TcpStream::connect(addr) {
        Ok(stream) => stream,
        Err(e) => return Probe::Failed(format!("connect: {e}")),
    };
    match health(&mut stream) {
        Ok(()) => Probe::Answered(began.elapsed()),
        Err(e) if e.starts_with("io:") => Probe::Reset(e),
        Err(e) => Probe::Failed(e),
    }
}

/// `GET /health` on a connected stream.
pub fn health(stream: &mut TcpStream) -> Result<(), String> {
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .map_err(|e| format!("io: write: {e}"))?;
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .map_err(|e| format!("io: read: {e}"))?;
    // Ready: 200 with `{"ready":true,...}` (src/daemon/http/health.rs).
    if answer.starts_with("HTTP/1.1 200") && answer.contains("\"ready\":true") {
        Ok(())
    } else if answer.is_empty() {
        Err("io: closed without an answer".to_string())
    } else {
        Err(format!("answer {answer:?}"))
    }
}

/// The stamped second build, if one was made (scripts/build-next-daemon.sh).
pub fn next_build() -> Option<(PathBuf, String)> {
    let path = PathBuf::from(std::env::var_os("NATIVE_SHELL_NEXT_DAEMON")?);
    let out = Command::new(&path).arg("--version").output().ok()?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Some((path, version))
}
