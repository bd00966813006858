//! Live upgrade with jobs (hand-over format 3: src/daemon/carry.rs): a restart in place
//! carries every job running on, with its output, its input and its end. Real daemons
//! and real jobs (tests/common/restart.rs); the new binary is the stamped second build
//! when one was made (scripts/build-next-daemon.sh, `NATIVE_SHELL_NEXT_DAEMON`), else
//! this build again.
#![cfg(target_os = "linux")]

#[path = "common/restart.rs"]
mod harness;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::*;
use serde_json::json;

/// Lines the counter prints: about 0.6 MB, well under the replay's cap.
const COUNT: u64 = 100_000;

fn new_binary(client: &mut Client) -> (PathBuf, String) {
    next_build().unwrap_or_else(|| {
        let version = client.hello()["version"].as_str().unwrap_or_default().to_string();
        eprintln!("NATIVE_SHELL_NEXT_DAEMON unset: restarting into this build again");
        (PathBuf::from(BIN), version)
    })
}

/// Every line of the counter, once and in order.
fn assert_counted(text: &str) {
    let mut expected = 0u64;
    for line in text.lines() {
        let n: u64 = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("line {expected}: {line:?}"));
        assert_eq!(n, expected, "a gap or a duplicate at {expected}");
        expected += 1;
    }
    assert_eq!(expected, COUNT, "lines missing at the end");
}

/// The restart under load: a counter printing fast (pipes), a REPL waiting for input
/// (bash in a terminal), a job that ends while the images change, and a TCP client
/// polling the port throughout.
#[test]
fn a_restart_under_load_carries_every_job_without_a_byte_lost() {
    let daemon = Daemon::start(true);
    let addr = daemon.tcp_addr();
    let mut client = Client::connect(&daemon.socket);
    let before = client.hello();
    client.open(&daemon);
    let (binary, version) = new_binary(&mut client);
    daemon.replace_binary(&binary);

    // Fast, with a pause every 2000 lines so it runs on for seconds across the restart.
    let counter = client.start(
        &format!("i=0; while [ $i -lt {COUNT} ]; do echo $i; i=$((i+1)); [ $((i % 2000)) = 0 ] && sleep 0.1; done"),
        "pipes",
    );
    let repl = client.start("bash --norc --noprofile", "pty");
    client.input(repl, "PS1='ready> '\n");
    client.output_contains(repl, "ready> ");
    let ending = client.start("sleep 0.3; exit 7", "pipes");
    client.output_contains(counter, "\n1000\n");

    let stop = Arc::new(AtomicBool::new(false));
    let prober = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let (mut answered, mut slowest, mut failures) = (0u32, Duration::ZERO, Vec::new());
            while !stop.load(Ordering::Relaxed) {
                match probe(addr) {
                    Probe::Answered(took) => {
                        answered += 1;
                        slowest = slowest.max(took);
                    }
                    // The one request in flight at the exec (restart_replaces_... shows it).
                    Probe::Reset(_) => {}
                    Probe::Failed(why) => failures.push(why),
                }
            }
            (answered, slowest, failures)
        })
    };

    let began = Instant::now();
    let (ok, said) = daemon.restart();
    let took = began.elapsed();
    assert!(ok, "the restart failed: {said}");
    assert!(said.contains(&format!("-> {version}")), "{said}");

    let mut client = Client::connect(&daemon.socket);
    let after = client.hello();
    assert_eq!(after["pid"], before["pid"], "not in place");
    client.open(&daemon);
    let counted = client.result(counter);
    assert_eq!(
        counted["status"], "running",
        "the counter ended before the restart: {counted}"
    );

    // The REPL takes input typed after the restart, in the same shell.
    client.input(repl, "echo $((6 * 7))\n");
    client.output_contains(repl, "42");
    client.input(repl, "exit 3\n");
    assert_eq!(client.until_ended(repl)["exitCode"], 3);

    // The job that ended during the restart: its exit status is read after it.
    let ended = client.until_ended(ending);
    assert_eq!(
        ended["exitCode"], 7,
        "status {} signal {}",
        ended["status"], ended["signal"]
    );

    // The counter: no gap, no duplicate, to its last line.
    let done = client.until_ended(counter);
    assert_eq!(
        done["exitCode"], 0,
        "status {} signal {}",
        done["status"], done["signal"]
    );
    assert_counted(&client.all_output(counter));

    stop.store(true, Ordering::Relaxed);
    let (answered, slowest, failures) = prober.join().unwrap();
    assert!(failures.is_empty(), "the TCP port refused or misanswered: {failures:?}");
    assert!(answered > 0);
    let report = daemon.logged("took over from").unwrap_or_default();
    eprintln!(
        "restart with 3 jobs: {report}; `--restart` took {:.0} ms; slowest /health across it {:.1} ms ({answered} answered)",
        took.as_secs_f64() * 1e3,
        slowest.as_secs_f64() * 1e3
    );
}

