//! The JS-facing option and result objects (names fixed by the contract in README.md's
//! "API" and index.d.ts), and their
//! conversion from and to the core's plain Rust values.

use std::collections::BTreeMap;

use napi::bindgen_prelude::Either;
use napi_derive::napi;

use super::env_arg::EnvArg;
use super::object_arg::ObjectArg;
use super::sandbox::{self, SandboxInfo, SandboxOptions};

use native_shell_service::base::error::{Result, ServiceError};
use native_shell_service::job::kill::KillReport;
use native_shell_service::job::spawn::Mode as CoreMode;
use native_shell_service::job::wait::WaitStatus as CoreWaitStatus;
use native_shell_service::job::JobStatus as CoreJobStatus;
use native_shell_service::platform::ContainmentMode as CoreContainmentMode;
use native_shell_service::service::history::HistoryEntry as CoreHistoryEntry;
use native_shell_service::service::options;
use native_shell_service::service::request as core;

// The statuses of the results, as string enums: napi writes each as a union type in
// index.d.ts (`export type JobStatus = 'exited' | ...`; `constEnum: false` in
// package.json's napi config), its values the variants' names in snake_case. Each is
// made from the core's enum by a match over all of its variants, so a variant added to
// the core does not compile until it is added here, and so to the TypeScript types.
// The values are pinned by __test__/contract.test.ts. The loader also exports each enum as
// an object of its values (`JobStatus.TimedOut`), declared at the head of index.d.ts by
// src/binding/typings-header.d.ts (checked by __test__/typings.test.ts). Option fields (`mode`, `shell`,
// `view`) stay strings, checked by the conversions below with their INVALID_ARGUMENT
// messages; they name these types where one exists.

/// How a job ended, or `running` (`JobStatus` in src/job/mod.rs).
#[napi(string_enum = "snake_case")]
pub enum JobStatus {
    Exited,
    Running,
    Killed,
    TimedOut,
    Failed,
}

impl From<CoreJobStatus> for JobStatus {
    fn from(status: CoreJobStatus) -> Self {
        match status {
            CoreJobStatus::Exited => Self::Exited,
            CoreJobStatus::Running => Self::Running,
            CoreJobStatus::Killed => Self::Killed,
            CoreJobStatus::TimedOut => Self::TimedOut,
            CoreJobStatus::Failed => Self::Failed,
        }
    }
}

/// A `RunResult`'s status: the job's, or `awaiting_input` when it runs and waits for
/// input at its terminal (`RunResult::awaiting_input` in src/service/request.rs).
#[napi(string_enum = "snake_case")]
pub enum RunStatus {
    Exited,
    Running,
    AwaitingInput,
    Killed,
    TimedOut,
    Failed,
}

impl RunStatus {
    fn of(status: CoreJobStatus, awaiting_input: bool) -> Self {
        match status {
            // As `native_shell_service::service::Service::run` sets it: only for a job that runs.
            _ if awaiting_input => Self::AwaitingInput,
            CoreJobStatus::Exited => Self::Exited,
            CoreJobStatus::Running => Self::Running,
            CoreJobStatus::Killed => Self::Killed,
            CoreJobStatus::TimedOut => Self::TimedOut,
            CoreJobStatus::Failed => Self::Failed,
        }
    }
}

/// What ended a wait (`WaitStatus` in src/job/wait.rs).
#[napi(string_enum = "snake_case")]
pub enum WaitStatus {
    Matched,
    Exited,
    DelayElapsed,
    TimedOut,
    AwaitingInput,
}

impl From<CoreWaitStatus> for WaitStatus {
    fn from(status: CoreWaitStatus) -> Self {
        match status {
            CoreWaitStatus::Matched => Self::Matched,
            CoreWaitStatus::Exited => Self::Exited,
            CoreWaitStatus::DelayElapsed => Self::DelayElapsed,
            CoreWaitStatus::TimedOut => Self::TimedOut,
            CoreWaitStatus::AwaitingInput => Self::AwaitingInput,
        }
    }
}

/// What holds a job's processes together (`ContainmentMode` in src/platform/mod.rs;
/// docs/reliability.md, "Containment"). Written as the strings `'cgroup'`,
/// `'job-object'`, `'process-tree'`.
#[napi(string_enum = "kebab-case")]
pub enum ContainmentMode {
    Cgroup,
    JobObject,
    ProcessTree,
}

