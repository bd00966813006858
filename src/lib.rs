//! native-shell-service: the Rust core of a shell service for LLM coding agents.
//!
//! Everything here is plain Rust with no knowledge of Node. The thin napi layer the JS
//! package loads is a crate of its own (`src/binding/`, the addon); `daemon` is the
//! second front-end: the same core behind a unix socket, for clients that come and go.
//!
//! Map (docs/architecture.md): `service` owns the jobs (requests, results, history,
//! admission, launch, interaction) → `job` is one job (its process spec in `job::spawn`,
//! its reader and writer tasks in `job::driver`, waits, events, kill) → `output` turns
//! bytes into text, screens and files. `sandbox` is the per-job sandbox as held
//! descriptors and reports; `policy` checks commands before they run; `platform` is
//! everything that differs between operating systems, behind one interface; `base` is
//! what they all share (errors, limits, locks, deadlines).

pub mod base;
pub mod job;
pub mod output;
pub mod platform;
pub mod policy;
pub mod sandbox;
pub mod service;

/// The per-user daemon: the core behind a unix socket (its binary: `src/bin/native-shell-daemon.rs`).
#[cfg(unix)]
pub mod daemon;
