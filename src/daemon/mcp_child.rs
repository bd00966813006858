//! `--mcp-server PROGRAM`: the daemon starts the MCP server that `/mcp` forwards to as
//! its own child, and starts it again if it dies. This is how a container runs: the
//! daemon is PID 1 (it reaps every orphan of the namespace: src/daemon/server.rs) and
//! Node is below it, never the other way round — Node as PID 1 reaps nobody, and the
//! jobs it kills would stay zombies for the life of the pod.
//!
//! The child is run as `PROGRAM mcp-upstream --listen SOCKET --daemon-socket DAEMON
//! --project-root ROOT [--mcp-arg ...]` (tools/mcp-upstream.ts). Its socket lives in
//! the daemon's own directory (mode 0700, checked by place.rs), so only this user
//! reaches it; the child answers only its parent's pid. The daemon's peer check takes
//! this one child for what it is, not for a job (src/platform/linux/job_peers.rs). Its stdin is a pipe the daemon
//! holds: when the daemon ends, however, the child reads its end and exits.

use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What starts the MCP server.
#[derive(Clone, Debug)]
pub struct McpServer {
    /// `--mcp-server`: the `native-shell-service` command (or anything that serves
    /// `mcp-upstream` the same way).
    pub program: PathBuf,
    /// `--mcp-arg` (repeatable): the MCP tools' options (`--sandbox`, `--allow`, ...).
    pub args: Vec<String>,
}

/// The socket the child serves on: beside the daemon's own socket.
pub fn upstream_socket(daemon_socket: &Path) -> PathBuf {
    daemon_socket.with_file_name("mcp.sock")
}

/// The write end of the running child's stdin: held until the daemon's process ends
/// (replaced, so closed, when a dead child's successor starts).
static STDIN: Mutex<Option<ChildStdin>> = Mutex::new(None);

/// A restart that came soon after the last one waits longer, up to this.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A child that ran this long was healthy: its next restart is immediate.
const HEALTHY_RUN: Duration = Duration::from_secs(60);

/// Starts the child in a thread of its own that waits for it and starts it again when it
/// ends. Returns at once; a child that cannot be started is logged and retried.
pub fn supervise(server: McpServer, daemon_socket: PathBuf, upstream: PathBuf, project_root: Option<PathBuf>) {
    let spawned = std::thread::Builder::new()
        .name("native-shell-mcp-child".into())
        .spawn(move || {
            let mut backoff = Duration::ZERO;
            loop {
                let started = Instant::now();
                match start(&server, &daemon_socket, &upstream, project_root.as_deref()) {
                    Ok(pid) => {
                        // Exited, not reaped: the pid cannot be reused yet, so it stops
                        // being the helper's before anything else can hold it.
                        wait_exited(pid);
                        crate::platform::helper_exited(pid);
                        let status = crate::platform::wait_helper(pid);
                        eprintln!(
                            "native-shell-daemon: the MCP server (pid {pid}) ended ({status:?}); starting it again"
                        );
                    }
                    Err(e) => eprintln!(
                        "native-shell-daemon: cannot start the MCP server {}: {e}",
                        server.program.display()
                    ),
                }
                backoff = if started.elapsed() >= HEALTHY_RUN {
                    Duration::ZERO
                } else {
                    (backoff * 2).clamp(Duration::from_millis(250), MAX_BACKOFF)
                };
                std::thread::sleep(backoff);
            }
        });
    if let Err(e) = spawned {
        eprintln!("native-shell-daemon: cannot watch the MCP server: {e}");
    }
}

fn start(
    server: &McpServer,
    daemon_socket: &Path,
    upstream: &Path,
    project_root: Option<&Path>,
) -> std::io::Result<i32> {
    // A socket left by the previous child (ours: the directory is the daemon's own).
    let _ = std::fs::remove_file(upstream);
    let mut command = Command::new(&server.program);
    command
        .arg("mcp-upstream")
        .arg("--listen")
        .arg(upstream)
        .arg("--daemon-socket")
        .arg(daemon_socket);
    if let Some(root) = project_root {
        command.arg("--project-root").arg(root);
    }
    command
        .args(&server.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit());
    let mut kept = None;
    let pid = crate::platform::launching_helper(|| {
        let mut child = command.spawn()?;
        kept = child.stdin.take();
        let pid = i32::try_from(child.id()).map_err(std::io::Error::other)?;
        // Its connections to the daemon's socket are not a job's (job_peers.rs).
        crate::platform::helper_started(pid);
        Ok::<i32, std::io::Error>(pid)
    })?;
    *crate::base::sync::lock(&STDIN) = kept;
    Ok(pid)
}

/// Blocks until the child `pid` has exited, leaving it a zombie (`WNOWAIT`).
fn wait_exited(pid: i32) {
    loop {
        // SAFETY: waitid on our own child, into a zeroed siginfo_t we own.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let done = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if done == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    }
}
