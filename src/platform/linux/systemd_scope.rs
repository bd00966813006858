//! A cgroup of our own for users whose cgroup is not theirs to write.
//!
//! An SSH login runs in `session-N.scope`, which belongs to root: a job cgroup cannot be
//! made under it, so jobs would fall back to the process tree (`super::cgroup`). On a
//! systemd system the user's own service manager (`user@<uid>.service`) owns a subtree
//! it may hand out: asked over D-Bus for a transient scope with `Delegate=yes` holding
//! this process, it moves us into `…/native-shell-<pid>.scope`, chowned to us, where the
//! job cgroups are then made as usual. This is what `systemd-run --user --scope` asks
//! for, without starting a program in the scope: once per process, before its first
//! job's cgroup is made.
//!
//! Moving the host is visible: it leaves its login session's scope (systemd-logind
//! still ends it at logout through its terminal's hang-up, but no longer by the
//! session's cgroup), and `systemctl --user status` lists the scope. docs/reliability.md,
//! "Containment", says so; `NATIVE_SHELL_SYSTEMD_SCOPE=off` keeps the host where it is.
//!
//! The request is made by `busctl --user call`, the D-Bus client every systemd ships
//! (`systemd-run --user --scope` is the same call with a program to start): a D-Bus
//! library (zbus and its async stack) was a fifth of the whole build's compile time for
//! this one call. busctl finds the bus as a D-Bus library does
//! (`DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`); a machine without it has
//! no systemd to ask either.
//!
//! It runs on a thread of its own and is given [`TIMEOUT`]: a bus that does not answer
//! (a stale `DBUS_SESSION_BUS_ADDRESS`, a stopped manager) costs the first job that
//! long once, never a hang; busctl is then killed and reaped by that thread, so no
//! process is left behind.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

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
            let _ = done.send(start_scope(&request, pid, None));
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
/// Ok once busctl says the manager took the request; an error if it could not be
/// started, failed, or was still running at `TIMEOUT` (then it is killed). `bus` names
/// the session bus's address for busctl (the tests' own bus); `None`: busctl finds it
/// as this process's environment says.
fn start_scope(unit: &str, pid: u32, bus: Option<&std::ffi::OsStr>) -> io::Result<()> {
    let description = format!("native-shell-service jobs of process {pid}");
    let pid = pid.to_string();
    let timeout = format!("--timeout={}", TIMEOUT.as_secs());
    let mut command = Command::new("busctl");
    command
        .args(["--user", "--quiet", &timeout, "call"])
        .args(["org.freedesktop.systemd1", "/org/freedesktop/systemd1"])
        .args(["org.freedesktop.systemd1.Manager", "StartTransientUnit"])
        // name, mode, properties (an array of 4 name/variant pairs), auxiliary units (none).
        .args(["ssa(sv)a(sa(sv))", unit, "fail", "4"])
        .args(["PIDs", "au", "1", &pid])
        .args(["Delegate", "b", "true"])
        .args(["CollectMode", "s", "inactive-or-failed"])
        .args(["Description", "s", &description, "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(bus) = bus {
        command.env("DBUS_SESSION_BUS_ADDRESS", bus);
    }
    let started = Instant::now();
    let mut slot = None;
    // Registered as the daemon's own child (it is a child subreaper that reaps the
    // orphans it adopts: src/platform/unix/reap.rs), so its exit status stays ours.
    let child_pid = crate::platform::launching_helper(|| {
        let child = command.spawn()?;
        let pid = i32::try_from(child.id()).map_err(io::Error::other)?;
        slot = Some(child);
        Ok::<i32, io::Error>(pid)
    })?;
    let mut child = slot.ok_or_else(|| io::Error::other("busctl was not started"))?;
    let status = exit_within(&mut child, started);
    // Reaped by `exit_within` (waited for or killed and waited for): the pid is no
    // longer ours to keep from the orphan reaper.
    crate::platform::unix::reap::reaped(child_pid);
    let status = status?;
    if status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!("busctl: {status}")))
    }
}

/// Waits for `child` until [`TIMEOUT`] after `started`; one still running then is killed
/// and reaped, and the wait is an error.
fn exit_within(child: &mut std::process::Child, started: Instant) -> io::Result<std::process::ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if started.elapsed() < TIMEOUT => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(io::Error::new(io::ErrorKind::TimedOut, "busctl did not answer in time"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    /// A session bus that takes the connection and never says a word (a hung D-Bus
    /// daemon): busctl itself waits for it as long as it stays open (its `--timeout` is
    /// the method call's, not the connection's), so the request is given up at
    /// `TIMEOUT`, busctl killed, and it is an error, not a hang.
    #[test]
    fn a_bus_that_never_answers_is_given_up_and_busctl_killed() {
        if Command::new("busctl").arg("--version").output().is_err() {
            eprintln!("skipped: no busctl on this machine (no systemd to ask either)");
            return;
        }
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("bus");
        let listener = UnixListener::bind(&path).expect("the silent bus's socket");
        // Holds each connection until the test ends; tells the test it came.
        let (seen, came) = mpsc::channel();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming().flatten() {
                held.push(stream);
                let _ = seen.send(());
            }
        });
        let address = format!("unix:path={}", path.display());
        let result = start_scope("native-shell-test.scope", std::process::id(), Some(address.as_ref()));
        let error = result.expect_err("a silent bus cannot have started a scope");
        assert_eq!(error.kind(), io::ErrorKind::TimedOut, "{error}");
        assert!(came.try_recv().is_ok(), "busctl never reached the bus");
        // Killed and reaped: no child of this process is a busctl (running or a zombie).
        let left: Vec<String> = std::fs::read_dir("/proc/self/task")
            .expect("/proc/self/task")
            .flatten()
            .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
            .flat_map(|list| list.split_ascii_whitespace().map(str::to_owned).collect::<Vec<_>>())
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|comm| comm.trim() == "busctl")
            })
            .collect();
        assert!(left.is_empty(), "busctl left behind: {left:?}");
    }
}
