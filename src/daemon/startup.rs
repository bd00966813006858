//! What this daemon can enforce, found once at start: the containment of its jobs, the
//! per-job sandbox (and why not), how orphans are reaped, how its jobs' exits are
//! learnt (and why not through the exit ring), the network face. Said in ONE
//! log line when it starts serving ([`Abilities::line`]) and as JSON by `/health`
//! (src/daemon/http/health.rs), so an operator reads the modes instead of finding them
//! out at the first sandboxed job. With `--require-sandbox`, a daemon that cannot give
//! the sandbox does not start ([`Abilities::require_sandbox`]): a pod that would refuse
//! every sandboxed job must fail its start, not pass its probes.

use std::net::SocketAddr;

use crate::platform::{ContainmentMode, ExitWatch};
use crate::sandbox::Support;

/// What the daemon found it can enforce.
#[derive(Clone, Debug)]
pub struct Abilities {
    /// What holds the next job's processes together.
    pub containment: ContainmentMode,
    /// The per-job sandbox this kernel and this process's seccomp filter allow, or the
    /// reason there is none.
    pub sandbox: Result<Support, String>,
    /// `--require-sandbox`: jobs of this daemon's clients are meant to be sandboxed.
    pub sandbox_required: bool,
    /// This daemon is its PID namespace's init (a container's entrypoint): every orphan
    /// of the namespace is its to reap, not only its jobs' (it is a subreaper too).
    pub init: bool,
    /// How jobs' exits are learnt: one io_uring for all (no descriptor per job), or a
    /// pidfd per job where io_uring is missing or refused (with the reason).
    pub exit_watch: ExitWatch,
}

impl Abilities {
    /// Looks once. The sandbox probe is the one jobs use (its answer is cached), so what
    /// is logged is what a job will get.
    pub fn probe(sandbox_required: bool) -> Self {
        Abilities {
            containment: crate::platform::containment_mode(),
            sandbox: crate::platform::sandbox_support(),
            sandbox_required,
            init: std::process::id() == 1,
            // Made now, so a ring the kernel or a seccomp profile refuses is said at
            // start rather than found at the first job.
            exit_watch: crate::platform::exit_watch(),
        }
    }

    /// With `--require-sandbox`: the sandbox, or why the daemon cannot start.
    pub fn require_sandbox(&self) -> Result<(), String> {
        match (&self.sandbox, self.sandbox_required) {
            (Err(why), true) => Err(format!(
                "SANDBOX_UNAVAILABLE: --require-sandbox, and no job could be sandboxed here: {why}"
            )),
            _ => Ok(()),
        }
    }

    /// The start-up line: every mode in one line of `key=value` words.
    pub fn line(&self, face: Option<&Face>) -> String {
        let mut words = vec![
            format!("containment={}", self.containment.as_str()),
            format!("reaper={}", if self.init { "init" } else { "subreaper" }),
            format!("exit-watch={}", self.exit_watch.mechanism),
        ];
        match &self.sandbox {
            Ok(support) => {
                words.push(format!("sandbox={}", support.mechanism.as_str()));
                words.push(format!("landlock-abi={}", support.abi));
            }
            Err(_) => {
                words.push("sandbox=unavailable".to_string());
                words.push("landlock-abi=0".to_string());
            }
        }
        words.push(format!("sandbox-required={}", self.sandbox_required));
        match face {
            Some(face) => {
                words.push(format!("listen=http://{}", face.addr));
                words.push(format!("token={}", face.token));
                words.push(format!("mcp={}", face.mcp));
            }
            None => words.push("listen=off".to_string()),
        }
        let mut line = format!("native-shell-daemon: modes: {}", words.join(" "));
        if let Err(why) = &self.sandbox {
            line.push_str(&format!(" (no sandbox: {why})"));
        }
        if let Some(why) = &self.exit_watch.fallback_reason {
            line.push_str(&format!(" (exits through a pidfd per job: {why})"));
        }
        line
    }

    /// `/health`'s modes, as JSON.
    pub fn json(&self, face: Option<&Face>) -> serde_json::Value {
        let (sandbox, why) = match &self.sandbox {
            Ok(support) => (
                serde_json::json!({
                    "available": true,
                    "mechanism": support.mechanism.as_str(),
                    "landlockAbi": support.abi,
                }),
                None,
            ),
            Err(why) => (serde_json::json!({ "available": false, "landlockAbi": 0 }), Some(why)),
        };
        let mut value = serde_json::json!({
            "containment": self.containment.as_str(),
            "reaper": if self.init { "init" } else { "subreaper" },
            "exitWatch": { "mechanism": self.exit_watch.mechanism },
            "sandbox": sandbox,
            "sandboxRequired": self.sandbox_required,
        });
        if let Some(why) = why {
            value["sandbox"]["reason"] = why.clone().into();
        }
        if let Some(why) = &self.exit_watch.fallback_reason {
            value["exitWatch"]["reason"] = why.clone().into();
        }
        if let Some(face) = face {
            value["listen"] = serde_json::json!({
                "address": face.addr.to_string(),
                "token": face.token,
                "mcp": face.mcp,
            });
        }
        value
    }
}

/// The network face as the start-up line and `/health` describe it.
#[derive(Clone, Debug)]
pub struct Face {
    pub addr: SocketAddr,
    /// Requests need the token (`--access-token-file`).
    pub token: bool,
    /// `/mcp` has a server behind it (`--mcp-upstream` or `--mcp-server`).
    pub mcp: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unavailable(required: bool) -> Abilities {
        Abilities {
            containment: ContainmentMode::ProcessTree,
            sandbox: Err("Landlock is refused by this process's seccomp filter".to_string()),
            sandbox_required: required,
            init: false,
            exit_watch: ExitWatch {
                mechanism: "pidfd",
                fallback_reason: Some("io_uring_setup refused (Operation not permitted)".into()),
            },
        }
    }

    #[test]
    fn a_required_sandbox_that_cannot_be_given_stops_the_start_with_its_reason() {
        let why = unavailable(true).require_sandbox().unwrap_err();
        assert!(why.starts_with("SANDBOX_UNAVAILABLE"), "{why}");
        assert!(why.contains("seccomp filter"), "{why}");
        assert!(unavailable(false).require_sandbox().is_ok());
    }

    #[test]
    fn the_line_names_every_mode_on_one_line() {
        let face = Face {
            addr: "0.0.0.0:49983".parse().unwrap(),
            token: true,
            mcp: false,
        };
        let line = unavailable(false).line(Some(&face));
        assert!(!line.contains('\n'));
        for word in [
            "containment=process-tree",
            "reaper=subreaper",
            "exit-watch=pidfd",
            "sandbox=unavailable",
            "landlock-abi=0",
            "listen=http://0.0.0.0:49983",
            "token=true",
        ] {
            assert!(line.contains(word), "{word} missing from {line}");
        }
        let json = unavailable(false).json(Some(&face));
        assert_eq!(json["sandbox"]["available"], false);
        assert_eq!(json["listen"]["token"], true);
        assert_eq!(json["exitWatch"]["mechanism"], "pidfd");
        assert!(
            line.contains("(exits through a pidfd per job: io_uring_setup refused"),
            "{line}"
        );
        assert!(json["exitWatch"]["reason"].as_str().unwrap_or("").contains("refused"));
    }
}
