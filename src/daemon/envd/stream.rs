//! `Start` and `Connect`'s server streams: a start event with the pid, the job's bytes
//! as data events (stdout and stderr apart in pipes mode, `pty` in a terminal) as they
//! come, a keepalive after each quiet interval, then the end event. The job is read,
//! never driven, from here: a client that goes away ends its stream, not the job (a
//! `Connect` later picks it up, and, unlike E2B #1352, is sent what it prints from
//! then on without stopping).
//!
//! The bytes come from the core's raw stream (src/output/raw_stream.rs) at a cursor the
//! stream keeps, woken by the core's output notifications: nothing polls, and a reader
//! that falls more than `RAW_STREAM_KEEP` behind skips what was dropped.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::header::HeaderMap;
use hyper::{Response, StatusCode};
use tokio::sync::{mpsc, Notify};

use super::connect_error;
use super::proto::process as pb;
use super::Envd;
use crate::daemon::protocol::body::{channel, Body};
use crate::daemon::protocol::connect::{self, encode, envelope, Code, Codec, ConnectError};
use crate::daemon::state::Hosted;
use crate::job::JobStatus;
use crate::output::persist::Stream;
use crate::service::request::Launched;
use crate::service::request::{RunRequest, RunResult};

/// envd's default quiet interval before a keepalive, when the client names none
/// (`Keepalive-Ping-Interval`, in seconds).
const DEFAULT_KEEPALIVE: Duration = Duration::from_secs(90);
/// Bytes read from the job per data event at most.
const CHUNK: usize = 64 * 1024;
/// Messages queued for a slow client before the stream waits for it.
const DEPTH: usize = 16;

/// The keepalive interval a request asks for (1 s to 1 h), else envd's default.
pub fn keepalive_of(headers: &HeaderMap) -> Duration {
    headers
        .get("keepalive-ping-interval")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&s| (1..=3600).contains(&s))
        .map_or(DEFAULT_KEEPALIVE, Duration::from_secs)
}

/// Which reply message carries the events.
#[derive(Clone, Copy)]
enum Reply {
    Start,
    Connect,
}

fn frame(codec: Codec, reply: Reply, event: pb::process_event::Event) -> Bytes {
    let event = Some(pb::ProcessEvent { event: Some(event) });
    let bytes = match reply {
        Reply::Start => encode(codec, &pb::StartResponse { event }),
        Reply::Connect => encode(codec, &pb::ConnectResponse { event }),
    };
    envelope(0, &bytes)
}

fn streaming_response(codec: Codec, body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(connect::streaming_type(codec)),
    );
    response
}

/// A stream of one end message: the error.
fn failed(codec: Codec, e: &ConnectError) -> Response<Body> {
    crate::daemon::protocol::body::full(StatusCode::OK, connect::streaming_type(codec), e.end_stream())
}

/// `StartRequest` → the core's request: argv mode (`cmd` and `args`, no shell added),
/// `envs` added to the environment, `cwd` (default: the face's project root), a
/// terminal of the asked size or pipes, and `Connect-Timeout-Ms` as the job's time
/// limit (envd's meaning: the job is killed then, status `timed_out`).
pub fn run_request(
    request: &pb::StartRequest,
    timeout_ms: Option<u64>,
    root: &Path,
) -> Result<RunRequest, ConnectError> {
    let process = request
        .process
        .as_ref()
        .ok_or_else(|| ConnectError::invalid("no process config"))?;
    if process.cmd.is_empty() {
        return Err(ConnectError::invalid("process.cmd is empty"));
    }
    let mut run = RunRequest::new(process.cmd.clone());
    run.args = Some(process.args.clone());
    let mut env: Vec<(String, String)> = process.envs.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    env.sort();
    run.env = env;
    run.directory = match process.cwd.as_deref().filter(|c| !c.is_empty()) {
        Some(cwd) => Some(inside_root(cwd, root)?),
        None => None,
    };
    run.detect_input = false;
    match &request.pty {
        Some(pty) => {
            run.mode = crate::job::spawn::Mode::Pty;
            if let Some(size) = &pty.size {
                (run.cols, run.rows) = super::decode::terminal_size(size)?;
            }
        }
        None => run.mode = crate::job::spawn::Mode::Pipes,
    }
    run.timeout = timeout_ms.filter(|&t| t > 0).map(Duration::from_millis);
    Ok(run)
}