impl From<CoreContainmentMode> for ContainmentMode {
    fn from(mode: CoreContainmentMode) -> Self {
        match mode {
            CoreContainmentMode::Cgroup => Self::Cgroup,
            CoreContainmentMode::JobObject => Self::JobObject,
            CoreContainmentMode::ProcessTree => Self::ProcessTree,
        }
    }
}

/// How a job talks to its process (`Mode` in src/platform/mod.rs).
#[napi(string_enum = "snake_case")]
pub enum JobMode {
    Pty,
    Pipes,
}

impl From<CoreMode> for JobMode {
    fn from(mode: CoreMode) -> Self {
        match mode {
            CoreMode::Pty => Self::Pty,
            CoreMode::Pipes => Self::Pipes,
        }
    }
}

#[napi(object, object_to_js = false)]
pub struct ServiceOptions {
    pub project_root: Option<String>,
    pub io_dir: Option<String>,
    pub session_id: Option<String>,
    #[napi(ts_type = "Record<string, string> | null")]
    pub env: Option<EnvArg>,
    pub max_jobs: Option<f64>,
    /// Finished jobs kept in memory with their output (the newest; 100 by default).
    /// Older ones are forgotten as `removeProcess` forgets them: their results stay in
    /// the history and their output in their files.
    pub keep_finished_jobs: Option<f64>,
    pub history_limit: Option<f64>,
    pub persist_output: Option<bool>,
    /// Every job's sandbox (off unless given; `true`: the default one). docs/sandbox.md.
    pub sandbox: Option<Either<bool, SandboxOptions>>,
    /// Jobs owned by the per-user daemon, which outlive this process (docs/daemon.md).
    /// The package entry (service.js) turns it into a daemon client; this in-process
    /// constructor refuses it (`INVALID_ARGUMENT`) rather than silently ignore it.
    pub daemon: Option<Either<bool, DaemonOptions>>,
}

/// `ServiceOptions.daemon` as an object (docs/daemon.md).
#[napi(object, object_to_js = false)]
pub struct DaemonOptions {
    /// The daemon's socket (default: `$XDG_RUNTIME_DIR/native-shell-service/daemon.sock`,
    /// else `<temp dir>/native-shell-service-<uid>/daemon.sock`).
    pub socket: Option<String>,
    /// How long a daemon this client starts lives on with no jobs and no clients
    /// (600000 ms by default).
    pub idle_exit_ms: Option<f64>,
    /// A daemon's HTTP port (`native-shell-daemon --listen`), e.g. `http://127.0.0.1:49983`,
    /// in place of the socket: reached over TCP (or TLS for `https:`), never started by
    /// the client; the jobs get the daemon's environment, not this process's (docs/remote.md).
    pub url: Option<String>,
    /// The daemon's access token (`--access-token-file`), sent with `url`.
    pub token: Option<String>,
    /// The largest frame (one reply or event) taken from the daemon at `url`, in bytes:
    /// 16 MiB by default, from 65536 to 469762048 (448 MiB). A larger one ends the
    /// connection (`DAEMON_FRAME_TOO_LARGE`) before it is held. Only with `url`.
    pub max_frame_bytes: Option<f64>,
}

// Read by hand (src/binding/run_options.rs); napi writes its typings.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct RunOptions {
    /// Relative to the project root.
    pub directory: Option<String>,
    pub description: Option<String>,
    /// Argv mode: `command` is the program, `args` its arguments; no shell runs.
    pub args: Option<Vec<String>>,
    #[napi(ts_type = "JobMode")]
    pub mode: Option<String>,
    /// Windows only: the shell that runs `command` (`cmd` by default).
    #[napi(ts_type = "'cmd' | 'powershell' | 'pwsh'")]
    pub shell: Option<String>,
    pub cols: Option<f64>,
    pub rows: Option<f64>,
    /// Lines the job's screen model keeps above the screen for `getScreen` (PTY jobs;
    /// 0 by default, at most 100000). Memory grows with it: about 3 KiB a line at 80 columns.
    pub scrollback: Option<f64>,
    #[napi(ts_type = "Record<string, string> | null")]
    pub env: Option<EnvArg>,
    /// The environment is `env` alone: nothing inherited from Node, none of the
    /// service's variables (only the markers the service finds its jobs by are added).
    pub clear_env: Option<bool>,
    pub timeout_ms: Option<f64>,
    pub callback_delay_ms: Option<f64>,
    pub callback_pattern: Option<String>,
    pub max_output_size: Option<f64>,
    /// Return early (`status: 'awaiting_input'`, the job running) when the job waits for
    /// input at its terminal; PTY jobs, on by default.
    pub detect_input: Option<bool>,
    /// `false`: unconfined even if the service sandboxes its jobs; `true`: the
    /// service's sandbox or the default one; an object: this job's own.
    pub sandbox: Option<Either<bool, SandboxOptions>>,
    /// Daemon mode: the job outlives this client (`true`, the default) or is killed when
    /// the client disconnects (`false`). In-process every job ends with its service.
    pub keep: Option<bool>,
}

