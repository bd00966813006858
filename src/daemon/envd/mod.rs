//! E2B's envd services over the daemon's state: `process.Process` here and
//! in `process`/`stream`; what [sdk] adds beside it (filesystem, /files).
//!
//! **One state for every face.** The network face owns one core `Service` of its own
//! (project root `--project-root`, else `$HOME`), registered in the daemon's `State`
//! like a unix-socket client's, held by the reserved connection id
//! [`FACE_CONN`] so it is never pruned. Its jobs get daemon handles at start, so a
//! unix-socket client of the same project root lists them (`attached: "other"`) and
//! drives them by handle; and envd's calls find every job of every service by its OS
//! pid (`List` lists them all: E2B #1031), so a job a unix-socket client started is
//! listed, attached to, fed and killed from an E2B SDK too.

pub mod carried;
pub mod decode;
mod file_metadata;
pub mod files;
pub mod filesystem;
mod fs_calls;
mod fs_entry;
mod fs_error;
mod fs_mode;
mod inflate;
mod multipart;
pub mod process;
pub mod proto;
mod regular_file;
mod stream;
mod watch;
mod watch_stream;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use proto::process as pb;

use super::conn::Daemon;
use super::protocol::connect::{Code, ConnectError};
use super::state::Hosted;
use crate::base::error::{ErrorCode, ServiceError};
use crate::base::sync::lock;
use crate::service::request::ServiceConfig;
use crate::service::{JobPid, Service};

/// The connection id that holds the face's service (real connections count from 1).
pub const FACE_CONN: u64 = 0;
/// Jobs the face's service may run at once: a pod's process server runs what its
/// agents ask (the in-process default, 64, is for one agent).
const MAX_JOBS: usize = 1024;

/// What envd's calls gave a job that the core does not keep: its tag and config.
struct Started {
    tag: Option<String>,
    config: pb::ProcessConfig,
}

/// The network face's envd services: what their handlers use (the daemon's state and
/// runtimes, the face's own service, `--project-root`), so they need nothing of the
/// HTTP layer above them: what they answer with is in src/daemon/protocol/.
pub struct Envd {
    pub daemon: Arc<Daemon>,
    /// `--project-root` as given (`None`: the service's default, `$HOME` else `/`).
    pub project_root: Option<PathBuf>,
    hosted: Arc<Hosted>,
    /// By the face's service's own handle.
    started: Mutex<HashMap<u32, Started>>,
    /// filesystem.Filesystem's directory watchers (watch.rs).
    watchers: watch::Watchers,
}

/// A job found by a selector.
pub struct Found {
    pub hosted: Arc<Hosted>,
    pub local: u32,
    pub handle: u32,
    pub pid: u32,
    pub running: bool,
    pub pty: bool,
}

