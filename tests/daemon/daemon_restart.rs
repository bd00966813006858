//! Live upgrade (src/daemon/upgrade/): `native-shell-daemon --restart` replaces a
//! running daemon's image with the binary on disk, in place. Real daemons run from a
//! copy of the built binary in a temporary directory (so the test can put another
//! binary at that path), with a real unix socket and a real TCP port.
//!
//! The "new version" is a second build stamped with another version
//! (scripts/build-next-daemon.sh; its path in `NATIVE_SHELL_NEXT_DAEMON`). Without it the
//! restart tests run with the same build as the new binary and say so: the version
//! check is the only part they skip.
#![cfg(target_os = "linux")]

use crate::restart_harness as harness;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use harness::*;
use serde_json::json;

#[test]
fn restart_replaces_the_image_in_place_while_the_tcp_port_keeps_accepting() {
    let daemon = Daemon::start(true);
    let addr = daemon.tcp_addr();
    let mut unix = Client::connect(&daemon.socket);
    let before = unix.hello();
    let (new_binary, new_version) = match next_build() {
        Some(next) => next,
        None => {
            eprintln!("NATIVE_SHELL_NEXT_DAEMON unset (scripts/build-next-daemon.sh): the new binary is this build; the version change is not checked");
            (PathBuf::from(BIN), before["version"].as_str().unwrap().to_string())
        }
    };
    daemon.replace_binary(&new_binary);

    // A TCP client polling the port throughout: every connection must be accepted
    // (during the pause it waits in the backlog) and answered, but for one whose
    // request was in flight in the old image at the exec (reset: counted and shown);
    // the slowest answer is the pause as a client sees it.
    let stop = Arc::new(AtomicBool::new(false));
    let prober = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let (mut answered, mut slowest, mut resets, mut failures) = (0u32, Duration::ZERO, Vec::new(), Vec::new());
            while !stop.load(Ordering::Relaxed) {
                match probe(addr) {
                    Probe::Answered(took) => {
                        answered += 1;
                        slowest = slowest.max(took);
                    }
                    Probe::Reset(why) => resets.push(why),
                    Probe::Failed(why) => failures.push(why),
                }
            }
            (answered, slowest, resets, failures)
        })
    };
    std::thread::sleep(Duration::from_millis(200));

    let (ok, said) = daemon.restart();
    assert!(ok, "the restart failed: {said}");
    assert!(said.contains(&format!("-> {new_version}")), "{said}");

    // The unix client was told why its connection ends, then it ended.
    let mut told = None;
    while let Some(message) = unix.read() {
        if message["event"] == "bye" {
            told = Some(message["reason"].as_str().unwrap_or_default().to_string());
        }
    }
    let told = told.expect("no bye before the connection closed");
    assert!(told.contains("restarts in place"), "{told}");

    // The same process, now the new binary's image, on the same socket.
    let after = Client::connect(&daemon.socket).hello();
    assert_eq!(after["pid"], before["pid"], "the pid changed: not in place");
    assert_eq!(after["pid"].as_u64().unwrap(), daemon.child.id() as u64);
    assert_eq!(after["version"].as_str().unwrap(), new_version);
    eventually("the new image's report", || daemon.logged("took over from").is_some());

    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    let (answered, slowest, resets, failures) = prober.join().unwrap();
    assert!(
        failures.is_empty(),
        "the TCP port refused or misanswered a client: {failures:?}"
    );
    // One restart, one exec: at most the one request in flight then is dropped.
    assert!(
        resets.len() <= 1,
        "more than the request in flight was reset: {resets:?}"
    );
    assert!(answered > 2, "only {answered} answers");
    let report = daemon.logged("took over from").unwrap();
    eprintln!(
        "restart: {report}; slowest /health across it: {:.1} ms ({answered} answered, none refused, {} in flight at the exec reset)",
        slowest.as_secs_f64() * 1e3,
        resets.len()
    );
}