#[napi(object)]
pub struct SendInputOptions {
    pub append_newline: Option<bool>,
    pub delay_ms: Option<f64>,
    pub pattern: Option<String>,
    pub timeout_ms: Option<f64>,
    /// Named keys sent after `input`: `C-c`, `C-d`, `Enter`, `Tab`, `Escape`, `Up`, ...
    pub keys: Option<Vec<String>>,
    pub max_output_size: Option<f64>,
    /// End the wait (`status: 'awaiting_input'`) when the job waits for input again; on by default.
    pub detect_input: Option<bool>,
}

#[napi(object)]
pub struct WaitOptions {
    pub pattern: Option<String>,
    pub timeout_ms: Option<f64>,
    pub max_output_size: Option<f64>,
    /// Match output from the job's start too, not only what arrives after the call
    /// (pair with `start()`, which returns before any output is read).
    pub from_start: Option<bool>,
    /// End the wait (`status: 'awaiting_input'`) when the job waits for input; on by default.
    pub detect_input: Option<bool>,
}

/// What `start()` returns: the job runs on, nothing was awaited.
#[napi(object)]
pub struct StartedJob {
    pub handle: u32,
    pub pid: u32,
}

#[napi(object)]
pub struct OutputOptions {
    #[napi(ts_type = "'text' | 'screen' | 'raw'")]
    pub view: Option<String>,
    pub tail_bytes: Option<f64>,
}

#[napi(object)]
pub struct ResultOptions {
    pub max_output_size: Option<f64>,
}

#[napi(object)]
pub struct KillOptions {
    pub grace_ms: Option<f64>,
    /// What the kill is for, kept with the job as its `killReason` when this kill ends
    /// it (at most 256 bytes): e.g. the MCP server's `task-cancelled`, so a server started
    /// later still tells a cancelled task from a job killed for another cause.
    pub reason: Option<String>,
}

#[napi(object, use_nullable = true)]
pub struct RunResult {
    pub handle: u32,
    pub pid: Option<u32>,
    pub command: String,
    pub directory: String,
    /// `awaiting_input`: the job runs and waits for input at its terminal (its prompt is
    /// the end of `output`).
    pub status: RunStatus,
    pub stdout: String,
    pub stderr: String,
    pub output: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub error: Option<String>,
    pub background_pids: Vec<u32>,
    pub matched: Option<String>,
    pub truncated: bool,
    pub total_bytes: f64,
    /// The job's folder (`stdout.txt`, `stderr.txt`, `info.json`); null when output is
    /// not persisted, the folder could not be made, or retention removed it.
    pub output_dir: Option<String>,
    /// The job's files lack part of its output, and why: a full disk (`ENOSPC`), the
    /// folder removed, the per-job disk cap. Null while they hold everything.
    pub persist_error: Option<String>,
    pub started_at: f64,
    pub duration_ms: f64,
    /// The job runs and waits for input at its terminal.
    pub awaiting_input: bool,
    /// What confines the job; `null` when nothing does.
    pub sandbox: Option<SandboxInfo>,
}

#[napi(object, use_nullable = true)]
pub struct InteractionResult {
    pub handle: u32,
    pub status: WaitStatus,
    pub output: String,
    pub matched: Option<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub running: bool,
    pub truncated: bool,
}