/// envd's `cwd` is absolute; the core's directory is relative to the project root and
/// never outside it (src/job/spawn/directory.rs re-checks it against symlinks). An
/// absolute path inside the root becomes relative; one outside it is refused: the
/// face's jobs are confined to `--project-root` as every client's are (`/` lifts it).
fn inside_root(cwd: &str, root: &Path) -> Result<String, ConnectError> {
    let path = Path::new(cwd);
    if !path.is_absolute() {
        return Ok(cwd.to_string());
    }
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    match canonical.strip_prefix(root).or_else(|_| path.strip_prefix(root)) {
        Ok(relative) if relative.as_os_str().is_empty() => Ok(".".into()),
        Ok(relative) => Ok(relative.to_string_lossy().into_owned()),
        Err(_) => Err(ConnectError::invalid(format!(
            "INVALID_DIRECTORY: cwd {cwd} is outside the project root {} (the daemon's --project-root)",
            root.display()
        ))),
    }
}

pub fn start(
    envd: Arc<Envd>,
    codec: Codec,
    request: pb::StartRequest,
    timeout_ms: Option<u64>,
    keepalive: Duration,
) -> Response<Body> {
    let root = envd.service().service.project_root().to_path_buf();
    let run = match run_request(&request, timeout_ms, &root) {
        Ok(run) => run,
        Err(e) => return failed(codec, &e),
    };
    let pty = request.pty.is_some();
    let deadline = deadline_of(timeout_ms);
    let hosted = envd.service().clone();
    let (local, pid) = match hosted.service.launch(run) {
        Ok(Launched::Running { handle, pid }) => (handle, pid),
        Ok(Launched::Failed(result)) => {
            let message = result
                .error
                .unwrap_or_else(|| "the process could not be started".into());
            return failed(codec, &ConnectError::invalid(message));
        }
        Err(e) => return failed(codec, &connect_error(&e)),
    };
    // Its daemon handle now: a unix-socket client's job list names it from the start.
    envd.daemon.state.global(&hosted, local, Some(true));
    envd.remember(local, request.tag.clone(), request.process.clone().unwrap_or_default());
    if request.stdin == Some(false) && !pty {
        // envd's `stdin: false`: the program reads end of file at once.
        let _ = hosted.service.close_input(local);
    }
    let (tx, body) = channel(DEPTH);
    let pump = Pump {
        tx,
        codec,
        reply: Reply::Start,
        hosted,
        local,
        pid,
        pty,
        keepalive,
        deadline,
    };
    tokio::spawn(pump.run(0));
    streaming_response(codec, body)
}

/// When a stream's `Connect-Timeout-Ms` runs out (none: never).
fn deadline_of(timeout_ms: Option<u64>) -> Option<Instant> {
    timeout_ms
        .filter(|&t| t > 0)
        .and_then(|t| Instant::now().checked_add(Duration::from_millis(t)))
}

/// How a stream ends when its deadline passed: Connect's `deadline_exceeded`, as envd's
/// (connect-go's) does, which the SDKs raise as their TimeoutError.
fn deadline_exceeded() -> ConnectError {
    ConnectError::new(
        Code::DeadlineExceeded,
        "the request's deadline (Connect-Timeout-Ms) passed",
    )
}

pub fn connect(
    envd: Arc<Envd>,
    codec: Codec,
    request: pb::ConnectRequest,
    timeout_ms: Option<u64>,
    keepalive: Duration,
) -> Response<Body> {
    let found = match envd.find(&envd.daemon, request.process.as_ref()) {
        Ok(found) => found,
        Err(e) => return failed(codec, &e),
    };
    // From now on, unless a replay offset is asked for (our extension).
    let from = match request.replay_from {
        Some(offset) => offset,
        None => match found.hosted.service.raw_total(found.local) {
            Ok(total) => total,
            Err(e) => return failed(codec, &connect_error(&e)),
        },
    };
    let (tx, body) = channel(DEPTH);
    let pump = Pump {
        tx,
        codec,
        reply: Reply::Connect,
        hosted: found.hosted,
        local: found.local,
        pid: found.pid,
        pty: found.pty,
        keepalive,
        deadline: deadline_of(timeout_ms),
    };
    tokio::spawn(pump.run(from));
    streaming_response(codec, body)
}

struct Pump {
    tx: mpsc::Sender<Bytes>,
    codec: Codec,
    reply: Reply,
    hosted: Arc<Hosted>,
    local: u32,
    pid: u32,
    pty: bool,
    keepalive: Duration,
    /// `Connect-Timeout-Ms` from the request's arrival: past it the stream ends with
    /// `deadline_exceeded`. A `Start` job is killed then too (the core's time limit,
    /// `run_request`); a `Connect`ed one runs on, as in envd.
    deadline: Option<Instant>,
}

impl Pump {
    async fn send(&self, event: pb::process_event::Event) -> bool {
        self.tx.send(frame(self.codec, self.reply, event)).await.is_ok()
    }

