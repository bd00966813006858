//! A restart in place carries sandboxed jobs (src/job/sandbox_carry.rs): below Landlock
//! ABI 9 their calls to unix sockets are answered by the new image's supervisor on the
//! carried listener, with the carried allowlist; their TMPDIR is the new image's to
//! remove at their end. Real daemons, real sandboxed jobs (python3 inside them), real
//! unix socket servers (tests/common/restart.rs).
#![cfg(target_os = "linux")]

use crate::busy_socket;
use crate::restart_harness as harness;

use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use busy_socket::{blocked_in, Busy};
use harness::*;
use serde_json::{json, Value};

/// The job: a small command loop on its stdin. `connect N` and `denied N` connect once
/// to the allowed and the other socket; `loop` connects to the allowed one over and
/// over on a thread of its own until `stop`, which prints how many it made and how
/// many failed; `tmp` writes and reads back a file in its TMPDIR.
const JOB: &str = r#"
import errno, os, socket, sys, threading
allowed, denied = sys.argv[1], sys.argv[2]
def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        s.sendall(b'ping')
        reply = s.recv(16)
        return 'ok' if reply == b'pong' else 'reply:%r' % reply
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    finally:
        s.close()
state = {'made': 0, 'failed': [], 'stop': False}
def loop():
    while not state['stop']:
        got = connect(allowed)
        state['made'] += 1
        if got != 'ok':
            state['failed'].append(got)
worker = None
print('ready', flush=True)
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == 'connect':
        print('connect%s=%s' % (words[1], connect(allowed)), flush=True)
    elif words[0] == 'denied':
        print('denied%s=%s' % (words[1], connect(denied)), flush=True)
    elif words[0] == 'loop':
        worker = threading.Thread(target=loop)
        worker.start()
        print('looping', flush=True)
    elif words[0] == 'tmp':
        path = os.path.join(os.environ['TMPDIR'], 'note%s' % words[1])
        with open(path, 'w') as f:
            f.write('kept')
        with open(path) as f:
            print('tmp%s=%s %s' % (words[1], f.read(), os.environ['TMPDIR']), flush=True)
    elif words[0] == 'stop':
        state['stop'] = True
        worker.join()
        print('made=%d failed=%d %s' % (state['made'], len(state['failed']), state['failed'][:3]), flush=True)
        break
"#;

/// A unix socket server answering `pong` to each connection; counts them.
fn server(path: &Path) -> Arc<AtomicU64> {
    let listener = UnixListener::bind(path).unwrap();
    let count = Arc::new(AtomicU64::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            counted.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut buf = [0u8; 4];
                if stream.read_exact(&mut buf).is_ok() {
                    let _ = stream.write_all(b"pong");
                }
            });
        }
    });
    count
}

/// Whether this machine supervises unix sockets (Landlock below ABI 9, seccomp's
/// listener free): what `sandbox.unixSockets` reports for a job.
fn supervised(report: &Value) -> bool {
    report["unixSockets"] == "supervised"
}

/// The jobs' project: beside the daemon's output folder, not around it (a sandbox
/// whose jobs may write the ioDir is refused).
fn project(daemon: &Daemon) -> PathBuf {
    daemon.dir.path().join("project")
}

fn open(client: &mut Client, daemon: &Daemon) {
    let root = project(daemon);
    let _ = std::fs::create_dir(&root);
    let io = daemon.dir.path().join("io");
    let open = client.call("open", json!({"projectRoot": root, "ioDir": io}));
    assert!(open["result"]["sessionId"].is_string(), "{open}");
    // Run as another user in a delegated cgroup (`unprivileged_in_a_delegated_cgroup`):
    // the jobs must be held in cgroups there, not in some weaker containment.
    if let Ok(expected) = std::env::var("NSS_EXPECT_CONTAINMENT") {
        assert_eq!(open["result"]["containment"], expected.as_str(), "{open}");
    }
}

/// The job's `sandbox` in `getActiveProcesses`.
fn listed_sandbox(client: &mut Client, handle: u64) -> Value {
    let listed = client.call("getActiveProcesses", json!({}));
    let entries = listed["result"].as_array().cloned().unwrap_or_default();
    entries
        .into_iter()
        .find(|p| p["handle"] == handle)
        .map(|p| p["sandbox"].clone())
        .unwrap_or_else(|| panic!("job {handle} not listed: {listed}"))
}

struct Setup {
    daemon: Daemon,
    client: Client,
    allowed: PathBuf,
    denied: PathBuf,
    served: Arc<AtomicU64>,
    _sockets: tempfile::TempDir,
}