#[napi(object, use_nullable = true)]
pub struct ProcessInfo {
    pub handle: u32,
    pub pid: u32,
    pub command: String,
    pub description: Option<String>,
    pub directory: String,
    pub mode: JobMode,
    pub status: JobStatus,
    pub started_at: f64,
    pub duration_ms: f64,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub output_bytes: f64,
    pub last_line: String,
    pub background_pids: Vec<u32>,
    /// A running job: the processes it started that left it (another session, their
    /// parent gone, `nohup`), each the root of what detached; found when asked, never
    /// watched. An ended job: those of its `backgroundPids` still alive. Always empty on
    /// Windows (the Job Object holds them all).
    pub detached_pids: Vec<u32>,
    /// The job waits for input at its terminal now (PTY jobs).
    pub awaiting_input: bool,
    /// The program the job's input reaches now (a PTY job: its terminal's foreground
    /// program, e.g. `bash` or `python3`; a pipes job: its own process); null once ended.
    pub foreground: Option<String>,
    /// As `RunResult.persistError`: what the job's files lack, and why.
    pub persist_error: Option<String>,
    /// What confines the job; `null` when nothing does.
    pub sandbox: Option<SandboxInfo>,
    /// What held the job's processes together when it started: `'cgroup'` (nothing it
    /// starts can leave), `'process-tree'` (found by session, group, parent links and
    /// marker: a process that detaches after the job's own process ended can be lost),
    /// `'job-object'` (Windows).
    pub containment: ContainmentMode,
    /// Who started the job: this service (`'this'`, always in-process), another live
    /// client of the daemon (`'other'`) or a client that is gone (`'none'`).
    #[napi(ts_type = "'this' | 'other' | 'none'")]
    pub attached: String,
    /// What the kill that ended the job said it was for (`KillOptions.reason`); null when
    /// it was not ended by a kill that gave one.
    pub kill_reason: Option<String>,
}

#[napi(object, use_nullable = true)]
pub struct KillResult {
    pub handle: u32,
    pub status: JobStatus,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// SIGKILL was needed after the grace period.
    pub escalated: bool,
    /// The pids of the job's processes still alive after the kill (SIGKILL sent, and
    /// still there a second later); empty when everything ended.
    pub survivors: Vec<u32>,
}

#[napi(object, use_nullable = true)]
pub struct HistoryEntry {
    pub handle: u32,
    pub command: String,
    pub args: Option<Vec<String>>,
    pub directory: String,
    pub status: JobStatus,
    pub started_at: f64,
    pub duration_ms: f64,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub error: Option<String>,
    /// The first 1 KiB of the output.
    pub output: String,
}

// The checks and defaults live in the core (`native_shell_service::service::options`), shared with
// the daemon: both front-ends refuse the same input with the same messages. Here the
// napi objects are only moved into the core's plain ones.
pub use native_shell_service::service::options::{handle_arg, max_output, millis, scrollback_arg, whole, WaitArgs};

fn env_map(env: Option<EnvArg>) -> Result<Option<BTreeMap<String, String>>> {
    Ok(env
        .map(|e| EnvArg::pairs(Some(e)))
        .transpose()?
        .map(|pairs| pairs.into_iter().collect()))
}

impl ServiceOptions {
    pub fn into_config(self) -> Result<core::ServiceConfig> {
        // A daemon asked of the in-process addon (index.js loaded directly, not the
        // package entry): refused, so a caller never believes its jobs outlive it.
        if matches!(self.daemon, Some(Either::A(true)) | Some(Either::B(_))) {
            return Err(ServiceError::invalid(
                "daemon mode is the package entry's (require('native-shell-service')); this in-process addon cannot start a daemon",
            ));
        }
        options::ServiceArgs {
            project_root: self.project_root,
            io_dir: self.io_dir,
            session_id: self.session_id,
            env: env_map(self.env)?,
            // In process, jobs inherit this process's environment.
            inherit_env: None,
            max_jobs: self.max_jobs,
            keep_finished_jobs: self.keep_finished_jobs,
            history_limit: self.history_limit,
            persist_output: self.persist_output,
            sandbox: sandbox::flag_or(self.sandbox),
        }
        .into_config()
    }
}