/// The same counter, twice restarted, read by offset across both: each image goes on
/// where the last one stood.
#[test]
fn a_counter_read_by_offset_goes_on_where_it_stood_across_two_restarts() {
    let daemon = Daemon::start(false);
    let mut client = Client::connect(&daemon.socket);
    client.hello();
    client.open(&daemon);
    let counter = client.start(
        &format!("i=0; while [ $i -lt {COUNT} ]; do echo $i; i=$((i+1)); [ $((i % 1000)) = 0 ] && sleep 0.05; done"),
        "pty",
    );
    client.output_contains(counter, "\n500");
    let (mut text, mut at) = client.read_output(counter, 0);
    for _ in 0..2 {
        let (ok, said) = daemon.restart();
        assert!(ok, "{said}");
        client = Client::connect(&daemon.socket);
        client.hello();
        client.open(&daemon);
        let (more, next) = client.read_output(counter, at);
        text.push_str(&more);
        at = next;
    }
    client.until_ended(counter);
    loop {
        let (more, next) = client.read_output(counter, at);
        if next == at {
            break;
        }
        text.push_str(&more);
        at = next;
    }
    assert_counted(&text.replace('\r', ""));
    assert!(daemon.logged("handing over 1 job(s)").is_some());
}

/// A job whose output outgrew what the hand-over rebuilds refuses the restart before
/// anything stops, and runs on.
#[test]
fn a_job_too_large_to_carry_refuses_the_restart_and_runs_on() {
    let daemon = Daemon::start(false);
    let mut client = Client::connect(&daemon.socket);
    let before = client.hello();
    client.open(&daemon);
    let flood = client.start(
        "head -c 9000000 /dev/zero | tr '\\0' x; echo; echo flooded; sleep 60",
        "pipes",
    );
    client.output_contains(flood, "flooded");
    daemon.replace_binary(std::path::Path::new(BIN));
    let (ok, said) = daemon.restart();
    assert!(!ok, "{said}");
    assert!(said.contains("DAEMON_RESTART_REFUSED"), "{said}");
    assert!(said.contains("cannot be rebuilt exactly"), "{said}");
    assert_eq!(client.hello()["pid"], before["pid"]);
    assert_eq!(client.result(flood)["status"], "running");
    client.call("kill", json!({"handle": flood}));
}

