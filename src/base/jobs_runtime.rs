//! The async runtime the jobs' tasks run on: in process (napi's, replaced as the addon
//! loads: `src/binding/lib.rs`) and in the daemon (its `jobs` runtime: `daemon/run.rs`).
//!
//! One worker thread. Every task on it (the jobs' readers and writers, kills, each
//! service's deadline timer) waits on an event and does microseconds of work per
//! wake-up: a flood's processing goes to the flood threads (`job/handoff.rs`), removals
//! and searches of `/proc` to the blocking pool, which stays as tokio sizes it. A
//! second worker adds no parallelism those tasks could use, and costs wake-ups: a
//! worker that finds work wakes a parked one to look for more (tokio's hand-over
//! between searching workers, about two per spawn here), and a job's exit taken from
//! the reactor by one worker was at times run by the other. Measured on 2 cores
//! against one worker per core (BENCHMARKS.md, "Twenty-fourth session"): in process,
//! each build in a process of its own, 35 to 47 µs less per `run('true')` and 38 to 44
//! µs less of the process's CPU; in the daemon, spawn 1.67 and 1.69 ms against 1.69 and
//! 1.74, the round trip unchanged. What a worker still blocks on, a new job's folder
//! being made (docs/architecture.md, "Threads"), holds the other jobs' reading for
//! that time.

/// A multi-thread runtime with one worker, I/O and timers enabled: the caller names
/// it, adds its hooks and builds it.
pub fn builder() -> tokio::runtime::Builder {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.worker_threads(1).enable_all();
    builder
}
