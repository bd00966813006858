//! Job folders past a service's `keep` are recycled (src/output/spare_dir.rs): a later
//! job's folder is an earlier one's, renamed and emptied, and every job's files hold
//! its own output only; nothing of the spares is left after `shutdown`.

use std::collections::HashSet;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use native_shell_service::service::request::{RunRequest, ServiceConfig};
use native_shell_service::service::Service;

/// What tells a file from another made at its name: device, inode and birth time.
fn identity(path: &Path) -> (u64, u64, SystemTime) {
    let meta = fs::symlink_metadata(path).unwrap();
    (meta.dev(), meta.ino(), meta.created().unwrap())
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Waits (generously: the removal thread runs at the lowest priority) until `ready`.
async fn eventually(mut ready: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while !ready() {
        if start.elapsed() > Duration::from_secs(120) {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_jobs_folder_is_an_earlier_ones_emptied_and_holds_only_its_output() {
    let tmp = tempfile::tempdir().unwrap();
    let io = tmp.path().join("io");
    let config = ServiceConfig {
        project_root: Some(tmp.path().to_path_buf()),
        io_dir: Some(io.clone()),
        session_id: Some("s".into()),
        keep_job_dirs: Some(2),
        ..Default::default()
    };
    let svc = Arc::new(Service::new(config, tokio::runtime::Handle::current()).unwrap());
    let session = io.join("s");
    let mut made = HashSet::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for i in 0..8 {
        // From the fourth job on, a spare exists once the removal thread has made it
        // (the first job's folder, past the newest two).
        let recycled = i >= 3;
        if recycled {
            assert!(eventually(|| svc.spare_job_dirs() > 0).await, "no spare was made");
        }
        let r = svc.run(RunRequest::new(format!("echo job-{i}"))).await.unwrap();
        assert_eq!(r.exit_code, Some(0), "{r:?}");
        let dir = PathBuf::from(r.output_dir.clone().expect("a folder"));
        assert_eq!(dir.parent(), Some(session.as_path()));
        assert_eq!(names(&dir), ["info.json", "stdout.txt"]);
        let text = fs::read_to_string(dir.join("stdout.txt")).unwrap();
        assert_eq!(
            text.trim_end(),
            format!("job-{i}"),
            "job {i}'s file holds only its output"
        );
        let info = fs::read_to_string(dir.join("info.json")).unwrap();
        assert!(info.contains(&format!("\"handle\": {}", r.handle)), "{info}");
        let stdout = identity(&dir.join("stdout.txt"));
        if recycled {
            assert!(
                made.contains(&stdout),
                "job {i}'s stdout.txt is a new file: no spare was used"
            );
        }
        made.insert(stdout);
        dirs.push(dir);
    }
    // The folders past the newest two are gone by their names (renamed to spares or
    // removed), never left under a finished job's name for another job's output.
    assert!(eventually(|| dirs.iter().filter(|d| d.exists()).count() <= 2).await);
    assert!(dirs[0].symlink_metadata().is_err());
    svc.clone().shutdown_owned().await;
    // A folder still being made a spare when the service ended is removed once made.
    let spares = || -> Vec<String> {
        names(&session)
            .into_iter()
            .filter(|n| n.starts_with(".spare-"))
            .collect()
    };
    assert!(
        eventually(|| spares().is_empty()).await,
        "spares left after shutdown: {:?}",
        spares()
    );
}
