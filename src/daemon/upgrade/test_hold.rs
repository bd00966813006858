//! A test's hold on a restart (tests/daemon/daemon_restart_jobs.rs): in a debug build only, a
//! daemon started with `NATIVE_SHELL_TEST_HOLD_FREEZE=PATH` stands still once every
//! job's reader does (before the jobs are written into the hand-over), and one started
//! with `NATIVE_SHELL_TEST_HOLD_EXEC=PATH` once they are written (just before the
//! exec); it says so on stderr and goes on when PATH exists. A test makes a job exit
//! exactly then, which no timing could make sure of.
//!
//! Why a debug build only: a release daemon never reads the variable, so nothing in
//! the environment of a real daemon can stall its restarts.

/// Waits for the test's file, if `variable` names one (debug builds only).
pub async fn hold_if_asked(variable: &str) {
    #[cfg(debug_assertions)]
    if let Some(path) = std::env::var_os(variable) {
        let path = std::path::PathBuf::from(path);
        eprintln!(
            "native-shell-daemon: test hold ({variable}): the restart stands until {} exists",
            path.display()
        );
        // Bounded: a test that dies holding it does not stall the daemon for good.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !path.exists() && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
    #[cfg(not(debug_assertions))]
    let _ = variable;
}
