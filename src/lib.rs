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

#[cfg(unix)]
pub mod driver;
#[cfg(unix)]
pub mod error;
#[cfg(unix)]
pub mod events;
#[cfg(unix)]
pub mod handoff;
#[cfg(unix)]
pub mod history;
#[cfg(unix)]
pub mod job;
#[cfg(unix)]
pub mod keys;
#[cfg(unix)]
pub mod kill;
#[cfg(unix)]
pub mod limits;
#[cfg(unix)]
pub mod notify;
#[cfg(unix)]
pub mod output;
#[cfg(unix)]
pub mod platform;
#[cfg(unix)]
pub mod policy;
#[cfg(unix)]
pub mod request;
#[cfg(unix)]
pub mod results;
#[cfg(unix)]
pub mod service;
#[cfg(unix)]
pub mod spawn;
#[cfg(unix)]
pub mod sync;
#[cfg(unix)]
pub mod wait;

#[cfg(all(unix, feature = "node"))]
mod binding;

// Until the service builds on Windows, its Job Object primitive is built and tested alone.
#[cfg(windows)]
#[path = "platform/windows/job_object.rs"]
pub mod windows_tree;
