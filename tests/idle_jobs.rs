//! What an idle PTY job holds in process: descriptors (its terminal only, no output
//! file, and no pidfd where the process's exit ring watches its exit:
//! src/platform/linux/exit_ring.rs) whether it has printed or not. Alone in its file:
//! the count of this process's descriptors must not see another test's.

#![cfg(target_os = "linux")]

use std::time::Duration;

use native_shell_service::job::spawn::Mode;
use native_shell_service::service::request::{Launched, RunRequest, ServiceConfig};
use native_shell_service::service::Service;

fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Descriptors of this process open on a job's file under `dir` (the service's own
/// session lease, `.live-<token>`, is held for the service's life, not per job).
fn open_under(dir: &std::path::Path) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.starts_with(dir))
        .filter(|target| {
            !target
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(".live-"))
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_pty_job_holds_its_terminal_and_no_file_nor_pidfd() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let io = root.join(".io");
    let svc = Service::new(
        ServiceConfig {
            project_root: Some(root.clone()),
            io_dir: Some(io.clone()),
            session_id: Some("idle".into()),
            ..Default::default()
        },
        tokio::runtime::Handle::current(),
    )
    .unwrap();
    // The service's own descriptors (its session's lease, the watchdog's pipe, the
    // process's exit ring) first.
    let warm = svc.run(RunRequest::new("true")).await.unwrap();
    assert_eq!(warm.exit_code, Some(0));
    let before = open_descriptors();
    let mut handles = Vec::new();
    // Half print a line first: once quiet, they let their file go as well.
    for i in 0..10 {
        let command = if i % 2 == 0 {
            "exec sleep 600"
        } else {
            "echo ready; exec sleep 600"
        };
        let mut req = RunRequest::new(command);
        req.mode = Mode::Pty;
        let Launched::Running { handle, .. } = svc.launch(req).unwrap() else {
            panic!("sleep did not start");
        };
        handles.push(handle);
    }
    // Quiet for longer than a screen's settling time (500 ms), with room for a loaded
    // machine: the count is read once it has stopped falling.
    let mut held = usize::MAX;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = open_descriptors() - before;
        if now == held && open_under(&io) == 0 {
            break;
        }
        held = now;
    }
    assert_eq!(open_under(&io), 0, "a quiet job holds a descriptor of its files");
    // One descriptor a job, its terminal; two where io_uring is missing or refused
    // here (the pidfd that watches its exit), as the exit watch reports.
    let watch = native_shell_service::platform::exit_watch();
    let per_job = if watch.mechanism == "io_uring" { 1 } else { 2 };
    println!("{held} descriptors for {} idle jobs ({watch:?})", handles.len());
    assert!(
        held <= per_job * handles.len(),
        "{held} descriptors for {} idle jobs ({watch:?})",
        handles.len()
    );
    for handle in handles {
        svc.kill(handle, Duration::from_millis(100)).await.unwrap();
    }
}
