//! Live upgrade (src/daemon/upgrade/): `native-shell-daemon --restart` replaces a
//! running daemon's image with the binary on disk, in place. Real daemons run from a
//! copy of the built binary in a temporary directory (so the test can put another
//! binary at that path), with a real unix socket and a real TCP port.
//!
//! The "new version" is a second build stamped with another version
//! (scripts/build-next-daemon.sh; its path in `NATIVE_SHELL_NEXT_DAEMON`). Without it the
//! restart tests run with the same build as the new binary and say so: the version
//! check is the only part they skip.
#![cfg(target_os = "linux")]

#[path = "common/stop.rs"]
mod stop;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_native-shell-daemon");

/// Held while this test process writes an executable and while it forks: a child forked
/// while a binary's write descriptor is open holds it until its exec, and running that
/// binary then fails with ETXTBSY ("Text file busy"). The tests run in parallel threads.
static FORKS: Mutex<()> = Mutex::new(());

fn forking<T>(f: impl FnOnce() -> T) -> T {
    let _held = FORKS.lock().unwrap_or_else(|e| e.into_inner());
    f()
}

fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A daemon run from `dir/bin/native-shell-daemon`, its stderr collected line by line
/// (the same pipe across its images).
struct Daemon {
    child: Child,
    binary: PathBuf,
    socket: PathBuf,
    log: Arc<Mutex<Vec<String>>>,
    dir: tempfile::TempDir,
}

