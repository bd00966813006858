//! macOS: a sandboxed job runs under `sandbox-exec -p <profile>`, the Seatbelt profile
//! made here from the job's sandbox. Never run: this project has no macOS machine (the
//! profile's text is tested on Linux, where this file is compiled into the tests).
//!
//! Why `sandbox-exec` and not `sandbox_init` in the fork child: `sandbox_init` compiles
//! the profile, which allocates, and the fork child of a multi-threaded host may not
//! (`crate::platform::unix::fork`). `sandbox-exec` is deprecated in its man page but
//! is what Codex, Claude Code and the Gemini CLI use on macOS; it costs one exec more.
//!
//! The profile denies by default and allows: process execution and forking, reads
//! (everywhere, or the system paths, the project and the `read` paths, but the hidden
//! paths: `crate::sandbox::Resolved::hidden`), writes to the
//! project (unless read-only), the `write` paths, the job's TMPDIR and the terminal and
//! null devices, and the network as asked (none; TCP on localhost ports; all).
//! Seatbelt's `(allow signal (target same-sandbox))` keeps signals inside the job.

use std::ffi::OsString;

use crate::sandbox::{system_read_paths, Anchor, JobSandbox, Mechanism, Network, Support, WRITABLE_DEVICES};

/// The program that applies a profile.
const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub fn support() -> Result<Support, String> {
    if std::path::Path::new(SANDBOX_EXEC).exists() {
        Ok(Support {
            mechanism: Mechanism::Seatbelt,
            abi: 0,
            seccomp: false,
        })
    } else {
        Err(format!("{SANDBOX_EXEC} is missing"))
    }
}

/// `program args...` as `sandbox-exec -p <profile> program args...`.
pub fn wrap(job: &JobSandbox<'_>, program: &OsString, args: &[OsString]) -> (OsString, Vec<OsString>) {
    let mut wrapped = vec![OsString::from("-p"), OsString::from(profile(job)), program.clone()];
    wrapped.extend(args.iter().cloned());
    (OsString::from(SANDBOX_EXEC), wrapped)
}

/// A string literal in the profile's Scheme syntax.
fn quoted(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 2);
    out.push('"');
    for c in path.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Seatbelt matches the paths files resolve to, so a symlink put where a granted
/// directory was reaches nothing; each granted directory is named where it is now
/// (`Anchor::current_path`: where it was resolved, unless it was moved since).
fn here(anchor: &Anchor) -> String {
    anchor.current_path().display().to_string()
}

