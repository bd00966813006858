//! What the daemon remembers of the jobs it no longer holds: a job a client removed
//! (`removeProcess`; the tools remove each finished job once the model has seen its
//! end) leaves its service, and its handle then resolves to nothing. Its files stay on
//! disk (under `ioDir`, pruned by the output retention: docs/reliability.md), but only
//! the daemon knew which folder a daemon handle's output is in, so without this record
//! a later client (a new MCP session) could not read a finished job's output by handle.
//!
//! Bounded by count and age, and kept in memory only: a daemon that exits forgets
//! them (its handles start again at 1 in the next one).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

use crate::output::persist::unix_millis;
use crate::service::history::preview;
use crate::service::request::RunResult;

/// How many removed jobs are remembered (the newest win): about 1.3 KB each at most,
/// so at most about 1.3 MB.
pub const KEEP: usize = 1000;
/// How long a removed job is remembered.
pub const MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);
/// How much of a command a record keeps (the job's `info.json` has all of it).
const COMMAND_BYTES: usize = 1024;

pub struct EndedJob {
    pub handle: u32,
    root: PathBuf,
    command: String,
    status: &'static str,
    exit_code: Option<i32>,
    signal: Option<i32>,
    started_at: u64,
    removed_at: SystemTime,
    output_dir: String,
}

#[derive(Default)]
pub struct Ended {
    jobs: VecDeque<EndedJob>,
}

impl Ended {
    /// Remembers a job as it is removed (`result`: its last word, `root`: its
    /// service's project root). A job with no folder (never written, or pruned) has
    /// nothing to read and is not remembered. A job removed while running is killed
    /// by the removal, and recorded as killed.
    pub fn record(&mut self, handle: u32, root: &Path, result: &RunResult, now: SystemTime) {
        let Some(output_dir) = result.output_dir.clone() else {
            return;
        };
        let status = match result.status.as_str() {
            "running" => "killed",
            other => other,
        };
        self.jobs.retain(|j| j.handle != handle);
        self.jobs.push_back(EndedJob {
            handle,
            root: root.to_path_buf(),
            command: preview(&result.command, COMMAND_BYTES),
            status,
            exit_code: result.exit_code,
            signal: result.signal,
            started_at: result.started_at,
            removed_at: now,
            output_dir,
        });
        self.expire(now);
    }

    fn expire(&mut self, now: SystemTime) {
        while self.jobs.len() > KEEP {
            self.jobs.pop_front();
        }
        while self
            .jobs
            .front()
            .is_some_and(|j| now.duration_since(j.removed_at).unwrap_or_default() > MAX_AGE)
        {
            self.jobs.pop_front();
        }
    }

    /// The remembered jobs of the project `root`, newest first: only `handle`'s when
    /// given, at most `limit`.
    pub fn list(&mut self, root: &Path, handle: Option<u32>, limit: usize, now: SystemTime) -> Vec<Value> {
        self.expire(now);
        self.jobs
            .iter()
            .rev()
            .filter(|j| j.root == root && handle.is_none_or(|h| h == j.handle))
            .take(limit)
            .map(|j| {
                json!({
                    "handle": j.handle,
                    "command": j.command,
                    "status": j.status,
                    "exitCode": j.exit_code,
                    "signal": j.signal,
                    "startedAt": j.started_at,
                    "removedAt": unix_millis(j.removed_at),
                    "outputDir": j.output_dir,
                })
            })
            .collect()
    }
}

/// A remembered job as a restart in place carries it (src/daemon/carry.rs, Linux only).
#[cfg(target_os = "linux")]
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedEnded {
    pub handle: u32,
    pub root: PathBuf,
    pub command: String,
    pub status: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub started_at: u64,
    pub removed_at_ms: u64,
    pub output_dir: String,
}

/// The statuses a remembered job can have (`record` keeps them as static names).
#[cfg(target_os = "linux")]
const STATUSES: [&str; 4] = ["exited", "killed", "timed_out", "failed"];