impl Daemon {
    fn start(listen: bool) -> Self {
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
    fn replace_binary(&self, from: &Path) {
        let staged = self.dir.path().join("bin").join("staged");
        forking(|| std::fs::copy(from, &staged)).unwrap();
        std::fs::rename(&staged, &self.binary).unwrap();
    }

    fn replace_binary_with_script(&self, script: &str) {
        let staged = self.dir.path().join("bin").join("staged");
        forking(|| std::fs::write(&staged, script)).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::rename(&staged, &self.binary).unwrap();
    }

    fn logged(&self, needle: &str) -> Option<String> {
        self.log.lock().unwrap().iter().find(|l| l.contains(needle)).cloned()
    }

    fn tcp_addr(&self) -> SocketAddr {
        eventually("the HTTP port", || self.logged("listening on http://").is_some());
        let line = self.logged("listening on http://").unwrap();
        line.rsplit("http://").next().unwrap().trim().parse().unwrap()
    }

    /// `native-shell-daemon --restart --socket S` (the tool, not the daemon's binary
    /// path): its exit status and stderr.
    fn restart(&self) -> (bool, String) {
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

    fn alive(&mut self) -> bool {
        stop::running(&mut self.child)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        stop::stop(&mut self.child);
    }
}

struct Client {
    stream: UnixStream,
    next: u64,
}

impl Client {
    fn connect(socket: &Path) -> Self {
        let stream = UnixStream::connect(socket).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        Client { stream, next: 1 }
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
        self.stream.read_exact(&mut head).ok()?;
        let mut body = vec![0u8; u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize];
        self.stream.read_exact(&mut body).ok()?;
        serde_json::from_slice(&body).ok()
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        loop {
            let message = self.read().expect("the daemon closed the connection");
            if message["id"] == id {
                return message;
            }
        }
    }

    fn hello(&mut self) -> Value {
        let hello = self.call(
            "hello",
            json!({"version": "test", "protocol": 1, "pid": std::process::id()}),
        );
        hello["result"].clone()
    }
}

/// How a `/health` probe went.
enum Probe {
    Answered(Duration),
    /// Connected, then reset: a request in flight in the old image at the exec
    /// (docs/daemon.md, "Restarting in place": such requests are dropped).
    Reset(String),
    /// Refused or answered wrongly: what must never happen.
    Failed(String),
}

fn probe(addr: SocketAddr) -> Probe {
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
fn health(stream: &mut TcpStream) -> Result<(), String> {
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
fn next_build() -> Option<(PathBuf, String)> {
    let path = PathBuf::from(std::env::var_os("NATIVE_SHELL_NEXT_DAEMON")?);
    let out = Command::new(&path).arg("--version").output().ok()?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Some((path, version))
}

#[test]
fn restart_replaces_the_image_in_place_while_the_tcp_port_keeps_accepting() {
    let daemon = Daemon::start(true);
    let addr = daemon.tcp_addr();
    let mut unix = Client::connect(&daemon.socket);
    let before = unix.hello();
    let (new_binary, new_version) = match next_build() {
        Some(next) => next,
        None => {
            eprintln!("NATIVE_SHELL_NEXT_DAEMON unset (scripts/build-next-daemon.sh): the new binary is this build; the version change is not checked");
            (PathBuf::from(BIN), before["version"].as_str().unwrap().to_string())
        }
    };
    daemon.replace_binary(&new_binary);

    // A TCP client polling the port throughout: every connection must be accepted
    // (during the pause it waits in the backlog) and answered, but for one whose
    // request was in flight in the old image at the exec (reset: counted and shown);
    // the slowest answer is the pause as a client sees it.
    let stop = Arc::new(AtomicBool::new(false));
    let prober = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let (mut answered, mut slowest, mut resets, mut failures) = (0u32, Duration::ZERO, Vec::new(), Vec::new());
            while !stop.load(Ordering::Relaxed) {
                match probe(addr) {
                    Probe::Answered(took) => {
                        answered += 1;
                        slowest = slowest.max(took);
                    }
                    Probe::Reset(why) => resets.push(why),
                    Probe::Failed(why) => failures.push(why),
                }
            }
            (answered, slowest, resets, failures)
        })
    };
    std::thread::sleep(Duration::from_millis(200));

    let (ok, said) = daemon.restart();
    assert!(ok, "the restart failed: {said}");
    assert!(said.contains(&format!("-> {new_version}")), "{said}");

    // The unix client was told why its connection ends, then it ended.
    let mut told = None;
    while let Some(message) = unix.read() {
        if message["event"] == "bye" {
            told = Some(message["reason"].as_str().unwrap_or_default().to_string());
        }
    }
    let told = told.expect("no bye before the connection closed");
    assert!(told.contains("restarts in place"), "{told}");

    // The same process, now the new binary's image, on the same socket.
    let after = Client::connect(&daemon.socket).hello();
    assert_eq!(after["pid"], before["pid"], "the pid changed: not in place");
    assert_eq!(after["pid"].as_u64().unwrap(), daemon.child.id() as u64);
    assert_eq!(after["version"].as_str().unwrap(), new_version);
    eventually("the new image's report", || daemon.logged("took over from").is_some());

    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    let (answered, slowest, resets, failures) = prober.join().unwrap();
    assert!(
        failures.is_empty(),
        "the TCP port refused or misanswered a client: {failures:?}"
    );
    // One restart, one exec: at most the one request in flight then is dropped.
    assert!(
        resets.len() <= 1,
        "more than the request in flight was reset: {resets:?}"
    );
    assert!(answered > 2, "only {answered} answers");
    let report = daemon.logged("took over from").unwrap();
    eprintln!(
        "restart: {report}; slowest /health across it: {:.1} ms ({answered} answered, none refused, {} in flight at the exec reset)",
        slowest.as_secs_f64() * 1e3,
        resets.len()
    );
}

#[test]
fn a_new_binary_that_exits_at_once_is_refused_and_the_old_daemon_serves_on() {
    let mut daemon = Daemon::start(false);
    let before = Client::connect(&daemon.socket).hello();
    daemon.replace_binary_with_script("#!/bin/sh\nexit 0\n");
    let (ok, said) = daemon.restart();
    assert!(!ok, "a restart into a binary that exits at once succeeded: {said}");
    assert!(said.contains("DAEMON_RESTART_FAILED"), "{said}");
    assert!(daemon.alive());
    let after = Client::connect(&daemon.socket).hello();
    assert_eq!(after["pid"], before["pid"]);
    assert_eq!(after["version"], before["version"]);
    assert!(daemon.logged("took over from").is_none());
}

#[test]
fn a_binary_that_cannot_read_the_format_is_refused_before_anything_stops() {
    let daemon = Daemon::start(false);
    let mut held = Client::connect(&daemon.socket);
    let before = held.hello();
    // What a build of another hand-over format answers its pre-flight.
    daemon.replace_binary_with_script(
        "#!/bin/sh\ncat >/dev/null\necho 'native-shell-daemon: HANDOVER_FORMAT: the hand-over is in format 1; this binary reads format 2 only' >&2\nexit 1\n",
    );
    let (ok, said) = daemon.restart();
    assert!(!ok, "{said}");
    assert!(said.contains("HANDOVER_FORMAT"), "{said}");
    // The connection that was open throughout is still served: nothing was stopped.
    let again = held.hello();
    assert_eq!(again["pid"], before["pid"]);
}

#[test]
fn a_daemon_holding_jobs_refuses_to_restart_and_ends_none() {
    let daemon = Daemon::start(false);
    let mut client = Client::connect(&daemon.socket);
    let before = client.hello();
    let root = daemon.dir.path().to_path_buf();
    let open = client.call("open", json!({"projectRoot": root, "ioDir": root.join("io")}));
    assert!(open["result"]["sessionId"].is_string(), "{open}");
    let started = client.call("start", json!({"command": "sleep 30", "options": {}}));
    let handle = started["result"]["handle"].clone();
    assert!(handle.is_u64(), "{started}");
    daemon.replace_binary(Path::new(BIN));
    let (ok, said) = daemon.restart();
    assert!(!ok, "{said}");
    assert!(said.contains("DAEMON_RESTART_REFUSED"), "{said}");
    let after = client.hello();
    assert_eq!(after["pid"], before["pid"]);
    let listed = client.call("getActiveProcesses", json!({}));
    assert!(
        listed.to_string().contains("running"),
        "the job did not run on: {listed}"
    );
    client.call("kill", json!({"handle": handle}));
}

#[test]
fn a_binary_swapped_after_its_preflight_is_not_the_one_execed() {
    let mut daemon = Daemon::start(false);
    let before = Client::connect(&daemon.socket).hello();
    // A "new binary" that passes its pre-flight and, while doing so, has another file
    // (one that exits at once) renamed over its own path.
    let bad = daemon.dir.path().join("bin").join("exits");
    forking(|| std::fs::write(&bad, "#!/bin/sh\nexit 0\n")).unwrap();
    let script = format!(
        "#!/bin/sh\ncat >/dev/null\ncp {bad} \"$0.swap\" && chmod 755 \"$0.swap\" && mv \"$0.swap\" \"$0\"\necho 'ready 98.0.0'\n",
        bad = bad.display()
    );
    daemon.replace_binary_with_script(&script);
    let (ok, said) = daemon.restart();
    assert!(!ok, "a restart exec'ed a binary other than the one checked: {said}");
    assert!(said.contains("changed after its pre-flight"), "{said}");
    assert!(daemon.alive());
    let after = Client::connect(&daemon.socket).hello();
    assert_eq!(after["pid"], before["pid"]);
    assert_eq!(after["version"], before["version"]);
}
