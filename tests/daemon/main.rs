//! The daemon as its clients meet it, in one test binary: every file here runs the
//! built `native-shell-daemon` as a process of its own (its socket, its HTTP face, its
//! restart in place), so none depends on this process's own state, and one binary
//! links once where each file linked one of its own (CONTRIBUTING.md, "what a run
//! costs"). Tests that hold process-wide state (a seccomp filter on the test process,
//! a count of its children) stay in files of their own in tests/.
//!
//! One file's tests: `cargo test --test daemon remote_files::` (the module's name is
//! the file's).

#[cfg(target_os = "linux")]
#[path = "../common/busy_socket.rs"]
mod busy_socket;
#[cfg(unix)]
#[path = "../remote/harness.rs"]
mod remote_harness;
#[cfg(target_os = "linux")]
#[path = "../common/restart.rs"]
mod restart_harness;
#[cfg(unix)]
#[path = "../common/stop.rs"]
mod stop;

mod daemon;
mod daemon_pod;
mod daemon_restart;
mod daemon_restart_envd;
mod daemon_restart_jobs;
mod daemon_restart_pause;
mod daemon_restart_sandbox;
mod remote_browser;
mod remote_files;
mod remote_floods;
mod remote_mcp;
mod remote_process;
mod remote_process_errors;
mod remote_watch;