impl Ended {
    /// Oldest first.
    #[cfg(target_os = "linux")]
    pub fn carry(&self) -> Vec<CarriedEnded> {
        self.jobs
            .iter()
            .map(|j| CarriedEnded {
                handle: j.handle,
                root: j.root.clone(),
                command: j.command.clone(),
                status: j.status.to_string(),
                exit_code: j.exit_code,
                signal: j.signal,
                started_at: j.started_at,
                removed_at_ms: unix_millis(j.removed_at),
                output_dir: j.output_dir.clone(),
            })
            .collect()
    }

    /// Takes a previous image's records (a status this build does not know is dropped).
    #[cfg(target_os = "linux")]
    pub fn resume(&mut self, carried: Vec<CarriedEnded>) {
        for j in carried {
            let Some(status) = STATUSES.iter().find(|s| **s == j.status) else {
                continue;
            };
            self.jobs.push_back(EndedJob {
                handle: j.handle,
                root: j.root,
                command: j.command,
                status,
                exit_code: j.exit_code,
                signal: j.signal,
                started_at: j.started_at,
                removed_at: SystemTime::UNIX_EPOCH + Duration::from_millis(j.removed_at_ms),
                output_dir: j.output_dir,
            });
        }
        self.expire(SystemTime::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::JobStatus;

    fn result(command: &str, dir: Option<&str>, status: JobStatus) -> RunResult {
        RunResult {
            handle: 1,
            pid: None,
            command: command.to_string(),
            directory: "/".into(),
            status,
            stdout: String::new(),
            stderr: String::new(),
            output: String::new(),
            exit_code: Some(0),
            signal: None,
            error: None,
            background_pids: Vec::new(),
            matched: None,
            truncated: false,
            total_bytes: 0,
            output_dir: dir.map(str::to_string),
            persist_error: None,
            started_at: 0,
            duration_ms: 0,
            awaiting_input: false,
            sandbox: None,
        }
    }

    #[test]
    fn keeps_the_newest_of_a_project_within_count_and_age() {
        let mut ended = Ended::default();
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let (a, b) = (Path::new("/a"), Path::new("/b"));
        for h in 1..=(KEEP as u32 + 5) {
            ended.record(h, a, &result("echo", Some("/io/s/1"), JobStatus::Exited), t0);
        }
        ended.record(9999, b, &result("other", Some("/io/s/2"), JobStatus::Exited), t0);
        let listed = ended.list(a, None, usize::MAX, t0);
        assert_eq!(listed.len(), KEEP - 1, "the oldest beyond the count are gone");
        assert_eq!(listed[0]["handle"], KEEP as u32 + 5, "newest first");
        assert_eq!(ended.list(b, None, 10, t0).len(), 1, "another project's are its own");
        assert!(ended.list(a, Some(3), 10, t0).is_empty(), "dropped by count");
        assert_eq!(ended.list(a, Some(KEEP as u32), 10, t0)[0]["outputDir"], "/io/s/1");
        let later = t0 + MAX_AGE + Duration::from_secs(1);
        assert!(ended.list(a, None, 10, later).is_empty(), "dropped by age");
    }

    #[test]
    fn a_job_without_a_folder_is_not_remembered_and_a_running_one_is_killed() {
        let mut ended = Ended::default();
        let now = SystemTime::now();
        let root = Path::new("/p");
        ended.record(1, root, &result("x", None, JobStatus::Exited), now);
        ended.record(2, root, &result("sleep 9", Some("/io/s/2"), JobStatus::Running), now);
        let listed = ended.list(root, None, 10, now);
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0]["status"], "killed");
        let long = "x".repeat(5000);
        ended.record(3, root, &result(&long, Some("/io/s/3"), JobStatus::Exited), now);
        assert_eq!(
            ended.list(root, Some(3), 1, now)[0]["command"].as_str().map(str::len),
            Some(COMMAND_BYTES)
        );
    }
}
