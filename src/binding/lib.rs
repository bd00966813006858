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

/// napi's runtime, replaced by the jobs' runtime (`src/base/jobs_runtime.rs`: one worker
/// thread). Set here, as the addon is loaded: napi builds its runtime when the module
/// registers. If this one cannot be built, or napi starts its runtime again after
/// shutting it down (every Node environment of the process gone), napi builds its
/// default.
#[napi_derive::module_init]
fn jobs_runtime() {
    if let Ok(runtime) = native_shell_service::base::jobs_runtime::builder().build() {
        napi::bindgen_prelude::create_custom_tokio_runtime(runtime);
    }
}
