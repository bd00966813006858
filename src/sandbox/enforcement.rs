//! What the running platform can enforce (`Support`, found once by the platform) and what
//! a job's result reports as in force (`Enforced`): the mode, the network as enforced,
//! who decides unix sockets, and in `notes` what differs from what was asked.

use super::*;

/// What the running platform can enforce, found once (`crate::platform::sandbox_support`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Support {
    pub mechanism: Mechanism,
    /// The Landlock ABI (Linux); 0 elsewhere.
    pub abi: u32,
    /// A seccomp filter can be installed (Linux).
    pub seccomp: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mechanism {
    Landlock,
    Seatbelt,
}

impl Mechanism {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Landlock => "landlock",
            Self::Seatbelt => "seatbelt",
        }
    }
}

/// Landlock ABI from which each part is enforced (docs/sandbox.md has the table).
pub const ABI_TCP: u32 = 4;
pub const ABI_SCOPE: u32 = 6;
/// Connecting to pathname unix sockets (`LANDLOCK_ACCESS_FS_RESOLVE_UNIX`).
pub const ABI_UNIX: u32 = 9;

impl Support {
    /// TCP ports are filtered (Landlock ABI 4; Seatbelt filters by port too).
    pub fn tcp(&self) -> bool {
        self.mechanism == Mechanism::Seatbelt || self.abi >= ABI_TCP
    }

    /// Signals to and abstract unix sockets of processes outside are refused.
    pub fn scoping(&self) -> bool {
        self.mechanism == Mechanism::Seatbelt || self.abi >= ABI_SCOPE
    }

    /// Who decides which pathname unix sockets a job reaches (`Enforced::unix_sockets`).
    pub fn unix_sockets(&self) -> &'static str {
        match self.mechanism {
            Mechanism::Seatbelt => "open",
            Mechanism::Landlock if self.abi >= ABI_UNIX => "landlock",
            Mechanism::Landlock => "supervised",
        }
    }

    /// Below Landlock ABI 9, the job's `connect` and addressed sends go to the
    /// service's supervisor (src/platform/linux/sandbox/supervise/).
    pub fn supervised_unix(&self) -> bool {
        self.unix_sockets() == "supervised"
    }
}

/// The network a job gets, after what the kernel can do: ports asked for on a kernel
/// that cannot filter ports become no internet at all (fail closed).
pub fn effective_network(network: &Network, support: &Support) -> Network {
    match network {
        Network::TcpPorts(_) if !support.tcp() => Network::Off,
        other => other.clone(),
    }
}

/// What a job's result reports: `null` when unconfined, else this.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enforced {
    pub mechanism: Mechanism,
    pub abi: u32,
    /// Every writable path: the project root (unless read-only), the extra paths, the
    /// job's temporary directory, and the terminal and null devices.
    pub write: Vec<String>,
    /// The readable paths when reads are limited; `None`: everything but `/dev`'s other devices.
    pub read: Option<Vec<String>>,
    pub read_only: bool,
    /// The job's `TMPDIR`.
    pub tmpdir: String,
    /// `none`, `ports` or `all`, as enforced.
    pub network: &'static str,
    pub tcp_ports: Vec<u16>,
    /// Which parts the platform enforces.
    pub filesystem: bool,
    pub tcp: bool,
    pub scoping: bool,
    pub seccomp: bool,
    /// What confines connecting to pathname unix sockets: `landlock` (ABI 9), else
    /// `supervised` (the seccomp filter hands each `connect` and addressed send to the
    /// service: src/platform/linux/sandbox/supervise/), `open` on macOS (not confined).
    pub unix_sockets: &'static str,
    /// What differs from what was asked, and why (an older kernel).
    pub notes: Vec<String>,
    /// The environment variables left out because they look like credentials
    /// (`env.rs`), set once the job's environment is made.
    pub env_dropped: Vec<String>,
    /// What of the project's `.git` hooks and configuration the job changed and the
    /// service put back (`platform::GitGuard`), relative to the project root.
    pub restored: Vec<String>,
    /// What jobs may not read although reads are otherwise allowed there: the existing
    /// credential stores, `readDeny` paths and the service's output folders
    /// (`Resolved::read_denied`).
    pub read_denied: Vec<String>,
    /// System V IPC is allowed (`SandboxSpec::sysv_ipc`).
    pub sysv_ipc: bool,
}

