//! A job's exit taken by its reader at the hang-up of its terminal or output, beside
//! the exit ring (src/platform/linux/child.rs, src/platform/linux/exit_ring.rs): the
//! two must never both reap, nor reap another job's process given the same number.
//! Bursts of jobs ending together, some before the ring is asked for their exit and
//! some after (the ring is asked at `RING_AFTER`), each with an exit code of its own:
//! every status is its own job's, and no zombie is left. Alone in its file: the zombie
//! count is of this process's children.

#![cfg(target_os = "linux")]

#[path = "common/zombies.rs"]
mod zombies;
use zombies::zombies_left;

use native_shell_service::job::spawn::Mode;
use native_shell_service::job::JobStatus;
use native_shell_service::service::request::{RunRequest, ServiceConfig};
use native_shell_service::service::Service;

fn service(root: &std::path::Path) -> std::sync::Arc<Service> {
    let config = ServiceConfig {
        project_root: Some(root.to_path_buf()),
        persist_output: Some(false),
        max_jobs: Some(1000),
        keep_finished_jobs: Some(1000),
        ..Default::default()
    };
    std::sync::Arc::new(Service::new(config, tokio::runtime::Handle::current()).unwrap())
}

/// Runs `waves` waves of `per_wave` jobs at once, job `i` running `command(i)` and
/// expected to exit with `i % 250 + 1`.
async fn waves_of_exits(
    svc: &std::sync::Arc<Service>,
    mode: Mode,
    waves: usize,
    per_wave: usize,
    command: fn(usize) -> String,
) {
    for wave in 0..waves {
        let runs: Vec<_> = (0..per_wave)
            .map(|j| {
                let i = wave * per_wave + j;
                let mut req = RunRequest::new(command(i));
                req.mode = mode;
                let svc = svc.clone();
                tokio::spawn(async move { (i, svc.run(req).await) })
            })
            .collect();
        for run in runs {
            let (i, result) = run.await.unwrap();
            let r = result.unwrap();
            let code = (i % 250 + 1) as i32;
            assert_eq!(r.status, JobStatus::Exited, "job {i}: {r:?}");
            assert_eq!(r.exit_code, Some(code), "job {i}: {r:?}");
            assert_eq!(r.error, None, "job {i}: {r:?}");
        }
    }
}

/// Jobs that end at once (their exit taken at the hang-up, the ring never asked) and
/// jobs that end after the ring was asked (both may see the exit): every exit code is
/// the job's own, in both modes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bursts_of_exits_before_and_after_the_ring_is_asked_are_each_their_own() {
    let tmp = tempfile::tempdir().unwrap();
    let svc = service(tmp.path());
    println!("exit watch: {:?}", native_shell_service::platform::exit_watch());
    for mode in [Mode::Pty, Mode::Pipes] {
        waves_of_exits(&svc, mode, 4, 40, |i| format!("exit {}", i % 250 + 1)).await;
        // Past RING_AFTER (10 ms), all at about the same time.
        waves_of_exits(&svc, mode, 4, 40, |i| format!("sleep 0.05; exit {}", i % 250 + 1)).await;
    }
    assert_eq!(zombies_left().await, Vec::<i32>::new(), "zombies left");
}

/// A job whose output closes long before its exit (its exit then comes through the
/// ring, the hang-up's pidfd given up), and one whose exit comes while a background
/// process still holds its output (no hang-up at the exit): both exits are seen, exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exits_apart_from_the_hang_up_are_seen() {
    let tmp = tempfile::tempdir().unwrap();
    let svc = service(tmp.path());
    for mode in [Mode::Pty, Mode::Pipes] {
        let mut req = RunRequest::new("exec >/dev/null 2>&1 </dev/null; sleep 0.3; exit 7");
        req.mode = mode;
        let r = svc.run(req).await.unwrap();
        assert_eq!((r.status, r.exit_code), (JobStatus::Exited, Some(7)), "{r:?}");
        let mut req = RunRequest::new("sleep 0.4 & exit 3");
        req.mode = mode;
        let r = svc.run(req).await.unwrap();
        assert_eq!(r.exit_code, Some(3), "{r:?}");
    }
    // The background `sleep 0.4`s end after their jobs: each is reaped as it ends.
    assert_eq!(zombies_left().await, Vec::<i32>::new(), "zombies left");
}
