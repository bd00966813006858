//! native-shell-service: the Rust core of a shell service for LLM coding agents.
//!
//! Everything here but `binding` is plain Rust with no knowledge of Node; `binding`
//! (compiled with the `node` feature) is the thin napi layer the JS package loads.
//!
//! Map: `service` (registry, admission, launch, interaction) → `job` (one process, its
//! state and waiters) → `driver` (the reader and writer tasks per job) → `output` (text,
//! screen, raw views, persistence). `spawn` says what runs and where, `kill` ends jobs,
//! `policy` checks commands before they run. `platform` is everything that differs
//! between operating systems (starting processes, PTYs, pipes, exits, finding and
//! ending a job's processes, the watchdog), behind one interface.

pub mod deadlines;
pub mod driver;
pub mod error;
pub mod events;
pub mod handoff;
pub mod history;
pub mod job;
pub mod keys;
pub mod kill;
pub mod limits;
pub mod notify;
pub mod output;
pub mod platform;
pub mod policy;
pub mod request;
pub mod results;
pub mod sandbox;
pub mod service;
pub mod spawn;
pub mod sync;
pub mod wait;

#[cfg(feature = "node")]
mod binding;

/// The per-user daemon: the core behind a unix socket (`src/bin/native-shell-daemon.rs`).
#[cfg(unix)]
pub mod daemon;