pub fn profile(job: &JobSandbox<'_>) -> String {
    let r = job.resolved;
    let mut p = String::from("(version 1)\n(deny default)\n");
    p.push_str("(allow process-exec process-fork)\n(allow signal (target same-sandbox))\n");
    p.push_str("(allow sysctl-read)\n(allow mach-lookup)\n(allow ipc-posix-shm)\n(allow file-ioctl)\n");
    p.push_str("(allow file-read-metadata)\n");
    // The hidden paths (credential stores, `readDeny`, the output folders:
    // `crate::sandbox::Resolved::hidden`) are cut out of what is read broadly (all, or
    // the `read` paths); `require-not` keeps this independent of rule order.
    let but_hidden: String = r
        .hidden
        .iter()
        .map(|h| format!(" (require-not (subpath {}))", quoted(&h.display().to_string())))
        .collect();
    let broad: Vec<String> = match &r.read {
        None => vec!["/".to_string()],
        Some(extra) => extra.iter().map(here).collect(),
    };
    for path in broad {
        p.push_str(&format!(
            "(allow file-read* (require-all (subpath {}){but_hidden}))\n",
            quoted(&path)
        ));
    }
    // Read whole whatever is hidden: the project, the writable paths, the job's
    // TMPDIR, `readAllow` (and, with `read`, the system paths and the devices).
    let mut whole: Vec<String> = Vec::new();
    if r.read.is_some() {
        whole.extend(system_read_paths().iter().map(|s| s.to_string()));
    }
    whole.push(here(&r.root));
    whole.extend(r.write.iter().map(here));
    whole.extend(r.read_allow.iter().map(here));
    whole.push(job.tmpdir.path().display().to_string());
    for path in whole {
        p.push_str(&format!("(allow file-read* (subpath {}))\n", quoted(&path)));
    }
    if r.read.is_some() {
        p.push_str(
            "(allow file-read* (literal \"/dev/null\") (literal \"/dev/tty\") (regex #\"^/dev/ttys[0-9]+$\"))\n",
        );
    }
    // System V IPC: refused by `(deny default)` unless asked for (docs/sandbox.md).
    if r.sysv_ipc {
        p.push_str("(allow ipc-sysv*)\n");
    }
    let mut writable: Vec<String> = Vec::new();
    if !r.read_only {
        writable.push(here(&r.root));
    }
    writable.extend(r.write.iter().map(here));
    writable.push(job.tmpdir.path().display().to_string());
    for path in writable {
        p.push_str(&format!("(allow file-write* (subpath {}))\n", quoted(&path)));
    }
    for device in WRITABLE_DEVICES {
        p.push_str(&format!("(allow file-write* (literal {}))\n", quoted(device)));
    }
    // The job's own terminal: macOS names PTY slaves /dev/ttysNNN.
    p.push_str("(allow file-write* (regex #\"^/dev/ttys[0-9]+$\"))\n");
    match &r.network {
        Network::Off => {}
        Network::On => p.push_str("(allow network*)\n"),
        Network::TcpPorts(ports) => {
            for port in ports {
                p.push_str(&format!(
                    "(allow network-bind network-inbound (local tcp \"*:{port}\"))\n(allow network-outbound (remote tcp \"*:{port}\"))\n"
                ));
            }
        }
    }
    // Local (unix) sockets, as on Linux: pipes between a job's processes.
    p.push_str("(allow network* (remote unix-socket))\n(allow system-socket)\n");
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{JobTmpDir, Resolved};
    use std::sync::Arc;

    #[test]
    fn the_profile_names_what_the_job_may_write_and_reach() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir(base.join("project \"x\"")).expect("mkdir");
        std::fs::create_dir(base.join("cache")).expect("mkdir");
        let resolved = Arc::new(Resolved {
            id: 0,
            root: Arc::new(Anchor::open(&base.join("project \"x\"")).expect("root")),
            read_only: false,
            write: vec![Anchor::open(&base.join("cache")).expect("cache")],
            read: None,
            network: Network::TcpPorts(vec![3000]),
            shared_tmp: true,
            notes: vec![],
            env: Vec::new(),
            per_run: false,
            hidden: vec![base.join("home/.ssh")],
            read_allow: Vec::new(),
            read_denied: Vec::new(),
            hidden_notes: Vec::new(),
            sysv_ipc: false,
            read_layer: Default::default(),
            unix_sockets: Vec::new(),
        });
        let tmpdir = JobTmpDir::take().expect("tmpdir");
        let job = JobSandbox {
            resolved: &resolved,
            tmpdir: &tmpdir,
            support: support_for_tests(),
        };
        let profile = profile(&job);
        let base = base.display().to_string();
        assert!(profile.starts_with("(version 1)\n(deny default)\n"));
        assert!(profile.contains(&format!("(allow file-write* (subpath \"{base}/project \\\"x\\\"\"))")));
        assert!(profile.contains(&format!("(allow file-write* (subpath \"{base}/cache\"))")));
        assert!(profile.contains(&format!(
            "(allow file-write* (subpath \"{}\"))",
            tmpdir.path().display()
        )));
        assert!(profile.contains("(remote tcp \"*:3000\")"));
        assert!(profile.contains(&format!(
            "(allow file-read* (require-all (subpath \"/\") (require-not (subpath \"{base}/home/.ssh\"))))"
        )));
        assert!(!profile.contains("(allow file-read*)\n") && !profile.contains("ipc-sysv"));
        assert!(!profile.contains("(allow network*)\n"));
        let (program, args) = wrap(&job, &OsString::from("bash"), &[OsString::from("-c")]);
        assert_eq!(program, OsString::from(SANDBOX_EXEC));
        assert_eq!(args[0], OsString::from("-p"));
        assert_eq!(&args[2..], &[OsString::from("bash"), OsString::from("-c")]);
    }

    fn support_for_tests() -> Support {
        Support {
            mechanism: Mechanism::Seatbelt,
            abi: 0,
            seccomp: false,
        }
    }
}
