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
//! `envd` the E2B services it serves over the same state. `config` is what a daemon is
//! started with, `version` what it says of itself, `run` its run; `restart` replaces its
//! image in place with what `upgrade` provides.

#[cfg(target_os = "linux")]
mod carry;
#[cfg(not(target_os = "linux"))]
#[path = "carry_none.rs"]
mod carry;
mod child_exits;
mod config;
mod conn;
mod dispatch;
mod ended;
mod envd;
pub mod frame;
mod halves;
mod http;
mod latency;
mod mcp_child;
mod outbox;
mod params;
mod parent;
mod peer;
pub mod place;
mod protocol;
mod restart;
mod run;
mod server;
mod session;
mod startup;
mod state;
mod stop;
pub mod upgrade;
mod version;
mod wire;

pub use config::{Config, Ended, DEFAULT_IDLE_EXIT};
pub use envd::decode::{decode_request, Call};
/// The parsing half of POST /files, for its fuzz target.
pub use envd::files::decode_upload;
pub use envd::proto;
pub use http::auth::read_token_file;
pub use http::Listen;
pub use mcp_child::McpServer;
pub use place::default_socket;
pub use protocol::connect::{Code, ConnectError};
pub use run::run;
pub use stop::stop;
pub use version::{stamp_version, version, PROTOCOL, VERSION};