/// A new image that finds the hand-over wrong after the exec goes back to the previous
/// binary with the very same hand-over: the daemon goes on as it was, its jobs untouched.
/// Here the "new binary" passes its pre-flight and then runs configured for another
/// socket than the one handed over, which the new image refuses.
#[test]
fn a_new_image_that_refuses_the_handover_after_the_exec_rolls_back_with_every_job() {
    let daemon = Daemon::start(false);
    let mut client = Client::connect(&daemon.socket);
    let before = client.hello();
    client.open(&daemon);
    let counter = client.start(
        &format!("i=0; while [ $i -lt {COUNT} ]; do echo $i; i=$((i+1)); [ $((i % 2000)) = 0 ] && sleep 0.1; done"),
        "pipes",
    );
    let repl = client.start("while read -r line; do echo \"got $line\"; done", "pipes");
    client.input(repl, "before\n");
    client.output_contains(repl, "got before");
    let (real, _) = new_binary(&mut client);
    let elsewhere = daemon.dir.path().join("elsewhere.sock");
    daemon.replace_binary_with_script(&format!(
        "#!/bin/sh\ncase \"$*\" in *--handover-check*) exec {real} \"$@\";; esac\nexec {real} \"$@\" --socket {elsewhere}\n",
        real = real.display(),
        elsewhere = elsewhere.display()
    ));
    let (_, said) = daemon.restart();
    eventually("the roll-back", || {
        daemon.logged("rolling back to the previous image").is_some()
    });
    let mut client = Client::connect(&daemon.socket);
    let after = client.hello();
    assert_eq!(after["pid"], before["pid"], "{said}");
    assert_eq!(after["version"], before["version"], "not the previous binary: {said}");
    client.open(&daemon);
    client.input(repl, "after\n");
    client.output_contains(repl, "got after");
    assert_eq!(client.until_ended(counter)["exitCode"], 0);
    assert_counted(&client.all_output(counter));
    client.call("kill", json!({"handle": repl}));
}

/// Input queued for jobs that do not read yet is carried: more than a pipe holds (so
/// the writer stands in the middle of a write) to a pipes job, and to a terminal in raw
/// mode, each followed by a second input queued behind it. Once the jobs read, after
/// the restart, every byte arrives once and in order.
#[test]
fn input_not_yet_read_is_carried_and_arrives_once_in_order() {
    let daemon = Daemon::start(false);
    let mut client = Client::connect(&daemon.socket);
    let before = client.hello();
    client.open(&daemon);
    let (binary, _) = new_binary(&mut client);
    daemon.replace_binary(&binary);
    let go = daemon.dir.path().join("go");
    // Each job reads nothing until `go` exists (made after the restart), then echoes
    // its input until the marker line.
    let wait_then_echo = format!(
        "while [ ! -e {go} ]; do sleep 0.05; done; sed -u '/^end$/q'",
        go = go.display()
    );
    let pipes = client.start(&wait_then_echo, "pipes");
    let pty = client.start(&format!("stty raw -echo; echo raw; {wait_then_echo}"), "pty");
    client.output_contains(pty, "raw");
    let first: String = (0..40_000).map(|i| format!("{i}\n")).collect();
    let second: String = (40_000..40_100).map(|i| format!("{i}\n")).collect();
    for job in [pipes, pty] {
        client.input(job, &first);
        client.input(job, &second);
        client.input(job, "end\n");
    }

    let (ok, said) = daemon.restart();
    assert!(ok, "the restart failed: {said}");
    let log = daemon.logged("handing over 2 job(s)").unwrap_or_default();
    assert!(!log.contains("; 0 with"), "no input was queued at the restart: {log}");
    let mut client = Client::connect(&daemon.socket);
    assert_eq!(client.hello()["pid"], before["pid"], "not in place");
    client.open(&daemon);
    std::fs::write(&go, "").unwrap();

    let expected = format!("{first}{second}end\n");
    for job in [pipes, pty] {
        assert_eq!(client.until_ended(job)["exitCode"], 0);
        let text = client.all_output(job).replace('\r', "");
        let text = text.strip_prefix("raw\n").unwrap_or(&text);
        let echoed = text.trim_end_matches('\n').to_string() + "\n";
        assert!(
            echoed == expected,
            "job {job}: {} bytes echoed, {} sent; first difference at byte {:?}",
            echoed.len(),
            expected.len(),
            echoed.bytes().zip(expected.bytes()).position(|(a, b)| a != b)
        );
    }
    eprintln!("{log}");
}
