//! The per-user daemon (issue 32): a second front-end of the core beside the napi
//! binding. It owns jobs for clients that come and go, over a unix socket only its
//! user can use, and answers the same calls with the same results and error codes as
//! the in-process service (docs/architecture.md, "The daemon").
//!
//! `place` finds and guards the socket's directory and takes the lock that makes one
//! daemon per socket; `frame` is the wire's envelope; `wire` the answers as JSON;
//! `state` the services and the daemon-wide handles; `conn` what a connection
//! holds and how it answers; `server` accepts and checks connections; `dispatch` maps each method onto the core's `Service`, reading its
//! arguments with `params`.

mod conn;
mod dispatch;
pub mod frame;
mod params;
pub mod place;
mod server;
mod state;
mod stop;
mod wire;

use std::path::PathBuf;
use std::time::Duration;

pub use place::default_socket;
pub use stop::stop;

/// The wire protocol's version: a client and a daemon that differ do not talk.
pub const PROTOCOL: u32 = 1;
/// The daemon's version, compared by clients at `hello`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// No jobs and no clients for this long, and the daemon exits.
pub const DEFAULT_IDLE_EXIT: Duration = Duration::from_secs(600);

pub struct Config {
    pub socket: PathBuf,
    pub idle_exit: Duration,
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
/// out. Blocks the calling thread; makes its own runtime.
pub fn run(config: Config) -> Result<Ended, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let ended = runtime.block_on(server::serve(config));
    // Whatever is left (a job started as the daemon exits) dies now, not with the
    // watchdog later.
    crate::service::kill_everything_now();
    runtime.shutdown_timeout(Duration::from_millis(500));
    ended
}
