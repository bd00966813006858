//! The per-user daemon: a second front-end of the core beside the napi
//! binding. It owns jobs for clients that come and go, over a unix socket only its
//! user can use, and answers the same calls with the same results and error codes as
//! the in-process service (docs/architecture.md, "The daemon").
//!
//! `place` finds and guards the socket's directory and takes the lock that makes one
//! daemon per socket; `frame` is the wire's envelope; `wire` the answers as JSON;
//! `state` the services and the daemon-wide handles, `ended` its record of the jobs
//! clients removed (their folders, read by handle later); `conn` what a connection
//! holds and how it answers, `outbox` how its messages leave, `latency` the short
//! scheduler slices its threads ask for; `server` accepts and checks connections; `dispatch` maps each method onto the core's `Service`, reading its
//! arguments with `params`. With `--listen`, `http` is the network face and
//! `envd` the E2B services it serves over the same state.

mod conn;
mod dispatch;
mod ended;
mod envd;
pub mod frame;
mod http;
mod latency;
mod mcp_child;
mod outbox;
mod params;
mod parent;
mod peer;
pub mod place;
mod protocol;
mod server;
mod session;
mod startup;
mod state;
mod stop;
pub mod upgrade;
mod wire;

use std::path::PathBuf;
use std::time::Duration;

pub use envd::decode::{decode_request, Call};
/// The parsing half of POST /files, for its fuzz target.
pub use envd::files::decode_upload;
pub use envd::proto;
pub use http::auth::read_token_file;
pub use http::Listen;
pub use mcp_child::McpServer;
pub use place::default_socket;
pub use protocol::connect::{Code, ConnectError};
pub use stop::stop;

/// The wire protocol's version: a client and a daemon that differ do not talk.
pub const PROTOCOL: u32 = 1;
/// The daemon's version, compared by clients at `hello`.
/// The package's: what [`version`] says unless the binary was stamped.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

static STAMPED: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// The version this daemon reports (`hello`, `--version`, a restart's pre-flight):
/// [`VERSION`], unless its binary was built with `NATIVE_SHELL_BUILD_VERSION` (a release
/// stamp, or the second build scripts/build-next-daemon.sh makes for the restart tests).
/// Stamped in the binary's crate, so a stamped build recompiles the binary only.
pub fn version() -> &'static str {
    STAMPED.get().copied().unwrap_or(VERSION)
}

/// Called once by the binary, first thing.
pub fn stamp_version(version: &'static str) {
    let _ = STAMPED.set(version);
}
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

/// Serves until idle, `exitDaemon` or SIGTERM/SIGINT/SIGHUP; every job is killed on the way
/// out. Blocks the calling thread; makes its own runtimes.
///
/// Two runtimes, so a flood in one job does not delay other clients' round trips: the
/// jobs' (their readers, writers and waits; a flooding job keeps one of its
/// threads busy) and the connections' (this thread: reading requests, answering what is
/// answered at once). A request is read by a thread no job's output keeps busy, as in
/// process, where the caller's own thread makes the call.
pub fn run(config: Config) -> Result<Ended, String> {
    // Before anything is bound: a daemon that must sandbox and cannot ends here, with
    // the true cause, and nothing reports it healthy meanwhile.
    let abilities = startup::Abilities::probe(config.require_sandbox);
    abilities.require_sandbox()?;
    let jobs = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("jobs")
        // The readers answer the round trips (latency.rs).
        .on_thread_start(latency::short_turns)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the jobs' runtime: {e}"))?;
    let connections = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    // This thread reads every request (latency.rs).
    latency::short_turns();
    let ended = connections.block_on(server::serve(config, abilities, jobs.handle().clone()));
    // Whatever is left (a job started as the daemon exits) dies now, not with the
    // watchdog later.
    crate::service::kill_everything_now();
    connections.shutdown_timeout(Duration::from_millis(250));
    jobs.shutdown_timeout(Duration::from_millis(500));
    ended
}