fn setup() -> Setup {
    let daemon = Daemon::start(false);
    let mut client = Client::connect(&daemon.socket);
    client.hello();
    open(&mut client, &daemon);
    // Outside the project (which the jobs may write: sockets there are theirs).
    let sockets = tempfile::tempdir().unwrap();
    let (allowed, denied) = (sockets.path().join("allowed.sock"), sockets.path().join("denied.sock"));
    let served = server(&allowed);
    server(&denied);
    std::fs::write(project(&daemon).join("job.py"), JOB).unwrap();
    Setup {
        daemon,
        client,
        allowed,
        denied,
        served,
        _sockets: sockets,
    }
}

fn start_sandboxed(client: &mut Client, daemon: &Daemon, allowed: &Path, denied: &Path) -> u64 {
    let command = format!(
        "exec python3 -u {} {} {}",
        project(daemon).join("job.py").display(),
        allowed.display(),
        denied.display()
    );
    let started = client.call(
        "start",
        json!({"command": command, "options": {"mode": "pipes", "sandbox": {"unixSockets": [allowed]}}}),
    );
    let handle = started["result"]["handle"]
        .as_u64()
        .unwrap_or_else(|| panic!("not started: {started}"));
    client.output_contains(handle, "ready");
    handle
}

/// The restart, into the second build when one was made.
fn restart(setup: &mut Setup) {
    let binary = next_build().map(|(path, _)| path).unwrap_or_else(|| PathBuf::from(BIN));
    setup.daemon.replace_binary(&binary);
    let (ok, said) = setup.daemon.restart();
    assert!(ok, "the restart failed: {said}");
    setup.client = Client::connect(&setup.daemon.socket);
    setup.client.hello();
    open(&mut setup.client, &setup.daemon);
}

