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

/// napi's runtime, replaced by one with a single worker thread. Set here, as the
/// addon is loaded: napi builds its runtime when the module registers.
/// Every task on it (the jobs' readers and writers, kills, each service's deadline
/// timer) waits on an event and does microseconds of work per wake-up: a flood's
/// processing goes to the flood threads (`job/handoff.rs`), removals and searches of
/// `/proc` to the blocking pool, which stays as napi has it. A second worker adds no
/// parallelism those tasks could use, and costs wake-ups: a worker that finds work
/// wakes a parked one to look for more (tokio's hand-over between searching workers,
/// about two per spawn here), and a job's exit taken from the reactor by one worker
/// was at times run by the other. Measured on 2 cores against napi's default of one
/// worker per core, each build in a process of its own: 35 to 47 µs less per
/// `run('true')` and 38 to 44 µs less of the process's CPU (BENCHMARKS.md,
/// "Twenty-fourth session"). What a worker still blocks on, a new job's folder being
/// made (docs/architecture.md, "Threads"), now holds the other jobs' reading for that
/// time. The daemon builds its own runtime (`daemon/run.rs`), where one worker
/// measured no better. If this one cannot be built, or napi starts its runtime again
/// after shutting it down (every Node environment of the process gone), napi builds
/// its default.
#[napi_derive::module_init]
fn one_worker_runtime() {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Ok(runtime) = builder.worker_threads(1).enable_all().build() {
        napi::bindgen_prelude::create_custom_tokio_runtime(runtime);
    }
}