/// Writable for every sandboxed job although it is shared: glibc's `tmpfile()` (`ed`'s
/// buffer, and every program that calls it) and many scripts write to `/tmp` whatever
/// `TMPDIR` says, and a sandbox that breaks them gets turned off. The price, stated in
/// docs/sandbox.md: a job can change files other programs of the same user keep in
/// `/tmp`. The job's own `TMPDIR` keeps what well-behaved programs write apart.
pub const SHARED_TMP: &str = "/tmp";

/// The devices every sandboxed job may write: its terminal and the null devices.
pub const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

impl Enforced {
    /// The paths are where the granted directories are now (`Anchor::current_path`):
    /// one renamed since it was resolved is named where it went.
    pub fn new(resolved: &Resolved, support: &Support, tmpdir: &Path) -> Self {
        let show = |p: &Path| p.display().to_string();
        let here = |a: &Anchor| show(&a.current_path());
        let root = here(&resolved.root);
        let granted: Vec<String> = resolved.write.iter().map(here).collect();
        let mut write = Vec::new();
        if !resolved.read_only {
            write.push(root.clone());
        }
        write.extend(granted.iter().cloned());
        write.push(show(tmpdir));
        let shared_tmp = resolved.shared_tmp && present().shared_tmp;
        if shared_tmp {
            write.push(SHARED_TMP.to_string());
        }
        write.extend(WRITABLE_DEVICES.iter().map(|d| d.to_string()));
        let read = resolved.read.as_ref().map(|extra| {
            let mut read: Vec<String> = present().system_read_paths.iter().map(|p| p.to_string()).collect();
            read.push(root.clone());
            read.extend(extra.iter().map(here));
            read.extend(resolved.read_allow.iter().map(here));
            read.extend(granted.iter().cloned());
            read.push(show(tmpdir));
            if shared_tmp {
                read.push(SHARED_TMP.to_string());
            }
            read
        });
        let mut notes = resolved.notes.clone();
        notes.extend(resolved.hidden_notes.iter().cloned());
        let network = effective_network(&resolved.network, support);
        if network != resolved.network {
            notes.push(format!(
                "Landlock ABI {} cannot filter TCP ports (needs {ABI_TCP}): no internet sockets at all",
                support.abi
            ));
        }
        if resolved.read_only && shared_tmp && resolved.root.path().starts_with(SHARED_TMP) {
            notes.push(format!(
                "the project lies under {SHARED_TMP}, which stays writable: readOnly cannot hold there"
            ));
        }
        if !support.scoping() {
            notes.push(format!(
                "Landlock ABI {} cannot scope signals and abstract unix sockets (needs {ABI_SCOPE})",
                support.abi
            ));
        }
        if !support.tcp() && network == Network::Off && support.seccomp {
            notes.push("TCP is refused by the seccomp filter alone (no internet sockets)".to_string());
        }
        let (mode, ports) = match &network {
            Network::Off => ("none", Vec::new()),
            Network::TcpPorts(p) => ("ports", p.clone()),
            Network::On => ("all", Vec::new()),
        };
        Self {
            mechanism: support.mechanism,
            abi: support.abi,
            write,
            read,
            read_only: resolved.read_only,
            tmpdir: show(tmpdir),
            network: mode,
            tcp: support.tcp() && mode != "all",
            tcp_ports: ports,
            filesystem: true,
            scoping: support.scoping(),
            seccomp: support.seccomp,
            unix_sockets: support.unix_sockets(),
            notes,
            env_dropped: Vec::new(),
            restored: Vec::new(),
            read_denied: resolved.read_denied.clone(),
            sysv_ipc: resolved.sysv_ipc,
        }
    }
}
