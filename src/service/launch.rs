//! Starting a job: its environment, the process (through the platform layer), its
//! reader and writer tasks, its output files; and the result of one that failed to
//! start.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::SystemTime;

#[cfg(target_os = "linux")]
use tokio::runtime::Handle;
use tokio::sync::mpsc;

use super::registry::process_token;
use super::retention::Retention;
use super::sandbox::JobSandboxPlan;
use super::Service;
use crate::base::catch_panic::catch_panic;
use crate::base::sync::lock;
use crate::job::driver;
use crate::job::kill::kill_now;
use crate::job::spawn::{command, directory, env, Mode, SpawnSpec};
use crate::job::{Job, JobMeta, JobState, JobStatus, WaitTicket};
use crate::output::persist::{describe, unix_millis, JobFiles};
use crate::output::screen::ScreenSize;
use crate::output::{JobOutput, OutputLimits, Which};
use crate::platform::{self, watchdog};
use crate::sandbox::{sanitize_env, Enforced, JobSandbox, JobTmpDir};
use crate::service::history::{preview, HistoryEntry, OUTPUT_PREVIEW_BYTES};
use crate::service::request::{RunRequest, RunResult};
use crate::service::results::history_entry;

impl Service {
    /// Spawns the job and registers `run`'s waiter before its reader starts.
    pub(super) fn start_job(
        &self,
        handle: u32,
        req: &RunRequest,
        workdir: &directory::WorkingDir,
        pattern: Option<crate::job::wait::Pattern>,
        sandbox: Option<JobSandboxPlan>,
    ) -> std::io::Result<(Arc<Job>, WaitTicket)> {
        let inner = &self.inner;
        let owner = owner_entry();
        watchdog::ensure_started(&owner);
        let job_marker = format!("{}.{}", inner.token, handle);
        // A sandboxed job's own TMPDIR (handed back at its end: `JobMeta::tmpdir`).
        let tmpdir = match &sandbox {
            Some(_) => Some(JobTmpDir::take()?),
            None => None,
        };
        let mut env = env::build(&env::EnvLayers {
            inherited: inner.inherited_env.as_deref(),
            service: &inner.env,
            call: &req.env,
            term: (req.mode == Mode::Pty).then_some("xterm-256color"),
            job_marker: &job_marker,
            owner_marker: process_token(),
            clear: req.clear_env,
        });
        if let Some(tmpdir) = &tmpdir {
            env.retain(|(name, _)| name != "TMPDIR");
            env.push(("TMPDIR".into(), tmpdir.path().into()));
        }
        let job_sandbox = sandbox.as_ref().zip(tmpdir.as_ref()).map(|(plan, tmpdir)| JobSandbox {
            resolved: &plan.resolved,
            tmpdir,
            support: plan.support,
        });
        let mut git_hold = None;
        let enforced = job_sandbox.as_ref().map(|job| {
            let mut enforced = Enforced::new(job.resolved, &job.support, job.tmpdir.path());
            // The agent's secrets stay out of a sandboxed job (`crate::sandbox::env`).
            let kept = [env::JOB_MARKER, env::OWNER_MARKER, "TMPDIR"];
            enforced.env_dropped = sanitize_env(&mut env, &job.resolved.env, &kept);
            // A job that may write the project may plant git hooks, which run unconfined
            // at the user's next commit: recorded now, put back at its end.
            if !job.resolved.read_only {
                match inner.git_guard.hold() {
                    Ok(hold) => git_hold = hold,
                    Err(why) => enforced
                        .notes
                        .push(format!("git hooks and configuration not guarded: {why}")),
                }
            }
            enforced
        });
        let (program, args) = command::program_and_args(&req.command, req.args.as_deref(), req.shell);
        let started_at = SystemTime::now();
        let started = std::time::Instant::now();
        let _guard = inner.runtime.enter();
        let clock_before = platform::boot_clock();
        let spawned = platform::spawn(&SpawnSpec {
            program,
            args,
            env,
            cwd: &workdir.path,
            cwd_handle: &workdir.file,
            mode: req.mode,
            cols: req.cols,
            rows: req.rows,
            sandbox: job_sandbox,
            spare_pty: &inner.spare_pty,
        })?;
        let start_ticks = platform::start_ticks_between(spawned.pid as i32, clock_before, platform::boot_clock());
        // The output files are made by the reader task before its first read, while
        // the program starts, not on the spawn path.
        let session_dir = inner.io_dir.join(&inner.session_id);
        let separate_stderr = req.mode == Mode::Pipes;
        let (retention, disk_cap) = (inner.retention.clone(), inner.disk_cap);
        let make_files = move || {
            // Without a writable ioDir the job still runs; its output stays in memory,
            // and its results say why it has no files.
            let retention = retention?;
            retention.before_job_dir();
            Some(
                // A spare folder when one is ready: a rename instead of a new folder
                // and files (`output::spare_dir`).
                JobFiles::create_reusing(&session_dir, handle, separate_stderr, disk_cap, retention.take_spare())
                    .map(|mut files| {
                        // The temporary file of the first `info.json` is made now, while
                        // the program starts, not at its exit: a short job's `info.json`
                        // is then a write and a rename on the exit's path, no new inode.
                        files.prepare_info_rewrite();
                        files
                    })
                    .map_err(|e| {
                        format!(
                            "the job's folder could not be made in {}: {}",
                            session_dir.display(),
                            describe(&e)
                        )
                    }),
            )
        };
        let screen = (req.mode == Mode::Pty).then_some(ScreenSize {
            cols: req.cols,
            rows: req.rows,
            scrollback: req.scrollback,
        });
        let limits = OutputLimits {
            raw_stream: if inner.keep_streams {
                crate::output::raw_stream::RAW_STREAM_KEEP
            } else {
                0
            },
            ..OutputLimits::default()
        };
        let output = JobOutput::new(limits, req.mode == Mode::Pipes, screen);
        let meta = JobMeta {
            handle,
            pid: spawned.pid,
            command: req.command.clone(),
            args: req.args.clone(),
            description: req.description.clone(),
            directory: workdir.display.clone(),
            mode: req.mode,
            started_at,
            started,
            marker_entry: format!("{}={}", env::JOB_MARKER, job_marker),
            start_ticks,
            containment: spawned.containment,
            sandbox: enforced,
            tmpdir: tmpdir.map(Arc::new),
            git_hold,
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let on_exit = self.history_recorder();
        // One path for both modes: the platform's I/O splits into the terminal the job
        // keeps (PTY mode), the writer task's end and the reader task's end.
        let (terminal, writer, reader) = driver::split(spawned.io);
        let job = Arc::new(Job::new(meta, output, tx, terminal, inner.timer.deadlines()));
        let (pty, stdout, stderr) = driver::reader_fds(&reader);
        job.freeze.set_fds(crate::job::freeze::Fds {
            pty,
            stdin: driver::writer_fd(&writer),
            stdout,
            stderr,
        });
        let ticket = job.register_waiter(pattern);
        let writer = crate::job::writer::task(writer, rx, job.queued_input(), job.freeze.clone());
        let (reader_job, child) = (job.clone(), spawned.child);
        let reader = async move {
            reader_job.attach_files(make_files());
            driver::drive(reader_job, child, reader, on_exit).await;
        };
        // One task for the job's reader, writer and their supervision, where there were
        // three: each task handed to the runtime from this (JS) thread woke a worker,
        // and the first worker woke the other for the rest.
        inner
            .runtime
            .spawn(run_io(job.clone(), reader, writer, inner.retention.clone()));
        {
            let mut jobs = lock(&inner.jobs);
            if inner.ended.load(Ordering::SeqCst) {
                // The owner ended while this job was being started (a `run` in flight
                // on a runtime thread when a worker was terminated): nobody can see it.
                drop(jobs);
                kill_now(&job);
                job.close();
                return Err(std::io::Error::other("the service has ended"));
            }
            if inner.frozen.load(Ordering::SeqCst) {
                // A restart in place is carrying the jobs: this one would not be.
                drop(jobs);
                kill_now(&job);
                job.close();
                return Err(std::io::Error::other(
                    "the daemon is restarting in place: start the job again once it serves",
                ));
            }
            jobs.insert(handle, job.clone());
            evict_finished(&mut jobs, inner.keep_finished);
        }
        Ok((job, ticket))
    }

    pub(super) fn history_recorder(&self) -> driver::OnExit {
        let history = Arc::downgrade(&self.inner.history);
        Box::new(move |meta: &JobMeta, state: &JobState| {
            let Some(history) = history.upgrade() else { return };
            let output = state.output.excerpt(Which::Combined, OUTPUT_PREVIEW_BYTES * 2).text;
            let entry = history_entry(meta, state, preview(&output, OUTPUT_PREVIEW_BYTES));
            lock(&history).record(entry);
        })
    }

    pub(super) fn failed_result(
        &self,
        handle: u32,
        req: &RunRequest,
        directory: &str,
        started_at: SystemTime,
        error: std::io::Error,
    ) -> RunResult {
        let program = req.args.as_ref().map_or("bash", |_| req.command.as_str());
        let message = format!("failed to start {program:?}: {error}");
        lock(&self.inner.history).record(HistoryEntry {
            handle,
            command: req.command.clone(),
            args: req.args.clone(),
            directory: directory.to_string(),
            status: JobStatus::Failed,
            started_at: unix_millis(started_at),
            duration_ms: 0,
            exit_code: None,
            signal: None,
            error: Some(message.clone()),
            output: String::new(),
        });
        RunResult {
            handle,
            pid: None,
            command: req.command.clone(),
            directory: directory.to_string(),
            status: JobStatus::Failed,
            stdout: String::new(),
            stderr: String::new(),
            output: String::new(),
            exit_code: None,
            signal: None,
            error: Some(message),
            background_pids: Vec::new(),
            matched: None,
            truncated: false,
            total_bytes: 0,
            output_dir: None,
            persist_error: None,
            started_at: unix_millis(started_at),
            duration_ms: 0,
            awaiting_input: false,
            sandbox: None,
        }
    }
}

/// Forgets the oldest finished jobs beyond the newest `keep`, as `removeProcess` would:
/// their results stay in the history and their output in their files. A job whose
/// background processes still run is kept (forgetting it would lose the handle that
/// kills them).
fn evict_finished(jobs: &mut BTreeMap<u32, Arc<Job>>, keep: usize) {
    if jobs.len() <= keep {
        // Fewer jobs than the bound, finished or not: nothing to evict, and no job's
        // lock is taken on the spawn's path.
        return;
    }
    let finished: Vec<u32> = jobs
        .iter()
        .filter(|(_, job)| !job.is_running())
        .map(|(&handle, _)| handle)
        .collect();
    let excess = finished.len().saturating_sub(keep);
    for handle in finished.into_iter().take(excess) {
        if jobs.get(&handle).is_some_and(|job| job.left_nothing_running()) {
            if let Some(job) = jobs.remove(&handle) {
                job.close();
            }
        }
    }
}

fn owner_entry() -> String {
    format!("{}={}", env::OWNER_MARKER, process_token())
}

/// A new job's reader and writer, side by side in one task, and what `supervise` does
/// once the reader is done (the writer then ends: `Job::release_io` closes its input).
/// A panic of the writer (a bug) ends only the writer, as when it was a task of its own.
async fn run_io(
    job: Arc<Job>,
    reader: impl std::future::Future<Output = ()>,
    writer: impl std::future::Future<Output = ()>,
    retention: Option<Arc<Retention>>,
) {
    let reader = async {
        let panicked = catch_panic(reader).await.is_err();
        reader_done(&job, panicked, retention);
    };
    let writer = async {
        let _ = catch_panic(writer).await;
    };
    tokio::join!(reader, writer);
}

/// Watches a job's reader. When it is done, the job's terminal and stdin are let go,
/// and its folder counts as finished (`Retention::job_done`). If it panicked (a bug),
/// the job is failed and its processes killed, so no caller waits forever and nothing
/// is left running unseen.
// Used by the restart in place (src/service/carry.rs), Linux only.
#[cfg(target_os = "linux")]
pub(super) fn supervise(
    runtime: &Handle,
    job: &Arc<Job>,
    reader: tokio::task::JoinHandle<()>,
    retention: Option<Arc<Retention>>,
) {
    let job = job.clone();
    runtime.spawn(async move {
        let panicked = reader.await.err().is_some_and(|e| e.is_panic());
        reader_done(&job, panicked, retention);
    });
}

/// What follows a job's reader: see `supervise`.
fn reader_done(job: &Arc<Job>, panicked: bool, retention: Option<Arc<Retention>>) {
    if panicked {
        kill_now(job);
        job.abandon(format!(
            "internal error: the output reader of job {} stopped",
            job.meta.handle
        ));
    }
    job.release_io();
    if let Some(retention) = retention {
        retention.job_done(job);
    }
}
