//! A test's hold on the freeze point (tests/daemon_restart_jobs.rs): in a debug build
//! only, a daemon started with `NATIVE_SHELL_TEST_HOLD_FREEZE=PATH` stands still once
//! every job's reader does, says so on stderr, and goes on to the exec when PATH
//! exists. A test makes a job exit exactly then, inside the freeze, which no timing
//! could make sure of.
//!
//! Why a debug build only: a release daemon never reads the variable, so nothing in
//! the environment of a real daemon can stall its restarts.

/// Waits for the test's file, if the variable asks for one (debug builds only).
pub async fn hold_if_asked() {
    #[cfg(debug_assertions)]
    if let Some(path) = std::env::var_os("NATIVE_SHELL_TEST_HOLD_FREEZE") {
        let path = std::path::PathBuf::from(path);
        eprintln!(
            "native-shell-daemon: test hold: the freeze stands until {} exists",
            path.display()
        );
        // Bounded: a test that dies holding it does not stall the daemon for good.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !path.exists() && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
}
