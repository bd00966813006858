//! The daemon as a pod's long-lived process server: the one start-up line that says what
//! it enforces, `/health` with those modes, `--require-sandbox` failing at start where
//! Landlock is refused (by a real seccomp filter installed on the daemon, as a container
//! runtime's profile would), and no zombie left after many killed job trees (the daemon
//! is a child subreaper; in a container it is PID 1: scripts/test-pod.sh checks that).
#![cfg(target_os = "linux")]

use crate::stop;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_native-shell-daemon");
/// Generous: both cores may be busy.
const PATIENCE: Duration = Duration::from_secs(60);
const TOKEN: &str = "pod-test-token";

/// A daemon on a socket and port of its own; its stderr lines arrive on `lines`.
struct Daemon {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    dir: tempfile::TempDir,
}

impl Daemon {
    /// `refuse_landlock`: the daemon runs under a seccomp filter that answers ENOSYS to
    /// `landlock_create_ruleset`, as Docker's and podman's default profiles do on
    /// kernels they do not know, and as a hardened profile may on any.
    fn spawn(extra: &[&str], refuse_landlock: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(&root).unwrap();
        let token = dir.path().join("token");
        std::fs::write(&token, TOKEN).unwrap();
        let mut cmd = Command::new(BIN);
        cmd.arg("--socket")
            .arg(dir.path().join("run").join("daemon.sock"))
            .args(["--listen", "127.0.0.1:0", "--project-root"])
            .arg(&root)
            .arg("--access-token-file")
            .arg(&token)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if refuse_landlock {
            // SAFETY: between fork and exec: two prctl calls on a filter built before.
            unsafe { cmd.pre_exec(refuse_landlock_create_ruleset) };
        }
        let mut child = cmd.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Daemon {
            child,
            lines,
            seen: Vec::new(),
            dir,
        }
    }

    /// The first stderr line that starts with `prefix`, waiting for it.
    fn line(&mut self, prefix: &str) -> String {
        if let Some(line) = self.seen.iter().find(|l| l.starts_with(prefix)) {
            return line.clone();
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no line {prefix:?} in {:#?}", self.seen));
            self.seen.push(line.clone());
            if line.starts_with(prefix) {
                return line;
            }
        }
    }

    fn addr(&mut self) -> SocketAddr {
        let line = self.line("native-shell-daemon: listening on http://");
        line.trim_start_matches("native-shell-daemon: listening on http://")
            .parse()
            .unwrap()
    }

    fn socket(&self) -> std::path::PathBuf {
        self.dir.path().join("run").join("daemon.sock")
    }

    /// The exit status, waiting for it; the stderr lines are all in `seen` after.
    fn exit_status(&mut self) -> std::process::ExitStatus {
        let status = self.child.wait().unwrap();
        while let Ok(line) = self.lines.recv_timeout(PATIENCE) {
            self.seen.push(line);
        }
        status
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        stop::stop(&mut self.child);
    }
}

/// Installs a seccomp filter on the calling process: `landlock_create_ruleset` fails
/// with ENOSYS, every other call is allowed. Runs between fork and exec (no allocation).
fn refuse_landlock_create_ruleset() -> std::io::Result<()> {
    const RET_ERRNO: u32 = 0x0005_0000;
    const RET_ALLOW: u32 = 0x7fff_0000;
    let nr = libc::SYS_landlock_create_ruleset as u32;
    let program = [
        // A = seccomp_data.nr (offset 0)
        libc::sock_filter {
            code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
            jt: 0,
            jf: 0,
            k: 0,
        },
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: nr,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: RET_ERRNO | libc::ENOSYS as u32,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: RET_ALLOW,
        },
    ];
    let prog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: prctl with a filter that outlives the call.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &prog as *const libc::sock_fprog,
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// `GET /health` over HTTP/1.1: the status and the JSON body.
fn health(addr: SocketAddr, token: Option<&str>) -> (u16, Value) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let auth = token.map(|t| format!("x-access-token: {t}\r\n")).unwrap_or_default();
    write!(
        stream,
        "GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n{auth}connection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let status = text[9..12].parse().unwrap();
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

/// A POST of JSON-RPC to `/mcp` with the token: the status, the headers' text and the
/// JSON message of the answer (plain JSON or the first `data:` line of an event stream).
fn mcp_post(addr: SocketAddr, session: Option<&str>, message: &Value) -> (u16, String, Value) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let body = message.to_string();
    let session = session
        .map(|s| format!("mcp-session-id: {s}\r\nmcp-protocol-version: 2025-03-26\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {TOKEN}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\n{session}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text);
    let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let json = rest
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .or_else(|| rest.lines().find(|l| l.starts_with('{')))
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    (status, head.to_string(), json)
}

fn landlock_here() -> bool {
    // SAFETY: the documented version probe.
    unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        ) >= 1
    }
}

#[test]
fn the_start_up_line_and_health_say_the_modes() {
    let mut daemon = Daemon::spawn(&[], false);
    let addr = daemon.addr();
    let line = daemon.line("native-shell-daemon: modes:");
    println!("{line}");
    for word in [
        "containment=",
        "reaper=subreaper",
        "exit-watch=",
        "sandbox=",
        "landlock-abi=",
        "token=true",
        "mcp=false",
    ] {
        assert!(line.contains(word), "{word} missing: {line}");
    }
    assert!(line.contains(&format!("listen=http://{addr}")), "{line}");
    assert_eq!(
        daemon.seen.iter().filter(|l| l.contains("modes:")).count(),
        1,
        "{:#?}",
        daemon.seen
    );
    if landlock_here() {
        assert!(line.contains("sandbox=landlock"), "{line}");
    }

    // Without the token: ready, nothing more.
    let (status, body) = health(addr, None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"ready": true}));
    // With it: the modes found at start.
    let (status, body) = health(addr, Some(TOKEN));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["ready"], true, "{body}");
    let modes = &body["modes"];
    assert!(modes["containment"].is_string(), "{body}");
    assert_eq!(modes["reaper"], "subreaper", "{body}");
    assert!(modes["exitWatch"]["mechanism"].is_string(), "{body}");
    assert_eq!(modes["listen"]["token"], true, "{body}");
    assert_eq!(modes["sandbox"]["available"], landlock_here(), "{body}");
}