#[test]
fn a_new_binary_that_exits_at_once_is_refused_and_the_old_daemon_serves_on() {
    let mut daemon = Daemon::start(false);
    let before = Client::connect(&daemon.socket).hello();
    daemon.replace_binary_with_script("#!/bin/sh\nexit 0\n");
    let (ok, said) = daemon.restart();
    assert!(!ok, "a restart into a binary that exits at once succeeded: {said}");
    assert!(said.contains("DAEMON_RESTART_FAILED"), "{said}");
    assert!(daemon.alive());
    let after = Client::connect(&daemon.socket).hello();
    assert_eq!(after["pid"], before["pid"]);
    assert_eq!(after["version"], before["version"]);
    assert!(daemon.logged("took over from").is_none());
}

#[test]
fn a_binary_that_cannot_read_the_format_is_refused_before_anything_stops() {
    let daemon = Daemon::start(false);
    let mut held = Client::connect(&daemon.socket);
    let before = held.hello();
    // What a build of another hand-over format answers its pre-flight.
    daemon.replace_binary_with_script(
        "#!/bin/sh\ncat >/dev/null\necho 'native-shell-daemon: HANDOVER_FORMAT: the hand-over is in format 1; this binary reads format 2 only' >&2\nexit 1\n",
    );
    let (ok, said) = daemon.restart();
    assert!(!ok, "{said}");
    assert!(said.contains("HANDOVER_FORMAT"), "{said}");
    // The connection that was open throughout is still served: nothing was stopped.
    let again = held.hello();
    assert_eq!(again["pid"], before["pid"]);
}

#[test]
fn a_new_binary_that_fails_its_handover_with_jobs_running_leaves_them_unharmed() {
    let daemon = Daemon::start(false);
    let mut client = Client::connect(&daemon.socket);
    let before = client.hello();
    client.open(&daemon);
    // A REPL in pipes mode: it answers each line it reads.
    let handle = client.start("while read -r line; do echo \"got $line\"; done", "pipes");
    client.input(handle, "one\n");
    client.output_contains(handle, "got one");
    // What a build that cannot read this hand-over answers its pre-flight.
    daemon.replace_binary_with_script(
        "#!/bin/sh\ncat >/dev/null\necho 'native-shell-daemon: HANDOVER_INVALID: the hand-over is broken' >&2\nexit 1\n",
    );
    let (ok, said) = daemon.restart();
    assert!(!ok, "{said}");
    assert!(said.contains("DAEMON_RESTART_FAILED"), "{said}");
    // The same daemon, the same connection, and the job takes input as before.
    let after = client.hello();
    assert_eq!(after["pid"], before["pid"]);
    client.input(handle, "two\n");
    client.output_contains(handle, "got two");
    let listed = client.call("getActiveProcesses", json!({}));
    assert!(listed.to_string().contains("running"), "{listed}");
    client.call("kill", json!({"handle": handle}));
}

#[test]
fn a_binary_swapped_after_its_preflight_is_not_the_one_execed() {
    let mut daemon = Daemon::start(false);
    let before = Client::connect(&daemon.socket).hello();
    // A "new binary" that passes its pre-flight and, while doing so, has another file
    // (one that exits at once) renamed over its own path.
    let bad = daemon.dir.path().join("bin").join("exits");
    forking(|| std::fs::write(&bad, "#!/bin/sh\nexit 0\n")).unwrap();
    let script = format!(
        "#!/bin/sh\ncat >/dev/null\ncp {bad} \"$0.swap\" && chmod 755 \"$0.swap\" && mv \"$0.swap\" \"$0\"\necho 'ready 98.0.0'\n",
        bad = bad.display()
    );
    daemon.replace_binary_with_script(&script);
    let (ok, said) = daemon.restart();
    assert!(!ok, "a restart exec'ed a binary other than the one checked: {said}");
    assert!(said.contains("changed after its pre-flight"), "{said}");
    assert!(daemon.alive());
    let after = Client::connect(&daemon.socket).hello();
    assert_eq!(after["pid"], before["pid"]);
    assert_eq!(after["version"], before["version"]);
}