impl Envd {
    pub fn new(daemon: &Arc<Daemon>, project_root: Option<PathBuf>) -> Result<Self, String> {
        let root = project_root
            .clone()
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("/"));
        // A restart in place carried the previous image's face (src/daemon/carry.rs):
        // its service, with its jobs running on, and what each `Start` asked for.
        if let Some((hosted, starts)) = daemon.state.take_resumed_face() {
            let started = starts
                .into_iter()
                .map(|s| {
                    (
                        s.handle,
                        Started {
                            tag: s.tag,
                            config: s.config,
                        },
                    )
                })
                .collect();
            return Ok(Self {
                daemon: daemon.clone(),
                project_root,
                hosted,
                started: Mutex::new(started),
                watchers: watch::Watchers::default(),
            });
        }
        let service = Service::new(face_config(root), daemon.jobs.clone())
            .map_err(|e| format!("cannot make the network face's service: {}", e.message))?;
        Ok(Self {
            daemon: daemon.clone(),
            project_root,
            // Made by the face itself, not from an `open` (`Value::Null`): a restart in
            // place carries it apart from the others (src/daemon/carry.rs).
            hosted: daemon.state.add_service(service, FACE_CONN, serde_json::Value::Null),
            started: Mutex::new(HashMap::new()),
            watchers: watch::Watchers::default(),
        })
    }

    /// What each job the face started asked for, for a restart in place.
    pub fn carry_started(&self) -> Vec<carried::CarriedStart> {
        let started = lock(&self.started);
        let mut all: Vec<carried::CarriedStart> = started
            .iter()
            .map(|(handle, s)| carried::CarriedStart {
                handle: *handle,
                tag: s.tag.clone(),
                config: s.config.clone(),
            })
            .collect();
        all.sort_by_key(|s| s.handle);
        all
    }

    pub fn service(&self) -> &Arc<Hosted> {
        &self.hosted
    }

    /// Keeps what envd's `Start` gave the job `local` of the face's service.
    fn remember(&self, local: u32, tag: Option<String>, config: pb::ProcessConfig) {
        let mut started = lock(&self.started);
        // Entries of jobs the core has forgotten go when a new one comes.
        let live: HashSet<u32> = self.hosted.service.handles().iter().map(|(h, _)| *h).collect();
        started.retain(|h, _| live.contains(h) || *h == local);
        started.insert(local, Started { tag, config });
    }

    /// A job by pid or tag: a running one first, else the latest that ended (Connect
    /// to an ended job gets its end). `None` selector: `invalid_argument`.
    pub fn find(&self, daemon: &Daemon, selector: Option<&pb::ProcessSelector>) -> Result<Found, ConnectError> {
        let selector = selector
            .and_then(|s| s.selector.as_ref())
            .ok_or_else(|| ConnectError::invalid("no process selector (pid or tag)"))?;
        let mut candidates: Vec<(Arc<Hosted>, JobPid)> = Vec::new();
        match selector {
            pb::process_selector::Selector::Pid(want) => {
                for hosted in daemon.state.all_services() {
                    for job in hosted.service.pids() {
                        if job.pid == *want {
                            candidates.push((hosted.clone(), job));
                        }
                    }
                }
            }
            pb::process_selector::Selector::Tag(tag) => {
                let locals: HashSet<u32> = lock(&self.started)
                    .iter()
                    .filter(|(_, s)| s.tag.as_deref() == Some(tag.as_str()))
                    .map(|(h, _)| *h)
                    .collect();
                for job in self.hosted.service.pids() {
                    if locals.contains(&job.handle) {
                        candidates.push((self.hosted.clone(), job));
                    }
                }
            }
        }
        let mut best: Option<Found> = None;
        for (hosted, job) in candidates {
            let handle = daemon.state.global(&hosted, job.handle, None);
            if best
                .as_ref()
                .is_none_or(|b| (job.running, handle) > (b.running, b.handle))
            {
                best = Some(Found {
                    hosted,
                    local: job.handle,
                    handle,
                    pid: job.pid,
                    running: job.running,
                    pty: job.pty,
                });
            }
        }
        best.ok_or_else(|| {
            let what = match selector {
                pb::process_selector::Selector::Pid(pid) => format!("pid {pid}"),
                pb::process_selector::Selector::Tag(tag) => format!("tag {tag:?}"),
            };
            ConnectError::new(Code::NotFound, format!("process with {what} not found"))
        })
    }

    /// As `find`, for calls that act on a running process (input, signals, resize).
    pub fn find_running(&self, daemon: &Daemon, selector: Option<&pb::ProcessSelector>) -> Result<Found, ConnectError> {
        let found = self.find(daemon, selector)?;
        if !found.running {
            return Err(ConnectError::new(
                Code::NotFound,
                format!("process with pid {} has ended", found.pid),
            ));
        }
        Ok(found)
    }

    /// Every running job of every service, with the config it was started with (a job
    /// another client started: its command line as `cmd`, no args, its directory as an
    /// absolute `cwd`, as envd gives it).
    pub fn list(&self, daemon: &Daemon) -> Vec<pb::ProcessInfo> {
        let started = lock(&self.started);
        let mut all = Vec::new();
        for hosted in daemon.state.all_services() {
            // The services' own records, no process table read: a List of many
            // running jobs stays cheap.
            for job in hosted.service.running() {
                let handle = daemon.state.global(&hosted, job.handle, None);
                let ours = Arc::ptr_eq(&hosted, &self.hosted)
                    .then(|| started.get(&job.handle))
                    .flatten();
                let (config, tag) = match ours {
                    Some(s) => (s.config.clone(), s.tag.clone()),
                    None => (
                        pb::ProcessConfig {
                            cmd: job.command,
                            args: Vec::new(),
                            envs: HashMap::new(),
                            cwd: Some(job.directory.display().to_string()),
                        },
                        None,
                    ),
                };
                all.push((
                    handle,
                    pb::ProcessInfo {
                        config: Some(config),
                        pid: job.pid,
                        tag,
                    },
                ));
            }
        }
        all.sort_by_key(|(h, _)| *h);
        all.into_iter().map(|(_, p)| p).collect()
    }
}

/// The core's error as a Connect error.
/// The face's service's configuration (also what a restart in place makes it again
/// with: src/daemon/carry.rs).
pub fn face_config(root: PathBuf) -> ServiceConfig {
    ServiceConfig {
        project_root: Some(root),
        max_jobs: Some(MAX_JOBS),
        keep_streams: true,
        ..ServiceConfig::default()
    }
}

pub fn connect_error(e: &ServiceError) -> ConnectError {
    let code = match e.code {
        ErrorCode::ProcessNotFound => Code::NotFound,
        ErrorCode::LimitReached => Code::ResourceExhausted,
        ErrorCode::InvalidArgument
        | ErrorCode::InvalidDirectory
        | ErrorCode::InvalidPattern
        | ErrorCode::SpawnFailed => Code::InvalidArgument,
        ErrorCode::SandboxUnavailable => Code::FailedPrecondition,
    };
    ConnectError::new(code, format!("{}: {}", e.code.as_str(), e.message))
}