/// A sandboxed job connecting in a loop across the restart sees no error; it reaches
/// the allowed socket after as before, not the other one; its TMPDIR works after and
/// goes at its end; its report is the same; a job started after has the same rules.
#[test]
fn a_sandboxed_job_runs_on_across_the_restart_its_calls_answered_by_the_new_image() {
    let mut setup = setup();
    let (allowed, denied) = (setup.allowed.clone(), setup.denied.clone());
    let job = start_sandboxed(&mut setup.client, &setup.daemon, &allowed, &denied);
    let before = setup.client.result(job);
    let report = before["sandbox"].clone();
    assert!(report.is_object(), "not sandboxed: {before}");
    let listed_before = listed_sandbox(&mut setup.client, job);
    assert!(listed_before.is_object(), "{listed_before}");
    let c = &mut setup.client;
    c.input(job, "connect 1\n");
    c.output_contains(job, "connect1=ok");
    c.input(job, "tmp 1\n");
    c.output_contains(job, "tmp1=kept");
    c.input(job, "loop\n");
    c.output_contains(job, "looping");
    let served = setup.served.clone();
    let at_restart = served.load(Ordering::SeqCst);
    eventually("connections before the restart", || {
        served.load(Ordering::SeqCst) > at_restart + 20
    });

    restart(&mut setup);
    let after = setup.client.result(job);
    assert_eq!(after["status"], "running", "{after}");
    assert_eq!(after["sandbox"], report, "the job's sandbox report changed");
    assert_eq!(
        listed_sandbox(&mut setup.client, job),
        listed_before,
        "the list's report changed"
    );

    // The loop goes on: connections answered by the new image's supervisor.
    let resumed_at = served.load(Ordering::SeqCst);
    eventually("connections after the restart", || {
        served.load(Ordering::SeqCst) > resumed_at + 20
    });
    let c = &mut setup.client;
    c.input(job, "connect 2\n");
    c.output_contains(job, "connect2=");
    c.input(job, "denied 2\n");
    c.output_contains(job, "denied2=");
    c.input(job, "tmp 2\n");
    c.output_contains(job, "tmp2=kept");
    let tmpdir = PathBuf::from(report["tmpdir"].as_str().unwrap_or_default());
    // The file written before the restart: the same directory, not a new one.
    assert!(tmpdir.join("note1").exists(), "the TMPDIR was not the same one after");
    c.input(job, "stop\n");
    c.output_contains(job, "made=");
    let text = c.call("getProcessOutput", json!({"handle": job}))["result"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(field("connect2="), "ok", "{text}");
    if supervised(&report) {
        assert_eq!(field("denied2="), "EACCES", "{text}");
    }
    let tally = field("made=");
    eprintln!(
        "sandbox {} (unixSockets {}); the loop across the restart: made={tally}",
        report["mechanism"], report["unixSockets"]
    );
    assert!(
        tally.contains("failed=0"),
        "a connect failed across the restart: {tally}"
    );
    assert_eq!(Path::new(&field("tmp2=kept ")), tmpdir, "{text}");

    let ended = c.until_ended(job);
    assert_eq!(ended["exitCode"], 0, "{ended}");
    eventually("the TMPDIR removed at the job's end", || !tmpdir.exists());

    // A job started after the restart: the same allowlist, the same refusal.
    let later = start_sandboxed(c, &setup.daemon, &allowed, &denied);
    c.input(later, "connect 3\n");
    c.input(later, "denied 3\n");
    c.output_contains(later, "denied3=");
    let text = c.call("getProcessOutput", json!({"handle": later}))["result"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(text.contains("connect3=ok"), "{text}");
    if supervised(&report) {
        assert!(text.contains("denied3=EACCES"), "{text}");
    }
    let later_report = c.result(later)["sandbox"].clone();
    assert_eq!(later_report["unixSockets"], report["unixSockets"]);
    assert_eq!(later_report["network"], report["network"]);
    c.input(later, "loop\nstop\n");
    c.until_ended(later);
}

/// A job's call the supervisor is still making when the restart comes (a connect to a
/// server that does not accept) refuses the restart rather than lose it: a call taken
/// and not answered before the exec would never be answered. The job runs on, its call
/// answered once the server accepts; the next restart goes through.
#[test]
fn a_call_still_being_made_refuses_the_restart_and_is_answered_after() {
    let mut setup = setup();
    let busy_path = setup._sockets.path().join("busy.sock");
    let busy = Busy::bind(&busy_path);
    let denied = setup.denied.clone();
    let job = start_sandboxed(&mut setup.client, &setup.daemon, &busy_path, &denied);
    if !supervised(&setup.client.result(job)["sandbox"]) {
        eprintln!("skipped: unix sockets are not supervised here (Landlock ABI 9 confines them)");
        return;
    }
    setup.client.input(job, "connect 1\n");
    // The call taken: a supervisor thread of the daemon blocked in the connect (the
    // kernel's wait for room in the server's backlog).
    let daemon_pid = setup.daemon.child.id();
    eventually("the supervisor blocked in the job's connect", || {
        blocked_in(daemon_pid, "unix_wait_for_peer")
    });
    let binary = next_build().map(|(path, _)| path).unwrap_or_else(|| PathBuf::from(BIN));
    setup.daemon.replace_binary(&binary);
    let (ok, said) = setup.daemon.restart();
    assert!(!ok, "the restart went through with a call being made");
    assert!(
        said.contains("DAEMON_RESTART_FAILED") || said.contains("unix socket"),
        "{said}"
    );
    eprintln!("refused as it should: {}", said.trim());

    let mut client = Client::connect(&setup.daemon.socket);
    client.hello();
    open(&mut client, &setup.daemon);
    busy.accept_all();
    client.output_contains(job, "connect1=ok");
    setup.client = client;
    restart(&mut setup);
    setup.client.input(job, "connect 2\n");
    setup.client.output_contains(job, "connect2=ok");
    setup.client.input(job, "loop\nstop\n");
    setup.client.until_ended(job);
}

/// A service opened with a sandbox of its own (every job's unless a run says
/// otherwise) is carried, its sandbox with it by descriptor (a directory its spec names
/// replaced meanwhile changes nothing: src/sandbox/resolved_carry.rs's test shows the
/// rules come from the directory held); its job runs on, supervised as before.
#[test]
fn a_sandboxed_service_is_carried_with_its_sandbox_as_it_was_made() {
    let mut setup = setup();
    let (allowed, denied) = (setup.allowed.clone(), setup.denied.clone());
    // Reopened as a sandboxed service: `write` names a directory of the project.
    let root = project(&setup.daemon);
    std::fs::create_dir_all(root.join("out")).unwrap();
    let mut client = Client::connect(&setup.daemon.socket);
    client.hello();
    let sandbox = json!({"unixSockets": [allowed], "write": ["out"], "readOnly": true});
    let open_sandboxed = |client: &mut Client| {
        let io = setup.daemon.dir.path().join("io");
        let opened = client.call("open", json!({"projectRoot": root, "ioDir": io, "sandbox": sandbox}));
        assert!(opened["result"]["sessionId"].is_string(), "{opened}");
    };
    open_sandboxed(&mut client);
    let start = |client: &mut Client| -> u64 {
        let command = format!(
            "exec python3 -u {} {} {}",
            root.join("job.py").display(),
            allowed.display(),
            denied.display()
        );
        let started = client.call("start", json!({"command": command, "options": {"mode": "pipes"}}));
        let handle = started["result"]["handle"]
            .as_u64()
            .unwrap_or_else(|| panic!("not started: {started}"));
        client.output_contains(handle, "ready");
        handle
    };
    let job = start(&mut client);
    let report = client.result(job)["sandbox"].clone();
    assert_eq!(report["readOnly"], true, "{report}");
    client.input(job, "loop\n");
    client.output_contains(job, "looping");

    // Someone swaps `out` for another directory meanwhile: the record carries the
    // one the sandbox holds, and the new image checks it got that one.
    let out = root.join("out");
    std::fs::rename(&out, root.join("out-before")).unwrap();
    std::fs::create_dir(&out).unwrap();

    setup.client = client;
    let binary = next_build().map(|(path, _)| path).unwrap_or_else(|| PathBuf::from(BIN));
    setup.daemon.replace_binary(&binary);
    let (ok, said) = setup.daemon.restart();
    assert!(ok, "the restart failed: {said}");
    let mut client = Client::connect(&setup.daemon.socket);
    client.hello();
    open_sandboxed(&mut client);
    let after = client.result(job);
    assert_eq!(after["status"], "running", "{after}");
    assert_eq!(after["sandbox"], report, "the job's sandbox report changed");
    client.input(job, "connect 1\ndenied 1\nstop\n");
    client.output_contains(job, "made=");
    let text = client.call("getProcessOutput", json!({"handle": job}))["result"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(text.contains("connect1=ok"), "{text}");
    assert!(text.contains("failed=0"), "{text}");
    if supervised(&report) {
        assert!(text.contains("denied1=EACCES"), "{text}");
    }
}

/// The cgroup2 hierarchy's mount point (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a
/// hybrid system), if there is one.
fn cgroup2_root() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mounts.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(' ').collect();
        let dash = fields.iter().position(|f| *f == "-")?;
        (fields.get(dash + 1) == Some(&"cgroup2")).then(|| PathBuf::from(fields[4]))
    })
}

