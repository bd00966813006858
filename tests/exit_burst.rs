//! 1,000 jobs ended in one burst (SIGKILL to each, back to back): every exit is seen,
//! with its signal, and no process of them is left a zombie. With the exit ring
//! (src/platform/linux/exit_ring.rs) the completions outnumber its completion queue, so
//! the kernel keeps some aside and the ring must flush them. Alone in its file: the
//! zombie count is of this process's children.

#![cfg(target_os = "linux")]

#[path = "common/zombies.rs"]
mod zombies;
use zombies::zombies_left;

use std::time::{Duration, Instant};

use native_shell_service::job::spawn::Mode;
use native_shell_service::service::request::{Launched, RunRequest, ServiceConfig};
use native_shell_service::service::Service;

const JOBS: usize = 1000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_exits_in_one_burst_are_all_seen_and_reaped() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let svc = Service::new(
        ServiceConfig {
            project_root: Some(root.clone()),
            persist_output: Some(false),
            max_jobs: Some(JOBS + 1),
            keep_finished_jobs: Some(JOBS + 1),
            ..Default::default()
        },
        tokio::runtime::Handle::current(),
    )
    .unwrap();
    println!("exit watch: {:?}", native_shell_service::platform::exit_watch());
    let mut jobs = Vec::with_capacity(JOBS);
    for _ in 0..JOBS {
        let mut req = RunRequest::new("exec sleep 600");
        req.mode = Mode::Pipes;
        let Launched::Running { handle, pid } = svc.launch(req).unwrap() else {
            panic!("sleep did not start");
        };
        jobs.push((handle, pid as i32));
    }
    // Each job's process is `sleep` itself once it has exec'd: wait until all have, so
    // every kill lands on a sleeping process (the burst), not on a starting shell.
    let started = Instant::now();
    for &(_, pid) in &jobs {
        while std::fs::read_link(format!("/proc/{pid}/exe"))
            .map(|exe| !exe.to_string_lossy().contains("sleep"))
            .unwrap_or(true)
        {
            assert!(
                started.elapsed() < Duration::from_secs(300),
                "job {pid} never became sleep"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let burst = Instant::now();
    for &(_, pid) in &jobs {
        // SAFETY: kill with a pid of our own child and a signal number.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    }
    println!("{JOBS} SIGKILLs sent in {:?}", burst.elapsed());
    let deadline = Instant::now() + Duration::from_secs(300);
    while jobs.iter().any(|&(handle, _)| svc.is_active(handle)) {
        assert!(Instant::now() < deadline, "not every exit was seen");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    println!("all {JOBS} exits seen {:?} after the burst", burst.elapsed());
    for &(handle, pid) in &jobs {
        let result = svc.result(handle, 1).unwrap();
        assert_eq!(result.signal, Some(libc::SIGKILL), "job of pid {pid}: {result:?}");
    }
    assert_eq!(zombies_left().await, Vec::<i32>::new(), "zombies left");
}
