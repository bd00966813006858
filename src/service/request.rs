//! What callers ask of the service and what it answers, as plain Rust values.
//! The binding maps these one to one onto the JS contract (README.md "API", index.d.ts).

use std::path::PathBuf;
use std::time::Duration;

use crate::job::spawn::command::Shell;
use crate::job::spawn::Mode;
use crate::job::wait::WaitStatus;
use crate::job::JobStatus;

pub const DEFAULT_MAX_OUTPUT: usize = 16 * 1024;
pub const DEFAULT_MAX_JOBS: usize = 64;
/// Finished jobs a service keeps in memory with their output: about 70 KB each for a
/// PTY job (its screen and head and tail), so 100 stay under 7 MB.
pub const DEFAULT_KEEP_FINISHED_JOBS: usize = 100;
pub const DEFAULT_COLS: u16 = 80;
pub const DEFAULT_ROWS: u16 = 24;
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_millis(200);
pub const DEFAULT_INPUT_DELAY: Duration = Duration::from_millis(3000);
pub const DEFAULT_INPUT_TIMEOUT: Duration = Duration::from_millis(30_000);

#[derive(Clone, Debug, Default)]
pub struct ServiceConfig {
    pub project_root: Option<PathBuf>,
    pub io_dir: Option<PathBuf>,
    pub session_id: Option<String>,
    pub env: Vec<(String, String)>,
    /// The environment jobs inherit, under `env`: `None` is this process's own. A
    /// front-end serving another process (the daemon) gives that process's, so a job
    /// sees what it would in process there, and nothing of whoever started the daemon.
    pub inherited_env: Option<Vec<(String, String)>>,
    pub max_jobs: Option<usize>,
    /// Finished jobs kept in memory with their output (default
    /// [`DEFAULT_KEEP_FINISHED_JOBS`]); older ones are forgotten.
    pub keep_finished_jobs: Option<usize>,
    pub history_limit: Option<usize>,
    pub persist_output: Option<bool>,
    pub disk_cap_bytes: Option<u64>,
    /// Finished job folders a service keeps of its own, and start-up pruning of the
    /// sessions no live service holds (`output::retention`); 100 by default.
    pub keep_job_dirs: Option<usize>,
    /// Every job's sandbox unless a run says otherwise (`crate::sandbox`).
    pub sandbox: Option<crate::sandbox::SandboxSpec>,
    /// Keep each job's recent bytes with the stream they came on
    /// (`output::raw_stream`), for a front-end that relays them as they come (the
    /// daemon: its envd face streams any job). Off in process, where nothing reads
    /// them: a job then pays neither the copy nor the memory.
    pub keep_streams: bool,
}

#[derive(Clone, Debug)]
pub struct RunRequest {
    pub command: String,
    /// Argv mode: `command` is the program, these its arguments, and no shell runs.
    pub args: Option<Vec<String>>,
    pub description: Option<String>,
    pub directory: Option<String>,
    pub mode: Mode,
    /// Which shell runs `command` (Windows: cmd, PowerShell or pwsh).
    pub shell: Shell,
    pub cols: u16,
    pub rows: u16,
    /// Lines the screen model keeps above the screen (PTY jobs), for `screen`.
    pub scrollback: usize,
    pub env: Vec<(String, String)>,
    /// The job's environment is `env` alone: nothing inherited, none of the service's
    /// variables; only the markers the service finds its jobs by are added.
    pub clear_env: bool,
    /// `run`: how long it waits before killing the job (status `timed_out`). `start`:
    /// how long the job may run before it is killed so.
    pub timeout: Option<Duration>,
    pub callback_delay: Option<Duration>,
    pub callback_pattern: Option<String>,
    pub max_output_size: usize,
    /// Return early, running, when the job waits for input at its terminal (PTY jobs).
    pub detect_input: bool,
    /// The service's sandbox, none, or the run's own.
    pub sandbox: crate::sandbox::SandboxChoice,
}

