//! The napi binding: the only code that knows about Node. Thin by design: convert
//! arguments, call the core, convert results, map errors to stable codes.

mod env_arg;
mod errors;
mod events;
mod js_shape;
mod object_arg;
mod owner;
mod peer;
mod policy;
mod reply;
mod run_options;
mod sandbox;
mod screen;
mod service;
mod settle;
mod types;
