//! The napi binding: the only code that knows about Node. Thin by design: convert
//! arguments, call the core, convert results, map errors to stable codes.

mod errors;
mod events;
mod policy;
mod sandbox;
mod screen;
mod service;
mod settle;
mod types;
