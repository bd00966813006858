//! The caller's options as the JS contract names them (README.md "API", index.d.ts),
//! in plain Rust, and their checks and defaults: one place for both front-ends (the
//! napi binding fills these from JS objects, the daemon from JSON), so both refuse the
//! same bad input with the same `INVALID_ARGUMENT` message. Numbers are `f64` as JS
//! gives them; `whole` checks each.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use crate::base::error::{Result, ServiceError};
use crate::base::limits::MAX_OUTPUT_SIZE;
use crate::output::screen::MAX_SCROLLBACK_LINES;
use crate::output::View;
use crate::sandbox::{Network, SandboxChoice, SandboxSpec};
use crate::service::request::{self as core, InputRequest, RunRequest, ServiceConfig, WaitRequest};

/// `true`/`false` or an object of options (`sandbox`, `sandbox.network`).
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum FlagOr<T> {
    Flag(bool),
    Options(T),
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxArgs {
    pub write: Option<Vec<String>>,
    pub read_only: Option<bool>,
    pub network: Option<FlagOr<NetworkArgs>>,
    pub read: Option<Vec<String>>,
    pub env: Option<Vec<String>>,
    pub read_deny: Option<Vec<String>>,
    pub read_allow: Option<Vec<String>>,
    pub sysv_ipc: Option<bool>,
    pub unix_sockets: Option<Vec<String>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkArgs {
    pub tcp_ports: Vec<f64>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceArgs {
    pub project_root: Option<String>,
    pub io_dir: Option<String>,
    pub session_id: Option<String>,
    /// Already a plain object of strings (the binding checks the JS value's shape).
    pub env: Option<BTreeMap<String, String>>,
    /// The daemon's clients only: the client process's environment, which its jobs
    /// inherit in place of the daemon's (`ServiceConfig::inherited_env`).
    pub inherit_env: Option<BTreeMap<String, String>>,
    pub max_jobs: Option<f64>,
    pub keep_finished_jobs: Option<f64>,
    pub history_limit: Option<f64>,
    pub persist_output: Option<bool>,
    pub sandbox: Option<FlagOr<SandboxArgs>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunArgs {
    pub directory: Option<String>,
    pub description: Option<String>,
    pub args: Option<Vec<String>>,
    pub mode: Option<String>,
    pub shell: Option<String>,
    pub cols: Option<f64>,
    pub rows: Option<f64>,
    pub scrollback: Option<f64>,
    pub env: Option<BTreeMap<String, String>>,
    pub clear_env: Option<bool>,
    pub timeout_ms: Option<f64>,
    pub callback_delay_ms: Option<f64>,
    pub callback_pattern: Option<String>,
    pub max_output_size: Option<f64>,
    pub detect_input: Option<bool>,
    pub sandbox: Option<FlagOr<SandboxArgs>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputArgs {
    pub append_newline: Option<bool>,
    pub delay_ms: Option<f64>,
    pub pattern: Option<String>,
    pub timeout_ms: Option<f64>,
    pub keys: Option<Vec<String>>,
    pub max_output_size: Option<f64>,
    pub detect_input: Option<bool>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitOptionsArgs {
    pub pattern: Option<String>,
    pub timeout_ms: Option<f64>,
    pub max_output_size: Option<f64>,
    pub from_start: Option<bool>,
    pub detect_input: Option<bool>,
}

/// A non-negative whole number from JS, or `INVALID_ARGUMENT` naming the option.
pub fn whole(name: &str, value: Option<f64>, max: f64) -> Result<Option<u64>> {
    match value {
        None => Ok(None),
        Some(v) if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= max => Ok(Some(v as u64)),
        Some(v) => Err(ServiceError::invalid(format!(
            "{name} must be a whole number from 0 to {max}, got {v}"
        ))),
    }
}

/// A job's handle from JS: a whole number that fits a `u32`.
pub fn handle_arg(handle: f64) -> Result<u32> {
    Ok(whole("handle", Some(handle), f64::from(u32::MAX))?.unwrap_or_default() as u32)
}

/// Lines of scrollback a caller may name (a job keeps at most this many).
pub fn scrollback_arg(value: Option<f64>) -> Result<usize> {
    Ok(whole("scrollback", value, MAX_SCROLLBACK_LINES as f64)?.unwrap_or(0) as usize)
}

/// Milliseconds, at most a day.
pub fn millis(name: &str, value: Option<f64>) -> Result<Option<Duration>> {
    Ok(whole(name, value, 86_400_000.0)?.map(Duration::from_millis))
}

/// A terminal dimension (`cols`, `rows`).
pub fn size(name: &str, value: Option<f64>, default: u16) -> Result<u16> {
    Ok(whole(name, value, f64::from(u16::MAX))?.map_or(default, |v| v as u16))
}

pub fn max_output(value: Option<f64>) -> Result<usize> {
    Ok(whole("maxOutputSize", value, MAX_OUTPUT_SIZE as f64)?.map_or(core::DEFAULT_MAX_OUTPUT, |v| v as usize))
}

/// `getProcessOutput`'s `view`: text by default.
pub fn view_arg(view: Option<&str>) -> Result<View> {
    match view {
        None | Some("text") => Ok(View::Text),
        Some("screen") => Ok(View::Screen),
        Some("raw") => Ok(View::Raw),
        Some(other) => Err(ServiceError::invalid(format!(
            "view must be 'text', 'screen' or 'raw', got {other:?}"
        ))),
    }
}

/// `readOutput`'s `since` and `maxBytes`.
pub fn read_args(since: Option<f64>, max_bytes: Option<f64>) -> Result<(u64, Option<usize>)> {
    let since = whole("since", since, 9e15)?.unwrap_or(0);
    let max = whole("maxBytes", max_bytes, 9e15)?.map(|v| v as usize);
    Ok((since, max))
}

fn env_pairs(env: Option<BTreeMap<String, String>>) -> Vec<(String, String)> {
    // A BTreeMap iterates sorted by name, as the service expects.
    env.map(|m| m.into_iter().collect()).unwrap_or_default()
}

pub fn sandbox_spec(options: SandboxArgs) -> Result<SandboxSpec> {
    let network = match options.network {
        None | Some(FlagOr::Flag(false)) => Network::Off,
        Some(FlagOr::Flag(true)) => Network::On,
        Some(FlagOr::Options(ports)) => {
            Network::TcpPorts(ports.tcp_ports.iter().map(|&p| port(p)).collect::<Result<Vec<u16>>>()?)
        }
    };
    Ok(SandboxSpec {
        write: options.write.unwrap_or_default(),
        read_only: options.read_only.unwrap_or(false),
        network,
        read: options.read,
        env: options.env.unwrap_or_default(),
        read_deny: options.read_deny.unwrap_or_default(),
        read_allow: options.read_allow.unwrap_or_default(),
        sysv_ipc: options.sysv_ipc.unwrap_or(false),
        unix_sockets: options.unix_sockets.unwrap_or_default(),
    })
}

fn port(value: f64) -> Result<u16> {
    if value.fract() == 0.0 && (1.0..=65535.0).contains(&value) {
        Ok(value as u16)
    } else {
        Err(ServiceError::invalid(format!(
            "sandbox tcpPorts must be whole numbers from 1 to 65535, got {value}"
        )))
    }
}

/// `ServiceOptions.sandbox`: `true` is the default sandbox, `false` none.
pub fn service_sandbox(option: Option<FlagOr<SandboxArgs>>) -> Result<Option<SandboxSpec>> {
    match option {
        None | Some(FlagOr::Flag(false)) => Ok(None),
        Some(FlagOr::Flag(true)) => Ok(Some(SandboxSpec::default())),
        Some(FlagOr::Options(options)) => sandbox_spec(options).map(Some),
    }
}

/// `RunOptions.sandbox`: absent is the service's, `false` none, `true` the service's
/// or else the default one, an object the run's own.
pub fn run_sandbox(option: Option<FlagOr<SandboxArgs>>) -> Result<SandboxChoice> {
    match option {
        None => Ok(SandboxChoice::ServiceDefault),
        Some(FlagOr::Flag(false)) => Ok(SandboxChoice::Off),
        Some(FlagOr::Flag(true)) => Ok(SandboxChoice::On),
        Some(FlagOr::Options(options)) => sandbox_spec(options).map(SandboxChoice::Custom),
    }
}

impl ServiceArgs {
    pub fn into_config(self) -> Result<ServiceConfig> {
        Ok(ServiceConfig {
            project_root: self.project_root.map(Into::into),
            io_dir: self.io_dir.map(Into::into),
            session_id: self.session_id,
            env: env_pairs(self.env),
            inherited_env: self.inherit_env.map(|m| m.into_iter().collect()),
            max_jobs: whole("maxJobs", self.max_jobs, 100_000.0)?.map(|v| v as usize),
            keep_finished_jobs: whole("keepFinishedJobs", self.keep_finished_jobs, 100_000.0)?.map(|v| v as usize),
            history_limit: whole("historyLimit", self.history_limit, 1_000_000.0)?.map(|v| v as usize),
            persist_output: self.persist_output,
            disk_cap_bytes: None,
            keep_job_dirs: None,
            sandbox: service_sandbox(self.sandbox)?,
            keep_streams: false,
        })
    }
}

pub fn run_request(command: String, options: Option<RunArgs>) -> Result<RunRequest> {
    let mut req = RunRequest::new(command);
    let Some(o) = options else {
        return Ok(req);
    };
    req.mode = match o.mode.as_deref() {
        None | Some("pty") => crate::job::spawn::Mode::Pty,
        Some("pipes") => crate::job::spawn::Mode::Pipes,
        Some(other) => {
            return Err(ServiceError::invalid(format!(
                "mode must be 'pty' or 'pipes', got {other:?}"
            )))
        }
    };
    req.shell = crate::job::spawn::command::Shell::parse(o.shell.as_deref())?;
    req.args = o.args;
    req.description = o.description;
    req.directory = o.directory;
    req.cols = size("cols", o.cols, core::DEFAULT_COLS)?;
    req.rows = size("rows", o.rows, core::DEFAULT_ROWS)?;
    req.scrollback = scrollback_arg(o.scrollback)?;
    req.env = env_pairs(o.env);
    req.clear_env = o.clear_env.unwrap_or(false);
    req.timeout = millis("timeoutMs", o.timeout_ms)?;
    req.callback_delay = millis("callbackDelayMs", o.callback_delay_ms)?;
    req.callback_pattern = o.callback_pattern;
    req.max_output_size = max_output(o.max_output_size)?;
    req.detect_input = o.detect_input.unwrap_or(true);
    req.sandbox = run_sandbox(o.sandbox)?;
    Ok(req)
}

pub fn input_request(input: String, options: Option<InputArgs>) -> Result<InputRequest> {
    let o = options.unwrap_or_default();
    Ok(InputRequest {
        input,
        keys: o.keys.unwrap_or_default(),
        append_newline: o.append_newline.unwrap_or(true),
        delay: Some(millis("delayMs", o.delay_ms)?.unwrap_or(core::DEFAULT_INPUT_DELAY)),
        pattern: o.pattern,
        timeout: Some(millis("timeoutMs", o.timeout_ms)?.unwrap_or(core::DEFAULT_INPUT_TIMEOUT)),
        max_output_size: max_output(o.max_output_size)?,
        detect_input: o.detect_input.unwrap_or(true),
    })
}

/// `waitFor` options: pattern, timeout (default 30 s), output limit, from-start.
pub struct WaitArgs {
    pub pattern: Option<String>,
    pub timeout: Duration,
    pub max_output: usize,
    pub from_start: bool,
    pub detect_input: bool,
}

impl WaitArgs {
    pub fn request(&self) -> WaitRequest<'_> {
        WaitRequest {
            pattern: self.pattern.as_deref(),
            timeout: Some(self.timeout),
            max_output: self.max_output,
            from_start: self.from_start,
            detect_input: self.detect_input,
        }
    }
}

pub fn wait_args(options: Option<WaitOptionsArgs>) -> Result<WaitArgs> {
    let o = options.unwrap_or_default();
    Ok(WaitArgs {
        pattern: o.pattern,
        timeout: millis("timeoutMs", o.timeout_ms)?.unwrap_or(core::DEFAULT_INPUT_TIMEOUT),
        max_output: max_output(o.max_output_size)?,
        from_start: o.from_start.unwrap_or(false),
        detect_input: o.detect_input.unwrap_or(true),
    })
}