#[test]
fn require_sandbox_where_landlock_is_refused_fails_at_start_with_the_cause() {
    let mut daemon = Daemon::spawn(&["--require-sandbox"], true);
    let status = daemon.exit_status();
    let said = daemon.seen.join("\n");
    println!("{said}");
    assert_eq!(status.code(), Some(1), "{said}");
    assert!(said.contains("SANDBOX_UNAVAILABLE"), "{said}");
    // The true cause: the process's seccomp filter, not the kernel.
    assert!(said.contains("seccomp filter"), "{said}");
    assert!(!said.contains("listening on"), "it must not have served: {said}");
}

#[test]
fn without_require_sandbox_a_refused_landlock_is_reported_not_fatal() {
    let mut daemon = Daemon::spawn(&[], true);
    let addr = daemon.addr();
    let line = daemon.line("native-shell-daemon: modes:");
    assert!(line.contains("sandbox=unavailable"), "{line}");
    assert!(line.contains("seccomp filter"), "{line}");
    let (status, body) = health(addr, Some(TOKEN));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["modes"]["sandbox"]["available"], false, "{body}");
    assert!(
        body["modes"]["sandbox"]["reason"]
            .as_str()
            .unwrap_or("")
            .contains("seccomp"),
        "{body}"
    );
}

#[test]
fn require_sandbox_where_landlock_works_starts() {
    if !landlock_here() {
        eprintln!("skipped: no Landlock on this kernel");
        return;
    }
    let mut daemon = Daemon::spawn(&["--require-sandbox"], false);
    let line = daemon.line("native-shell-daemon: modes:");
    assert!(line.contains("sandbox-required=true"), "{line}");
    daemon.addr();
}

/// A client of the daemon's unix socket (frames: a 0 byte, a big-endian length, JSON).
struct Client {
    stream: UnixStream,
    next: u64,
}

impl Client {
    fn open(socket: &Path, root: &Path) -> Self {
        let stream = UnixStream::connect(socket).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        let mut client = Client { stream, next: 1 };
        client.ok(
            "hello",
            json!({"version": "test", "protocol": 1, "pid": std::process::id()}),
        );
        client.ok("open", json!({"projectRoot": root, "ioDir": root.join("io")}));
        client
    }

    fn ok(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let body = json!({"id": id, "method": method, "params": params}).to_string();
        let mut frame = vec![0u8];
        frame.extend((body.len() as u32).to_be_bytes());
        frame.extend(body.as_bytes());
        self.stream.write_all(&frame).unwrap();
        loop {
            let mut head = [0u8; 5];
            self.stream.read_exact(&mut head).unwrap();
            let mut body = vec![0u8; u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize];
            self.stream.read_exact(&mut body).unwrap();
            let message: Value = serde_json::from_slice(&body).unwrap();
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }
}

/// The zombies whose parent is `pid`.
fn zombie_children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command's ")": state, ppid.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let mut fields = after.split(' ');
        let (state, ppid) = (fields.next(), fields.next().and_then(|p| p.parse::<u32>().ok()));
        if state == Some("Z") && ppid == Some(pid) {
            found.push(child);
        }
    }
    found
}