/// The first test again, as uid 65534 inside a cgroup subtree delegated to it (what
/// systemd's Delegate=yes or a container runtime gives a user), as the product's users
/// run it: this test binary runs itself under `setpriv`. Skipped (saying why) where it
/// cannot be: not root, no setpriv, no cgroup2 hierarchy root can add to.
#[test]
fn unprivileged_in_a_delegated_cgroup() {
    const USER: u32 = 65534;
    // SAFETY: no arguments.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root, to become uid {USER} and to make the cgroup");
        return;
    }
    let Ok(setpriv) = which("setpriv") else {
        eprintln!("skipped: setpriv (util-linux) is not installed");
        return;
    };
    let Some(cgroups) = cgroup2_root() else {
        eprintln!("skipped: no cgroup2 hierarchy here");
        return;
    };
    let cg = cgroups.join(format!("nss-restart-sandbox-{}", std::process::id()));
    if std::fs::create_dir(&cg).is_err() {
        eprintln!("skipped: root cannot add a cgroup to {}", cgroups.display());
        return;
    }
    let chown = |path: &Path| std::os::unix::fs::chown(path, Some(USER), Some(USER));
    for entry in std::fs::read_dir(&cg).unwrap().flatten() {
        chown(&entry.path()).unwrap();
    }
    chown(&cg).unwrap();
    let home = tempfile::tempdir().unwrap();
    chown(home.path()).unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut env = vec![
        format!("PATH={}", std::env::var("PATH").unwrap_or_default()),
        format!("HOME={}", home.path().display()),
        "NSS_EXPECT_CONTAINMENT=cgroup".to_string(),
    ];
    if let Ok(next) = std::env::var("NATIVE_SHELL_NEXT_DAEMON") {
        env.push(format!("NATIVE_SHELL_NEXT_DAEMON={next}"));
    }
    let status = forking(|| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(r#"echo $$ > "$0/cgroup.procs" && exec "$@""#)
            .arg(&cg)
            .arg(&setpriv)
            .args([
                format!("--reuid={USER}"),
                format!("--regid={USER}"),
                "--clear-groups".into(),
            ])
            .arg("env")
            .arg("-i")
            .args(&env)
            .arg(&exe)
            .args([
                "--exact",
                "daemon_restart_sandbox::a_sandboxed_job_runs_on_across_the_restart_its_calls_answered_by_the_new_image",
                "--nocapture",
            ])
            .status()
    })
    .unwrap();
    // Nothing of the run may be left: its daemon and jobs ended with it. The daemon's
    // watchdog (src/platform/linux/watchdog.rs) sweeps after the daemon's exit by
    // design, so it and the commands it runs may still be at work; nothing else may.
    let others: Vec<String> = processes_in(&cg)
        .into_iter()
        .filter(|p| !p.of_watchdog())
        .map(|p| p.to_string())
        .collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !processes_in(&cg).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let lingering: Vec<String> = processes_in(&cg).iter().map(|p| p.to_string()).collect();
    if !lingering.is_empty() {
        let _ = std::fs::write(cg.join("cgroup.kill"), "1");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    for dir in cgroup_subtree(&cg).iter().rev() {
        let _ = std::fs::remove_dir(dir);
    }
    assert!(status.success(), "the run as uid {USER} failed: {status}");
    assert!(others.is_empty(), "processes left in the run's cgroup: {others:?}");
    assert!(
        lingering.is_empty(),
        "the watchdog's sweep did not end in 30 s: {lingering:?}"
    );
}

