//! A daemon's run: what it can enforce checked first, its two runtimes, the server, and
//! every job killed on the way out.

use std::time::Duration;

use super::config::{Config, Ended};
use super::{child_exits, latency, server, startup};

/// Serves until idle, `exitDaemon` or SIGTERM/SIGINT/SIGHUP; every job is killed on the way
/// out. Blocks the calling thread; makes its own runtimes.
///
/// Two runtimes, so a flood in one job does not delay other clients' round trips: the
/// jobs' (their readers, writers and waits; a flooding job keeps one of its
/// threads busy) and the connections' (this thread: reading requests, answering what is
/// answered at once). A request is read by a thread no job's output keeps busy, as in
/// process, where the caller's own thread makes the call.
pub fn run(config: Config) -> Result<Ended, String> {
    // Before anything is bound: a daemon that must sandbox and cannot ends here, with
    // the true cause, and nothing reports it healthy meanwhile.
    // SIGCHLD is taken by one thread (child_exits.rs): blocked in this thread before
    // any other exists, so in every thread of the daemon.
    child_exits::block()?;
    let abilities = startup::Abilities::probe(config.require_sandbox);
    abilities.require_sandbox()?;
    // The daemon restarts in place with its jobs (upgrade/): their outputs keep the
    // steps that rebuild them in the new image, from the first job, carried or new.
    crate::output::replay::keep_steps_for_restart();
    let jobs = crate::base::jobs_runtime::builder()
        .thread_name("jobs")
        // The readers answer the round trips (latency.rs).
        .on_thread_start(latency::short_turns)
        .build()
        .map_err(|e| format!("cannot start the jobs' runtime: {e}"))?;
    let connections = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    // This thread reads every request (latency.rs).
    latency::short_turns();
    let ended = connections.block_on(server::serve(config, abilities, jobs.handle().clone()));
    // Whatever is left (a job started as the daemon exits) dies now, not with the
    // watchdog later.
    crate::service::kill_everything_now();
    connections.shutdown_timeout(Duration::from_millis(250));
    jobs.shutdown_timeout(Duration::from_millis(500));
    ended
}
