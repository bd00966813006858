//! native-shell-service: the Rust core of a shell service for LLM coding agents.
//!
//! Everything here but `binding` is plain Rust with no knowledge of Node; `binding`
//! (compiled with the `node` feature) is the thin napi layer the JS package loads.

pub mod policy;

#[cfg(feature = "node")]
mod binding;
