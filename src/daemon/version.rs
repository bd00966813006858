//! What a daemon says of itself: its version (stamped or the package's) and its
//! protocol's, compared by clients at `hello` and by a restart's pre-flight.

/// The wire protocol's version: a client and a daemon that differ do not talk.
pub const PROTOCOL: u32 = 1;
/// The daemon's version, compared by clients at `hello`.
/// The package's: what [`version`] says unless the binary was stamped.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

static STAMPED: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// The version this daemon reports (`hello`, `--version`, a restart's pre-flight):
/// [`VERSION`], unless its binary was built with `NATIVE_SHELL_BUILD_VERSION` (a release
/// stamp, or the second build scripts/build-next-daemon.sh makes for the restart tests).
/// Stamped in the binary's crate, so a stamped build recompiles the binary only.
pub fn version() -> &'static str {
    STAMPED.get().copied().unwrap_or(VERSION)
}

/// Called once by the binary, first thing.
pub fn stamp_version(version: &'static str) {
    let _ = STAMPED.set(version);
}

static IMAGE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// Which image of the daemon answers (`hello`'s `image`): the monotonic clock when this
/// image first said it, so each exec of a restart in place answers a larger number and
/// the same image the same one. A restart client compares it before and after: a
/// restart abandoned after it was answered (src/daemon/restart.rs: the hand-over could
/// not be written, the exec failed) leaves the same image serving, and the client must
/// not report a restart that did not happen.
pub fn image() -> u64 {
    *IMAGE.get_or_init(super::upgrade::exec::monotonic_ns)
}
