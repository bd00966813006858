//! What a daemon is started with (its command line, read by src/bin/native-shell-daemon.rs)
//! and how its run ended.

use std::path::PathBuf;
use std::time::Duration;

use super::http::Listen;
use super::mcp_child::McpServer;
use super::upgrade;

/// No jobs and no clients for this long, and the daemon exits.
pub const DEFAULT_IDLE_EXIT: Duration = Duration::from_secs(600);

pub struct Config {
    pub socket: PathBuf,
    pub idle_exit: Duration,
    /// `--listen` and its companions: the network face (off when `None`). A daemon
    /// that listens does not exit when idle (a pod's process server).
    pub listen: Option<Listen>,
    /// `--exit-with-stdin`: end (killing the jobs) when stdin reaches its end, i.e. when
    /// the process that started the daemon with a pipe is gone (parent.rs).
    pub exit_with_stdin: bool,
    /// `--handover-fd N`: this image replaces the daemon's previous one in place
    /// (src/daemon/upgrade/): it serves the listeners and holds the lock it was handed.
    pub handover: Option<upgrade::Handover>,
    /// `--require-sandbox`: the daemon does not start where no job could be sandboxed
    /// (startup.rs), rather than failing each sandboxed job later.
    pub require_sandbox: bool,
    /// `--mcp-server PROGRAM`: the MCP server `/mcp` forwards to, started and kept
    /// running as this daemon's child (mcp_child.rs). Needs `--listen`.
    pub mcp_server: Option<McpServer>,
}

/// How a daemon's run ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// Idle for `idle_exit`, asked to exit, or signalled.
    Done,
    /// Another daemon holds the socket's lock: it serves.
    AlreadyRunning,
}
