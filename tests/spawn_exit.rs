//! A PTY job's exit as its reader takes it (src/job/driver.rs), also when the terminal
//! hangs up long before the exit, and a PTY's input larger than the terminal takes at
//! once (the writer waits for room on a registration of its own:
//! src/platform/unix/terminal.rs).

use std::time::Duration;

use native_shell_service::job::spawn::Mode;
use native_shell_service::job::wait::WaitStatus;
use native_shell_service::job::JobStatus;
use native_shell_service::service::request::{InputRequest, RunRequest, ServiceConfig};
use native_shell_service::service::Service;

fn service(root: &std::path::Path) -> Service {
    let config = ServiceConfig {
        project_root: Some(root.to_path_buf()),
        io_dir: Some(root.join(".io")),
        session_id: Some("test".into()),
        ..Default::default()
    };
    Service::new(config, tokio::runtime::Handle::current()).unwrap()
}

fn pty(command: &str) -> RunRequest {
    let mut r = RunRequest::new(command);
    r.mode = Mode::Pty;
    r
}

/// Every exit code and a death by signal come through, with every byte printed
/// before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_codes_and_signals_of_pty_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let svc = service(tmp.path());
    for code in [0, 1, 2, 3, 42, 126, 255] {
        for _ in 0..10 {
            let r = svc.run(pty(&format!("echo last; exit {code}"))).await.unwrap();
            assert_eq!(r.status, JobStatus::Exited, "{r:?}");
            assert_eq!(r.exit_code, Some(code), "{r:?}");
            assert!(r.output.contains("last"), "{r:?}");
        }
    }
    // Ends by a signal with its terminal still open: the hang-up and the exit come
    // together, as for an exit.
    let r = svc.run(pty("echo last; kill -KILL $$")).await.unwrap();
    assert_eq!(r.exit_code, None, "{r:?}");
    assert!(r.signal.is_some(), "{r:?}");
    assert!(r.output.contains("last"), "{r:?}");
    // The terminal hangs up long before the exit (the shell closes it, then sleeps):
    // the exit is still the shell's, taken when it comes.
    let r = svc
        .run(pty("exec >/dev/null 2>&1 </dev/null; sleep 0.3; exit 7"))
        .await
        .unwrap();
    assert_eq!(r.exit_code, Some(7), "{r:?}");
}

/// 300,000 bytes of input to a PTY job whose terminal takes a few KiB at a time: all
/// of it arrives, in order, after the writer has waited for room many times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pty_input_larger_than_the_terminal_takes_arrives_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let svc = service(tmp.path());
    let mut req = pty("stty raw -echo; echo READY; head -c 300000 | cksum; echo DONE");
    req.callback_pattern = Some("READY".into());
    let r = svc.run(req).await.unwrap();
    assert_eq!(r.status, JobStatus::Running, "{r:?}");
    let input: String = (0..300_000u32).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
    let out = svc
        .send_input(
            r.handle,
            InputRequest {
                input: input.clone(),
                append_newline: false,
                pattern: Some("DONE".into()),
                timeout: Some(Duration::from_secs(60)),
                max_output_size: 4096,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(out.status, WaitStatus::Matched, "{out:?}");
    // The same bytes' checksum, from `cksum` outside the terminal.
    let mut cksum = std::process::Command::new("cksum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut cksum.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let digest = cksum.wait_with_output().unwrap();
    let digest = String::from_utf8_lossy(&digest.stdout).trim().to_string();
    assert!(digest.ends_with(" 300000"), "{digest}");
    assert!(out.output.contains(&digest), "{digest} not in {out:?}");
}