/// A cgroup and every cgroup below it, parents first.
fn cgroup_subtree(root: &Path) -> Vec<PathBuf> {
    let mut subtree = vec![root.to_path_buf()];
    let mut i = 0;
    while i < subtree.len() {
        let children: Vec<PathBuf> = std::fs::read_dir(&subtree[i])
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        subtree.extend(children);
        i += 1;
    }
    subtree
}

/// A process found in a cgroup: its command line and its parent's.
struct Member {
    pid: String,
    cmdline: String,
    parent_cmdline: String,
}

impl Member {
    /// The watchdog's shell, a subshell of it, or a command one of those runs.
    fn of_watchdog(&self) -> bool {
        [&self.cmdline, &self.parent_cmdline]
            .iter()
            .any(|c| c.contains("native-shell-watchdog"))
    }
}

impl std::fmt::Display for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} [{}]", self.pid, self.cmdline)
    }
}

fn processes_in(root: &Path) -> Vec<Member> {
    let cmdline = |pid: &str| {
        let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        String::from_utf8_lossy(&raw).replace('\0', " ")
    };
    let parent = |pid: &str| {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("PPid:"))
            .map(|p| p.trim().to_string())
            .unwrap_or_default()
    };
    cgroup_subtree(root)
        .iter()
        .flat_map(|dir| {
            let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            procs.split_whitespace().map(str::to_string).collect::<Vec<_>>()
        })
        .map(|pid| Member {
            cmdline: cmdline(&pid),
            parent_cmdline: cmdline(&parent(&pid)),
            pid,
        })
        .collect()
}

fn which(program: &str) -> Result<PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .ok_or(())
}

/// A sandboxed job that may write a project with `.git` holds the git guard: the
/// guard's record (taken before the job started) and the job's hold are carried, so
/// a hook the job plants after the restart is put back at its end, by the new image,
/// against the record the old one took, and named in the job's report.
#[test]
fn the_git_guard_is_carried_and_still_guards() {
    let mut setup = setup();
    let root = project(&setup.daemon);
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n\trepositoryformatversion = 0\n").unwrap();
    let started = setup.client.call(
        "start",
        json!({
            "command": "read line; printf '#!/bin/sh\\necho planted\\n' > .git/hooks/pre-commit; echo >> .git/config '[alias] x = !sh'; echo done-$line",
            "options": {"mode": "pipes", "sandbox": true, "cwd": root}
        }),
    );
    let job = started["result"]["handle"]
        .as_u64()
        .unwrap_or_else(|| panic!("not started: {started}"));
    let report = setup.client.result(job)["sandbox"].clone();
    assert_eq!(report["readOnly"], false, "{report}");

    restart(&mut setup);
    let c = &mut setup.client;
    c.input(job, "after\n");
    let ended = c.until_ended(job);
    assert_eq!(ended["exitCode"], 0, "{ended}");
    let text = c.call("getProcessOutput", json!({"handle": job}))["result"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(text.contains("done-after"), "{text}");
    let restored = ended["sandbox"]["restored"].to_string();
    assert!(restored.contains(".git/hooks/pre-commit"), "{ended}");
    assert!(restored.contains(".git/config"), "{ended}");
    assert!(
        !root.join(".git/hooks/pre-commit").exists(),
        "the planted hook is still there"
    );
    let config = std::fs::read_to_string(root.join(".git/config")).unwrap();
    assert!(!config.contains("alias"), "the config was not put back: {config}");
}
