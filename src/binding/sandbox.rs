//! The sandbox's JS objects (`ServiceOptions.sandbox`, `RunOptions.sandbox`,
//! `RunResult.sandbox`, `ProcessInfo.sandbox`) and their conversion from and to
//! `native_shell_service::sandbox`. What each field does: README.md "Sandbox" and docs/sandbox.md.

use napi::bindgen_prelude::Either;
use napi_derive::napi;

use native_shell_service::sandbox::Enforced;
use native_shell_service::service::options::{FlagOr, NetworkArgs, SandboxArgs};

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
    /// Not readable by jobs, besides the credential stores left out by default (`~/.ssh`,
    /// `~/.aws`, `~/.netrc`...: docs/sandbox.md): absolute, `~/...`, or relative to the
    /// project root; need not exist yet.
    pub read_deny: Option<Vec<String>>,
    /// Readable although left out (`~/.ssh` for a run that pushes over SSH): absolute,
    /// `~/...`, or relative to the project root; must exist.
    pub read_allow: Option<Vec<String>>,
    /// System V IPC (`shmget`, `semget`, `msgget`... : other processes' shared memory,
    /// semaphores and message queues) is allowed; refused (`EPERM`) by default.
    pub sysv_ipc: Option<bool>,
    /// Pathname unix sockets outside the writable paths the job may connect to (the
    /// D-Bus session bus, an ssh-agent): none by default. Each is resolved once, when
    /// the sandbox is made, to the socket file found then (symlinks followed).
    pub unix_sockets: Option<Vec<String>>,
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
    /// What confines connecting to pathname unix sockets: Landlock (ABI 9), the
    /// service's seccomp supervisor (below ABI 9), or nothing (macOS).
    #[napi(ts_type = "'landlock' | 'supervised' | 'open'")]
    pub unix_sockets: String,
    /// What differs from what was asked, and why.
    pub notes: Vec<String>,
    /// The environment variables left out because they look like credentials (names
    /// only), unless `sandbox.env` allowed them.
    pub env_dropped: Vec<String>,
    /// The project's git hooks and configuration files (relative paths) the job
    /// changed, which the service put back: they would run unconfined at the user's
    /// next `git commit` (docs/sandbox.md).
    pub restored: Vec<String>,
    /// What jobs may not read although the rest of its directory is readable: the
    /// credential stores that exist, the `readDeny` paths and the service's output
    /// folders (`ioDir`). One that stays readable (inside the project root) is in `notes`.
    pub read_denied: Vec<String>,
    /// System V IPC is allowed (`sandbox.sysvIpc`).
    pub sysv_ipc: bool,
}

/// The JS `sandbox` option as the core's plain one (`native_shell_service::service::options`, which
/// checks it).
pub fn flag_or(option: Option<Either<bool, SandboxOptions>>) -> Option<FlagOr<SandboxArgs>> {
    option.map(|o| match o {
        Either::A(flag) => FlagOr::Flag(flag),
        Either::B(o) => FlagOr::Options(SandboxArgs {
            write: o.write,
            read_only: o.read_only,
            network: o.network.map(|n| match n {
                Either::A(flag) => FlagOr::Flag(flag),
                Either::B(ports) => FlagOr::Options(NetworkArgs {
                    tcp_ports: ports.tcp_ports,
                }),
            }),
            read: o.read,
            env: o.env,
            read_deny: o.read_deny,
            read_allow: o.read_allow,
            sysv_ipc: o.sysv_ipc,
            unix_sockets: o.unix_sockets,
        }),
    })
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
            unix_sockets: e.unix_sockets.to_string(),
            notes: e.notes,
            env_dropped: e.env_dropped,
            restored: e.restored,
            read_denied: e.read_denied,
            sysv_ipc: e.sysv_ipc,
        }
    }
}
