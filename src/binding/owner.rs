//! Who owns a service, and what runs after its owner is gone.
//!
//! The ownership model, for worker threads (docs/reliability.md, "Worker threads"):
//!
//! - A `ShellExecutionService` object owns one `Arc<Service>`. Every promise it returns
//!   is work that owns a clone of that `Arc` (never a borrow of the JS object, which
//!   the environment frees at its teardown whatever is pending), plus a `Pending`
//!   settlement (`settle.rs`). So a runtime thread can never reach freed memory: what
//!   it touches lives as long as the work does.
//! - Each Node environment (the main thread, each worker) has one [`Owner`], kept as
//!   the environment's instance data. Every service made in that environment joins it.
//!   Node finalizes instance data when the environment is torn down (a worker's exit,
//!   `terminate()`, the end of the main thread's loop): the owner then kills its
//!   services' jobs and marks the services ended, so a `run` still starting a job on a
//!   runtime thread kills what it started. Other environments' jobs are untouched.
//! - What runs after that teardown: work already on the runtime finishes (kills, waits
//!   ending at the exits just caused) and its settlements are dropped: napi-rs marks
//!   the environment's threadsafe functions aborted, and a call to an aborted one does
//!   nothing. Nothing calls into the gone environment.
//! - The process's end (`process.exit`, which tears no environment down) is covered by
//!   an `atexit` handler that kills every job of every service (Unix), and by the
//!   watchdog process for deaths that run no code at all.

use std::sync::{Arc, Once};

use napi::Env;

use native_shell_service::service::Owner;

/// The environment's instance data: its services' owner.
struct EnvironmentOwner(Arc<Owner>);

/// The owner of the services made in `env`, created at the first one. Must run on the
/// JS thread.
pub fn environment_owner(env: &Env) -> napi::Result<Arc<Owner>> {
    ensure_process_exit_kill();
    if let Some(existing) = env.get_instance_data::<EnvironmentOwner>()? {
        return Ok(existing.0.clone());
    }
    let owner = Owner::new();
    env.set_instance_data(EnvironmentOwner(owner.clone()), (), |ctx| ctx.value.0.end_all_now())?;
    Ok(owner)
}

/// Registers, once per process, the kill of every job at the C library's exit:
/// `process.exit()` ends the process without tearing the main environment down.
fn ensure_process_exit_kill() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        #[cfg(unix)]
        {
            extern "C" fn at_exit() {
                native_shell_service::service::kill_everything_now();
                native_shell_service::sandbox::JobTmpDir::remove_all_now();
            }
            // SAFETY: registers a function that takes no arguments and does not unwind
            // (`kill_everything_now` sends signals and sets flags; `remove_all_now`
            // removes directories; neither panics).
            // Failing to register leaves the watchdog (platform::watchdog) as the net.
            unsafe {
                libc::atexit(at_exit);
            }
        }
    });
}