/// 1,000 jobs, each a tree whose processes outlive their parents (a background child,
/// a double fork that re-parents a grandchild to the daemon at once), killed in batches:
/// every process that ends up the daemon's child is reaped, none stays a zombie.
#[test]
fn no_zombie_after_a_thousand_killed_job_trees() {
    const JOBS: usize = 1000;
    const BATCH: usize = 50;
    let mut daemon = Daemon::spawn(&[], false);
    daemon.addr();
    let pid = daemon.child.id();
    let root = daemon.dir.path().join("root");
    let mut client = Client::open(&daemon.socket(), &root);
    let started = Instant::now();
    let mut most = 0;
    for _ in 0..JOBS / BATCH {
        let handles: Vec<Value> = (0..BATCH)
            .map(|_| {
                client.ok(
                    "start",
                    json!({"command": "sleep 300 & (sleep 300 &) ; sleep 300 & echo up; wait", "options": {"mode": "pipes"}}),
                )["handle"]
                    .clone()
            })
            .collect();
        for handle in &handles {
            client.ok(
                "waitFor",
                json!({"handle": handle, "options": {"pattern": "up", "fromStart": true}}),
            );
        }
        for handle in handles {
            client.ok("kill", json!({"handle": handle}));
        }
        most = most.max(zombie_children(pid).len());
    }
    let deadline = Instant::now() + PATIENCE;
    let mut left = zombie_children(pid);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left = zombie_children(pid);
    }
    println!(
        "{JOBS} job trees started and killed in {:?}; at most {most} zombies seen between batches, {} at the end",
        started.elapsed(),
        left.len()
    );
    assert!(left.is_empty(), "zombies of the daemon: {left:?}");
}

/// `--mcp-server`: the daemon starts the MCP server (the package's Node command) as its
/// own child, `/health` says ready once it accepts, and its tools reach the daemon: the
/// daemon's peer check takes that one child for its helper, not for a job (a job's
/// connection is refused: tests/daemon/daemon.rs).
#[test]
fn the_mcp_server_runs_as_the_daemons_child_and_its_tools_reach_the_daemon() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let program = root.join("bin").join("native-shell-service.js");
    let node = Command::new("node")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !node || !root.join("dist").join("native-shell-service.cjs").exists() {
        eprintln!("skipped: needs node and dist/ (npm run build:ts)");
        return;
    }
    let program = program.to_string_lossy().into_owned();
    let mut daemon = Daemon::spawn(&["--mcp-server", &program], false);
    let addr = daemon.addr();
    let line = daemon.line("native-shell-daemon: modes:");
    assert!(line.contains("mcp=true"), "{line}");
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (status, body) = health(addr, Some(TOKEN));
        if status == 200 && body["mcpReady"] == true {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "/mcp's server never became ready: {status} {body}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, head, answer) = mcp_post(
        addr,
        None,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "daemon_pod", "version": "1"}}}),
    );
    assert_eq!(status, 200, "{head}\n{answer}");
    let session = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no session id: {head}"));
    mcp_post(
        addr,
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    let (status, _, answer) = mcp_post(
        addr,
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "run_shell_command", "arguments": {"command": "echo helper-$((6*7))"}}}),
    );
    assert_eq!(status, 200, "{answer}");
    assert!(answer.to_string().contains("helper-42"), "{answer}");
    // The server is the daemon's child.
    let children =
        std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", daemon.child.id())).unwrap_or_default();
    assert!(!children.trim().is_empty(), "the daemon has no child");
}

/// The package's command, `native-shell-service daemon --listen ... --sandbox` (the
/// workstation's layout: Node starts the daemon), where Landlock is refused: it passes
/// `--require-sandbox` on, so it exits at start with the cause rather than reporting
/// healthy and failing the first MCP client's call.
#[test]
fn the_commands_sandbox_flag_makes_the_daemon_fail_at_start_without_landlock() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let node = Command::new("node")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !node || !root.join("dist").join("native-shell-service.cjs").exists() {
        eprintln!("skipped: needs node and dist/ (npm run build:ts)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, TOKEN).unwrap();
    let mut cmd = Command::new("node");
    cmd.arg(root.join("bin").join("native-shell-service.js"))
        .arg("daemon")
        .arg("--socket")
        .arg(dir.path().join("run").join("daemon.sock"))
        .args(["--listen", "127.0.0.1:0", "--access-token-file"])
        .arg(&token)
        .arg("--project-root")
        .arg(dir.path())
        .arg("--sandbox")
        .env("NATIVE_SHELL_DAEMON_BIN", BIN)
        .stdin(Stdio::null());
    // SAFETY: as in `Daemon::spawn`; the filter is inherited by the daemon Node starts.
    unsafe { cmd.pre_exec(refuse_landlock_create_ruleset) };
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    // A daemon that started anyway serves until killed: that is the failure.
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() >= deadline {
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let said = reader.join().unwrap();
    println!("{said}");
    let status = status.unwrap_or_else(|| panic!("it started and served without a sandbox: {said}"));
    assert_eq!(status.code(), Some(1), "{said}");
    assert!(
        said.contains("SANDBOX_UNAVAILABLE") && said.contains("seccomp filter"),
        "{said}"
    );
    assert!(!said.contains("listening on"), "{said}");
}
