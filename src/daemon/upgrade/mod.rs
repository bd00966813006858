//! Live upgrade: `native-shell-daemon --restart` (or a `restartDaemon` request) replaces
//! the running daemon's image with the binary on disk, in place (exec.rs says why in
//! place), keeping its pid, its listening sockets and their backlogs, and its lock.
//!
//! `format` is the versioned hand-over between the images; `exec` the pre-flight of the
//! new binary and the `execve`; `resume` the new image's (taking the descriptors back); `requests` carries
//! a request from a connection to the accept loop; `client` is the `--restart` command.
//! The old image's side (checks, pause, exec, rollback) is src/daemon/restart.rs, beside
//! the daemon's state and faces it stops and starts again; this folder knows nothing of
//! them but the record of the jobs the hand-over carries (src/daemon/carry.rs).
//! docs/daemon.md, "Restarting in place".

pub mod client;
pub mod exec;
pub mod format;
pub mod requests;
pub mod resume;
pub mod test_hold;

pub use exec::{Image, HANDOVER_CHECK_FLAG, HANDOVER_FD_FLAG};
pub use format::Handover;