pub fn run_request(command: String, options: Option<ObjectArg<RunOptions>>) -> Result<core::RunRequest> {
    let args = match ObjectArg::open(options)? {
        None => None,
        Some(o) => Some(options::RunArgs {
            directory: o.directory,
            description: o.description,
            args: o.args,
            mode: o.mode,
            shell: o.shell,
            cols: o.cols,
            rows: o.rows,
            scrollback: o.scrollback,
            env: env_map(o.env)?,
            clear_env: o.clear_env,
            timeout_ms: o.timeout_ms,
            callback_delay_ms: o.callback_delay_ms,
            callback_pattern: o.callback_pattern,
            max_output_size: o.max_output_size,
            detect_input: o.detect_input,
            sandbox: sandbox::flag_or(o.sandbox),
        }),
    };
    options::run_request(command, args)
}

pub fn input_request(input: String, options: Option<ObjectArg<SendInputOptions>>) -> Result<core::InputRequest> {
    let args = ObjectArg::open(options)?.map(|o| options::InputArgs {
        append_newline: o.append_newline,
        delay_ms: o.delay_ms,
        pattern: o.pattern,
        timeout_ms: o.timeout_ms,
        keys: o.keys,
        max_output_size: o.max_output_size,
        detect_input: o.detect_input,
    });
    options::input_request(input, args)
}

pub fn wait_args(options: Option<ObjectArg<WaitOptions>>) -> Result<WaitArgs> {
    let args = ObjectArg::open(options)?.map(|o| options::WaitOptionsArgs {
        pattern: o.pattern,
        timeout_ms: o.timeout_ms,
        max_output_size: o.max_output_size,
        from_start: o.from_start,
        detect_input: o.detect_input,
    });
    options::wait_args(args)
}

impl From<core::RunResult> for RunResult {
    fn from(r: core::RunResult) -> Self {
        Self {
            handle: r.handle,
            pid: r.pid,
            command: r.command,
            directory: r.directory,
            status: RunStatus::of(r.status, r.awaiting_input),
            stdout: r.stdout,
            stderr: r.stderr,
            output: r.output,
            exit_code: r.exit_code,
            signal: r.signal,
            error: r.error,
            background_pids: r.background_pids,
            matched: r.matched,
            truncated: r.truncated,
            total_bytes: r.total_bytes as f64,
            output_dir: r.output_dir,
            persist_error: r.persist_error,
            started_at: r.started_at as f64,
            duration_ms: r.duration_ms as f64,
            awaiting_input: r.awaiting_input,
            sandbox: r.sandbox.map(SandboxInfo::from),
        }
    }
}

impl From<core::InteractionResult> for InteractionResult {
    fn from(r: core::InteractionResult) -> Self {
        Self {
            handle: r.handle,
            status: r.status.into(),
            output: r.output,
            matched: r.matched,
            exit_code: r.exit_code,
            signal: r.signal,
            running: r.running,
            truncated: r.truncated,
        }
    }
}

impl From<core::ProcessInfo> for ProcessInfo {
    fn from(p: core::ProcessInfo) -> Self {
        Self {
            handle: p.handle,
            pid: p.pid,
            command: p.command,
            description: p.description,
            directory: p.directory,
            mode: p.mode.into(),
            status: p.status.into(),
            started_at: p.started_at as f64,
            duration_ms: p.duration_ms as f64,
            exit_code: p.exit_code,
            signal: p.signal,
            output_bytes: p.output_bytes as f64,
            last_line: p.last_line,
            background_pids: p.background_pids,
            detached_pids: p.detached_pids,
            awaiting_input: p.awaiting_input,
            foreground: p.foreground,
            persist_error: p.persist_error,
            sandbox: p.sandbox.map(SandboxInfo::from),
            containment: p.containment.into(),
            attached: "this".to_string(),
            kill_reason: p.kill_reason,
        }
    }
}

impl KillResult {
    pub fn from_report(handle: u32, r: KillReport) -> Self {
        Self {
            handle,
            status: r.status.into(),
            exit_code: r.exit_code,
            signal: r.signal,
            escalated: r.escalated,
            survivors: r.survivors,
        }
    }
}

impl From<CoreHistoryEntry> for HistoryEntry {
    fn from(e: CoreHistoryEntry) -> Self {
        Self {
            handle: e.handle,
            command: e.command,
            args: e.args,
            directory: e.directory,
            status: JobStatus::from(e.status),
            started_at: e.started_at as f64,
            duration_ms: e.duration_ms as f64,
            exit_code: e.exit_code,
            signal: e.signal,
            error: e.error,
            output: e.output,
        }
    }
}
