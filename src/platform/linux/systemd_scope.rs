//! A cgroup of our own for users whose cgroup is not theirs to write.
//!
//! An SSH login runs in `session-N.scope`, which belongs to root: a job cgroup cannot be
//! made under it, so jobs would fall back to the process tree (`super::cgroup`). On a
//! systemd system the user's own service manager (`user@<uid>.service`) owns a subtree
//! it may hand out: asked over D-Bus for a transient scope with `Delegate=yes` holding
//! this process, it moves us into `…/native-shell-<pid>.scope`, chowned to us, where the
//! job cgroups are then made as usual. This is what `systemd-run --user --scope` asks
//! for, without starting a program on the spawn path.
//!
//! Moving the host is visible: it leaves its login session's scope (systemd-logind
//! still ends it at logout through its terminal's hang-up, but no longer by the
//! session's cgroup), and `systemctl --user status` lists the scope. docs/reliability.md,
//! "Containment", says so; `NATIVE_SHELL_SYSTEMD_SCOPE=off` keeps the host where it is.
//!
//! The exchange runs on a thread of its own and is given [`TIMEOUT`]: a bus that does
//! not answer (a stale `DBUS_SESSION_BUS_ADDRESS`, a stopped manager) costs the first
//! job that long once, never a hang.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use zbus::zvariant::Value;

/// Set to `off` to never ask the user's service manager for a scope.
pub const SWITCH: &str = "NATIVE_SHELL_SYSTEMD_SCOPE";

/// How long the whole request (connect, call, the move being seen) may take.
const TIMEOUT: Duration = Duration::from_secs(3);

/// Asks the user's service manager to move this process into a delegated scope of its
/// own; returns our new cgroup (as `/proc/self/cgroup` names it) once the move is seen,
/// or `None` (no session bus, no systemd, refused, too slow).
pub fn move_into_delegated_scope(own_cgroup: impl Fn() -> Option<PathBuf>) -> Option<PathBuf> {
    if std::env::var_os(SWITCH).is_some_and(|v| v == "off") || !session_bus_present() {
        return None;
    }
    let pid = std::process::id();
    let unit = format!("native-shell-{pid}.scope");
    let (done, answer) = mpsc::channel();
    let request = unit.clone();
    let spawned = std::thread::Builder::new()
        .name("native-shell-scope".into())
        .spawn(move || {
            let _ = done.send(start_scope(&request, pid));
        });
    if spawned.is_err() {
        return None;
    }
    let started = Instant::now();
    // A thread that does not answer in time is left to finish alone: it owns its data.
    answer.recv_timeout(TIMEOUT).ok()?.ok()?;
    // The manager moves us when its job runs, which may be after the call returns.
    while started.elapsed() < TIMEOUT {
        if let Some(own) = own_cgroup().filter(|own| own.file_name().is_some_and(|n| *n == *unit)) {
            return Some(own);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}

/// Whether a session bus may be there: its address is set, or the standard socket
/// exists in the runtime directory (what systemd's user manager provides).
fn session_bus_present() -> bool {
    std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some()
        || std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|dir| Path::new(&dir).join("bus").exists())
}

/// `StartTransientUnit` on the user's manager: the scope holds `pid`, is delegated to
/// us (so we may make cgroups below it), and is collected once empty, even if failed.
fn start_scope(unit: &str, pid: u32) -> zbus::Result<()> {
    let bus = zbus::blocking::Connection::session()?;
    let description = format!("native-shell-service jobs of process {pid}");
    let properties: Vec<(&str, Value<'_>)> = vec![
        ("PIDs", Value::from(vec![pid])),
        ("Delegate", Value::from(true)),
        ("CollectMode", Value::from("inactive-or-failed")),
        ("Description", Value::from(description.as_str())),
    ];
    let auxiliary: Vec<(&str, Vec<(&str, Value<'_>)>)> = Vec::new();
    bus.call_method(
        Some("org.freedesktop.systemd1"),
        "/org/freedesktop/systemd1",
        Some("org.freedesktop.systemd1.Manager"),
        "StartTransientUnit",
        &(unit, "fail", properties, auxiliary),
    )?;
    Ok(())
}
