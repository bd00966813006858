//! native-shell-service: the Rust core of a shell service for LLM coding agents.
//!
//! Everything here but `binding` is plain Rust with no knowledge of Node; `binding`
//! (compiled with the `node` feature) is the thin napi layer the JS package loads.
//!
//! Map: `service` (registry, limits, history) → `job` (one process, its state and
//! waiters) → `driver` (the reader task per job) → `output` (text, screen, raw views,
//! persistence). `spawn` starts processes, `process_tree` and `kill` end them,
//! `watchdog` covers the host dying, `policy` checks commands before they run.

pub mod driver;
pub mod error;
pub mod history;
pub mod job;
pub mod keys;
pub mod kill;
pub mod output;
pub mod policy;
pub mod process_tree;
pub mod request;
pub mod service;
pub mod spawn;
pub mod wait;
pub mod watchdog;

#[cfg(feature = "node")]
mod binding;