    async fn run(self, from: u64) {
        use pb::process_event::Event;
        if !self
            .send(Event::Start(pb::process_event::StartEvent { pid: self.pid }))
            .await
        {
            return;
        }
        let woken = Arc::new(Notify::new());
        let wake = woken.clone();
        let subscription = match self
            .hosted
            .service
            .subscribe(self.local, Box::new(move || wake.notify_one()))
        {
            Ok(s) => s,
            Err(e) => {
                let _ = self.tx.send(connect_error(&e).end_stream()).await;
                return;
            }
        };
        let ended = self.follow(&subscription, &woken, from).await;
        subscription.cancel();
        let end = match ended {
            Ok(true) | Ok(false) => connect::end_stream(None),
            Err(e) => e.end_stream(),
        };
        let _ = self.tx.send(end).await;
    }

    /// Sends data until the job's end (`Ok(true)`) or the client leaves (`Ok(false)`).
    async fn follow(
        &self,
        subscription: &crate::job::events::Subscription,
        woken: &Notify,
        mut cursor: u64,
    ) -> Result<bool, ConnectError> {
        use pb::process_event::Event;
        loop {
            // Taken before the bytes are read: an exit seen here has all its output in.
            let exited = subscription.take_event().is_some_and(|e| e.exited);
            loop {
                let read = self
                    .hosted
                    .service
                    .read_raw(self.local, cursor, CHUNK)
                    .map_err(|e| connect_error(&e))?;
                if read.pieces.is_empty() {
                    break;
                }
                cursor = read.next;
                for (stream, bytes) in read.pieces {
                    let output = match (self.pty, stream) {
                        (true, _) => pb::process_event::data_event::Output::Pty(bytes),
                        (false, Stream::Stdout) => pb::process_event::data_event::Output::Stdout(bytes),
                        (false, Stream::Stderr) => pb::process_event::data_event::Output::Stderr(bytes),
                    };
                    let data = pb::process_event::DataEvent { output: Some(output) };
                    if !self.send(Event::Data(data)).await {
                        return Ok(false);
                    }
                }
            }
            if exited {
                let result = self
                    .hosted
                    .service
                    .result(self.local, 1)
                    .map_err(|e| connect_error(&e))?;
                // Killed for this very stream's deadline (a `Start`'s time limit): the
                // deadline's error, not an end event, as envd ends it.
                if result.status == JobStatus::TimedOut && matches!(self.reply, Reply::Start) {
                    return Err(deadline_exceeded());
                }
                return Ok(self.send(Event::End(end_event(&result))).await);
            }
            let deadline = async {
                match self.deadline {
                    Some(at) => tokio::time::sleep_until(at.into()).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = woken.notified() => {}
                _ = deadline => return Err(deadline_exceeded()),
                _ = tokio::time::sleep(self.keepalive) => {
                    if !self.send(Event::Keepalive(pb::process_event::KeepAlive {})).await {
                        return Ok(false);
                    }
                }
                _ = self.tx.closed() => return Ok(false),
            }
        }
    }
}

/// The end as envd reports it (Go's `os.ProcessState`): a process that exited has its
/// code, `exited: true` and status `exit status N`; one a signal ended has exit code
/// -1, `exited: false` and status `signal: <name>`; `error` is the status unless the
/// exit was clean.
pub fn end_event(result: &RunResult) -> pb::process_event::EndEvent {
    let (exit_code, exited, status) = match (result.signal, result.exit_code) {
        (Some(signal), _) => (-1, false, format!("signal: {}", signal_name(signal))),
        (None, Some(code)) => (code, true, format!("exit status {code}")),
        (None, None) => (
            -1,
            false,
            result
                .error
                .clone()
                .unwrap_or_else(|| result.status.as_str().to_string()),
        ),
    };
    let error = (!(exited && exit_code == 0)).then(|| status.clone());
    pb::process_event::EndEvent {
        exit_code,
        exited,
        status,
        error,
    }
}

/// Go's names of the signals (its `syscall.Signal.String()` on Linux).
fn signal_name(signal: i32) -> String {
    let name = match signal {
        1 => "hangup",
        2 => "interrupt",
        3 => "quit",
        4 => "illegal instruction",
        5 => "trace/breakpoint trap",
        6 => "aborted",
        7 => "bus error",
        8 => "floating point exception",
        9 => "killed",
        10 => "user defined signal 1",
        11 => "segmentation fault",
        12 => "user defined signal 2",
        13 => "broken pipe",
        14 => "alarm clock",
        15 => "terminated",
        other => return format!("signal {other}"),
    };
    name.to_string()
}