impl RunRequest {
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            args: None,
            description: None,
            directory: None,
            mode: Mode::Pty,
            shell: Shell::Default,
            cols: DEFAULT_COLS,
            rows: DEFAULT_ROWS,
            scrollback: 0,
            env: Vec::new(),
            clear_env: false,
            timeout: None,
            callback_delay: None,
            callback_pattern: None,
            max_output_size: DEFAULT_MAX_OUTPUT,
            detect_input: true,
            sandbox: Default::default(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct RunResult {
    pub handle: u32,
    pub pid: Option<u32>,
    pub command: String,
    pub directory: String,
    pub status: JobStatus,
    pub stdout: String,
    pub stderr: String,
    pub output: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub error: Option<String>,
    pub background_pids: Vec<u32>,
    pub matched: Option<String>,
    pub truncated: bool,
    pub total_bytes: u64,
    /// The job's folder, while it is kept (`None`: persistence off, the folder could
    /// not be made, or retention removed it).
    pub output_dir: Option<String>,
    /// What the job's files lack and why (a full disk, a removed folder, the disk
    /// cap); `None` while they hold everything given them.
    pub persist_error: Option<String>,
    pub started_at: u64,
    pub duration_ms: u64,
    /// The job runs and waits for input at its terminal (what ended `run`'s wait).
    pub awaiting_input: bool,
    /// What confines the job; `None` when nothing does.
    pub sandbox: Option<crate::sandbox::Enforced>,
}

/// What `Service::launch` did: the job runs, or its program could not be started (the
/// result `run` answers then: status `failed`, `error` set).
#[derive(Clone, Debug)]
pub enum Launched {
    Running { handle: u32, pid: u32 },
    Failed(Box<RunResult>),
}

#[derive(Clone, Debug, Default)]
pub struct InputRequest {
    pub input: String,
    pub keys: Vec<String>,
    pub append_newline: bool,
    pub delay: Option<Duration>,
    pub pattern: Option<String>,
    pub timeout: Option<Duration>,
    pub max_output_size: usize,
    /// End the wait when the job waits for input at its terminal (PTY jobs).
    pub detect_input: bool,
}

/// What `wait_for` waits for.
#[derive(Clone, Debug, Default)]
pub struct WaitRequest<'a> {
    pub pattern: Option<&'a str>,
    pub timeout: Option<Duration>,
    pub max_output: usize,
    /// Match output from the job's start, not only what arrives from now on.
    pub from_start: bool,
    /// End the wait when the job waits for input at its terminal (PTY jobs).
    pub detect_input: bool,
}

#[derive(Clone, Debug)]
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

#[derive(Clone, Debug)]
pub struct ProcessInfo {
    /// The job waits for input at its terminal now (PTY jobs; see `input_wait`).
    pub awaiting_input: bool,
    /// The program its input reaches now (`bash`, `python3`, ...); `None` once ended.
    pub foreground: Option<String>,
    pub handle: u32,
    pub pid: u32,
    pub command: String,
    pub description: Option<String>,
    pub directory: String,
    pub mode: Mode,
    pub status: JobStatus,
    pub started_at: u64,
    pub duration_ms: u64,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub output_bytes: u64,
    pub last_line: String,
    pub background_pids: Vec<u32>,
    /// Running: the roots of what detached from the job (`platform::detached_roots`),
    /// read when the job list is asked for. Ended: the same as `background_pids`.
    pub detached_pids: Vec<u32>,
    /// As `RunResult::persist_error`.
    pub persist_error: Option<String>,
    /// What confines the job; `None` when nothing does.
    pub sandbox: Option<crate::sandbox::Enforced>,
    /// What held its processes together when it started.
    pub containment: crate::platform::ContainmentMode,
    /// What the kill that ended it said it was for (`KillOptions.reason`), if one did.
    pub kill_reason: Option<String>,
}
