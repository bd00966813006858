//! Where the product keeps files of its own that its sandboxed jobs must not read,
//! said once for the daemon (which makes them) and the sandbox (which hides them).

use std::path::PathBuf;

/// The daemon's directory (its socket and lock): `$XDG_RUNTIME_DIR/native-shell-service`,
/// else `<temp dir>/native-shell-service-<uid>` (the clients use the same rule).
pub fn daemon_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("native-shell-service"),
        None => std::env::temp_dir().join(format!("native-shell-service-{}", uid())),
    }
}

#[cfg(unix)]
fn uid() -> u32 {
    rustix::process::getuid().as_raw()
}

#[cfg(not(unix))]
fn uid() -> u32 {
    0
}
