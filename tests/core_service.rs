//! The core service against real processes in real PTYs and pipes (no Node).

use std::time::Duration;

use native_shell_service::job::spawn::Mode;
use native_shell_service::job::wait::WaitStatus;
use native_shell_service::job::JobStatus;
use native_shell_service::service::request::{InputRequest, Launched, RunRequest, ServiceConfig};
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

fn request(command: &str, mode: Mode) -> RunRequest {
    let mut r = RunRequest::new(command);
    r.mode = mode;
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_in_both_modes_with_exit_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let svc = service(tmp.path());
    for mode in [Mode::Pty, Mode::Pipes] {
        let r = svc
            .run(request("echo hello; echo oops >&2; exit 3", mode))
            .await
            .unwrap();
        assert_eq!(r.status, JobStatus::Exited);
        assert_eq!(r.exit_code, Some(3));
        assert!(r.output.contains("hello"), "{mode:?}: {r:?}");
        if mode == Mode::Pipes {
            assert_eq!(r.stdout, "hello\n");
            assert_eq!(r.stderr, "oops\n");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_byte_before_exit() {
    let tmp = tempfile::tempdir().unwrap();
    let svc = service(tmp.path());
    for mode in [Mode::Pty, Mode::Pipes] {
        for _ in 0..20 {
            let r = svc.run(request("seq 1 20000; exit 3", mode)).await.unwrap();
            assert_eq!(r.exit_code, Some(3));
            let out = svc
                .output(r.handle, native_shell_service::output::View::Text, Some(20))
                .unwrap();
            assert!(out.ends_with("19999\n20000\n"), "{mode:?}: {out:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_repl_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let svc = service(tmp.path());
    let mut req = request("python3 -q", Mode::Pty);
    req.callback_pattern = Some(">>> ".into());
    let r = svc.run(req).await.unwrap();
    assert_eq!(r.status, JobStatus::Running);
    let out = svc
        .send_input(
            r.handle,
            InputRequest {
                input: "print(6*7)".into(),
                append_newline: true,
                pattern: Some(">>> ".into()),
                timeout: Some(Duration::from_secs(10)),
                max_output_size: 4096,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(out.status, WaitStatus::Matched);
    assert!(out.output.contains("42"), "{out:?}");
    let k = svc.kill(r.handle, Duration::from_millis(200)).await.unwrap();
    assert_eq!(k.status, JobStatus::Killed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launch_answers_a_failed_start_with_runs_result() {
    let tmp = tempfile::tempdir().unwrap();
    let svc = service(tmp.path());
    let mut req = request("no-such-program-xyz", Mode::Pipes);
    req.args = Some(vec![]);
    let Launched::Failed(failed) = svc.launch(req.clone()).unwrap() else {
        panic!("a missing program started");
    };
    assert_eq!(failed.status, JobStatus::Failed);
    assert_eq!(failed.pid, None);
    assert_eq!(svc.history(Some(1))[0].handle, failed.handle);
    let error = svc.start(req).unwrap_err();
    assert_eq!(error.code.as_str(), "SPAWN_FAILED");
    assert!(
        error.message.starts_with("failed to start \"no-such-program-xyz\""),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launch_kills_at_its_timeout_and_kill_reports_no_survivors() {
    let tmp = tempfile::tempdir().unwrap();
    let svc = service(tmp.path());
    let mut req = request("exec sleep 30", Mode::Pipes);
    req.timeout = Some(Duration::from_millis(200));
    let Launched::Running { handle, .. } = svc.launch(req).unwrap() else {
        panic!("sleep did not start");
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while svc.is_active(handle) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(svc.result(handle, 100).unwrap().status, JobStatus::TimedOut);

    let mut req = request("trap '' TERM; sleep 30 & echo ready; wait", Mode::Pipes);
    req.callback_pattern = Some("ready".into());
    let r = svc.run(req).await.unwrap();
    let k = svc.kill(r.handle, Duration::from_millis(100)).await.unwrap();
    assert!(k.escalated, "{k:?}");
    assert!(k.survivors.is_empty(), "{k:?}");
}

/// `run_then` (the binding's `run`): the job starts on the caller's thread and the
/// result comes from whichever thread ends the wait: at the exit, at a match, after a
/// timeout's kill, and for a program that cannot start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_then_answers_at_the_exit_a_match_a_timeout_and_a_failed_start() {
    let tmp = tempfile::tempdir().unwrap();
    let svc = std::sync::Arc::new(service(tmp.path()));
    let run = |req: RunRequest| {
        let (tx, rx) = tokio::sync::oneshot::channel();
        svc.clone().run_then(
            req,
            Box::new(move |result| {
                let _ = tx.send(result);
            }),
        );
        rx
    };
    let r = run(request("echo hi; exit 4", Mode::Pty)).await.unwrap().unwrap();
    assert_eq!((r.status, r.exit_code), (JobStatus::Exited, Some(4)), "{r:?}");
    assert!(r.output.contains("hi"), "{r:?}");
    let dir = r.output_dir.clone().expect("the job's folder");
    assert!(std::path::Path::new(&dir).join("stdout.txt").exists(), "{dir}");

    let mut req = request("echo ready; exec sleep 30", Mode::Pty);
    req.callback_pattern = Some("ready".into());
    let r = run(req).await.unwrap().unwrap();
    assert_eq!(r.status, JobStatus::Running, "{r:?}");
    assert_eq!(r.matched.as_deref(), Some("ready"));
    svc.kill(r.handle, Duration::from_millis(100)).await.unwrap();

    let mut req = request("exec sleep 30", Mode::Pipes);
    req.timeout = Some(Duration::from_millis(200));
    let r = run(req).await.unwrap().unwrap();
    assert_eq!(r.status, JobStatus::TimedOut, "{r:?}");

    let mut req = request("no-such-program-xyz", Mode::Pipes);
    req.args = Some(vec![]);
    let r = run(req).await.unwrap().unwrap();
    assert_eq!(r.status, JobStatus::Failed, "{r:?}");
}

/// `kill_noted`: the reason of the kill that ends a running job is kept with it (what a
/// later client, an MCP server started after a restart, reads to tell a cancelled task);
/// a later kill does not rewrite it, a job that ended on its own gets none, and a reason
/// longer than the limit is refused before anything is killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_reason_is_kept_with_the_job_it_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let svc = service(tmp.path());
    let reason_of = |handle: u32| {
        svc.list()
            .into_iter()
            .find(|p| p.handle == handle)
            .and_then(|p| p.kill_reason)
    };

    let mut req = request("echo ready; exec sleep 30", Mode::Pipes);
    req.callback_pattern = Some("ready".into());
    let sleeper = svc.run(req).await.unwrap().handle;
    let too_long = "x".repeat(native_shell_service::service::MAX_KILL_REASON_BYTES + 1);
    let refused = svc
        .kill_noted(sleeper, Duration::from_millis(100), Some(too_long))
        .await
        .unwrap_err();
    assert_eq!(refused.code.as_str(), "INVALID_ARGUMENT");
    assert!(svc.is_active(sleeper), "a refused kill killed nothing");
    assert_eq!(reason_of(sleeper), None);

    let k = svc
        .kill_noted(sleeper, Duration::from_millis(100), Some("task-cancelled".into()))
        .await
        .unwrap();
    assert_eq!(k.status, JobStatus::Killed);
    assert_eq!(reason_of(sleeper).as_deref(), Some("task-cancelled"));
    // A second kill of the ended job names another reason: the first one stays.
    svc.kill_noted(sleeper, Duration::from_millis(100), Some("other".into()))
        .await
        .unwrap();
    assert_eq!(reason_of(sleeper).as_deref(), Some("task-cancelled"));

    // Ended on its own: a kill afterwards says nothing about how it ended.
    let quick = svc.run(request("exit 0", Mode::Pipes)).await.unwrap().handle;
    svc.kill_noted(quick, Duration::from_millis(100), Some("task-cancelled".into()))
        .await
        .unwrap();
    assert_eq!(reason_of(quick), None);
    // A plain kill gives none.
    let mut req = request("echo ready; exec sleep 30", Mode::Pipes);
    req.callback_pattern = Some("ready".into());
    let plain = svc.run(req).await.unwrap().handle;
    svc.kill(plain, Duration::from_millis(100)).await.unwrap();
    assert_eq!(reason_of(plain), None);
}
