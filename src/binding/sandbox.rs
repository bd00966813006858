//! The sandbox's JS objects (`ServiceOptions.sandbox`, `RunOptions.sandbox`,
//! `RunResult.sandbox`, `ProcessInfo.sandbox`) and their conversion from and to
//! `crate::sandbox`. What each field does: README.md "Sandbox" and docs/sandbox.md.

use napi::bindgen_prelude::Either;
use napi_derive::napi;

use crate::base::error::{Result, ServiceError};
use crate::sandbox::{Enforced, Network, SandboxChoice, SandboxSpec};

#[napi(object)]
pub struct SandboxOptions {
    /// Writable besides the project root: absolute, or relative to the project root.
    /// Resolved once, when the sandbox is made, and held open; a path inside the
    /// project, `/tmp` or (a run's) the service's `write` paths may not pass through a
    /// symlink.
    pub write: Option<Vec<String>>,
    /// The project root is read-only too.
    pub read_only: Option<bool>,
    /// `false` (the default): no TCP, UDP or other internet socket. `{ tcpPorts }`:
    /// TCP bind and connect on those ports only, on any address. `true`: unconfined.
    pub network: Option<Either<bool, SandboxNetwork>>,
    /// When given, reads are limited to the system directories, the project root, the
    /// writable paths and these: the home directory is otherwise unreadable.
    pub read: Option<Vec<String>>,
    /// Variables the job gets although they look like credentials: by default a
    /// sandboxed job's environment has none (names with TOKEN, SECRET, KEY, AUTH,
    /// PASSWORD..., values holding a private key or a known token; docs/sandbox.md).
    pub env: Option<Vec<String>>,
}

#[napi(object)]
pub struct SandboxNetwork {
    pub tcp_ports: Vec<f64>,
}

/// What confines a job (`null` in a result when nothing does).
#[napi(object, use_nullable = true)]
pub struct SandboxInfo {
    #[napi(ts_type = "'landlock' | 'seatbelt'")]
    pub mechanism: String,
    /// The kernel's Landlock ABI (Linux; 0 elsewhere).
    pub abi: u32,
    /// Every writable path: the project root (unless read-only), the `write` paths,
    /// the job's TMPDIR, `/tmp` (unless the service's files lie under it) and the
    /// terminal and null devices; each granted directory named where it is now.
    pub write: Vec<String>,
    /// The readable paths when reads are limited; `null`: everything but other devices.
    pub read: Option<Vec<String>>,
    pub read_only: bool,
    /// The job's own temporary directory (its `TMPDIR`), removed with the job.
    pub tmpdir: String,
    /// As enforced: `none`, `ports` (`tcpPorts` only) or `all`.
    #[napi(ts_type = "'none' | 'ports' | 'all'")]
    pub network: String,
    pub tcp_ports: Vec<u32>,
    /// Which parts the running kernel enforces: writes and reads (always), TCP ports
    /// (Landlock ABI 4), signal and abstract-socket scoping (ABI 6), the seccomp filter.
    pub filesystem: bool,
    pub tcp: bool,
    pub scoping: bool,
    pub seccomp: bool,
    /// What differs from what was asked, and why.
    pub notes: Vec<String>,
    /// The environment variables left out because they look like credentials (names
    /// only), unless `sandbox.env` allowed them.
    pub env_dropped: Vec<String>,
    /// The project's git hooks and configuration files (relative paths) the job
    /// changed, which the service put back: they would run unconfined at the user's
    /// next `git commit` (docs/sandbox.md).
    pub restored: Vec<String>,
}

pub fn spec(options: SandboxOptions) -> Result<SandboxSpec> {
    let network = match options.network {
        None | Some(Either::A(false)) => Network::Off,
        Some(Either::A(true)) => Network::On,
        Some(Either::B(ports)) => {
            Network::TcpPorts(ports.tcp_ports.iter().map(|&p| port(p)).collect::<Result<Vec<u16>>>()?)
        }
    };
    Ok(SandboxSpec {
        write: options.write.unwrap_or_default(),
        read_only: options.read_only.unwrap_or(false),
        network,
        read: options.read,
        env: options.env.unwrap_or_default(),
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
pub fn service_spec(option: Option<Either<bool, SandboxOptions>>) -> Result<Option<SandboxSpec>> {
    match option {
        None | Some(Either::A(false)) => Ok(None),
        Some(Either::A(true)) => Ok(Some(SandboxSpec::default())),
        Some(Either::B(options)) => spec(options).map(Some),
    }
}

/// `RunOptions.sandbox`: absent is the service's, `false` none, `true` the service's
/// or else the default one, an object the run's own.
pub fn run_choice(option: Option<Either<bool, SandboxOptions>>) -> Result<SandboxChoice> {
    match option {
        None => Ok(SandboxChoice::ServiceDefault),
        Some(Either::A(false)) => Ok(SandboxChoice::Off),
        Some(Either::A(true)) => Ok(SandboxChoice::On),
        Some(Either::B(options)) => spec(options).map(SandboxChoice::Custom),
    }
}

impl From<Enforced> for SandboxInfo {
    fn from(e: Enforced) -> Self {
        Self {
            mechanism: e.mechanism.as_str().to_string(),
            abi: e.abi,
            write: e.write,
            read: e.read,
            read_only: e.read_only,
            tmpdir: e.tmpdir,
            network: e.network.to_string(),
            tcp_ports: e.tcp_ports.into_iter().map(u32::from).collect(),
            filesystem: e.filesystem,
            tcp: e.tcp,
            scoping: e.scoping,
            seccomp: e.seccomp,
            notes: e.notes,
            env_dropped: e.env_dropped,
            restored: e.restored,
        }
    }
}
