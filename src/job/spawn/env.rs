//! The environment of a job: inherited, then the service's, then the call's, then
//! the markers every job carries.

use std::collections::BTreeMap;
use std::ffi::OsString;

use crate::base::error::{Result, ServiceError};

pub use crate::platform::{JOB_MARKER, OWNER_MARKER};

/// Variables every job gets, last, so callers cannot switch them off by accident.
const FIXED: &[(&str, &str)] = &[
    ("GEMINI_CLI", "1"),
    // The original tool specification named the variable this way (docs/tools.md,
    // run_shell_command); scripts written against it keep working.
    ("ASIMI_CLI", "1"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_TERMINAL_PROMPT", "0"),
    // Git Credential Manager's own switch for "never prompt".
    ("GCM_INTERACTIVE", "never"),
];

/// Inherited variables that would make a job stop and ask for credentials in a
/// window or terminal nobody watches (an editor's askpass helper, say). Without
/// them git and ssh fail fast instead of hanging the job.
const REMOVED: &[&str] = &["GIT_ASKPASS", "SSH_ASKPASS"];

pub fn validate_pairs(pairs: &[(String, String)]) -> Result<()> {
    for (key, value) in pairs {
        if key.is_empty() || key.contains('=') || key.contains('\0') {
            return Err(ServiceError::invalid(format!(
                "invalid environment variable name {key:?}"
            )));
        }
        if value.contains('\0') {
            return Err(ServiceError::invalid(format!(
                "environment variable {key} contains a NUL byte"
            )));
        }
    }
    Ok(())
}

pub struct EnvLayers<'a> {
    /// What is inherited: `None` is this process's environment.
    pub inherited: Option<&'a [(String, String)]>,
    pub service: &'a [(String, String)],
    pub call: &'a [(String, String)],
    pub term: Option<&'a str>,
    pub job_marker: &'a str,
    pub owner_marker: &'a str,
    /// Only `call` and the markers: nothing inherited, no service or fixed variables.
    pub clear: bool,
}

pub fn build(layers: &EnvLayers<'_>) -> Vec<(OsString, OsString)> {
    if layers.clear {
        let mut env: BTreeMap<OsString, OsString> = layers.call.iter().map(|(k, v)| (k.into(), v.into())).collect();
        add_markers(&mut env, layers);
        return env.into_iter().collect();
    }
    let mut env: BTreeMap<OsString, OsString> = match layers.inherited {
        Some(pairs) => pairs.iter().map(|(k, v)| (k.into(), v.into())).collect(),
        None => std::env::vars_os().collect(),
    };
    for name in REMOVED {
        env.remove(std::ffi::OsStr::new(name));
    }
    for (k, v) in layers.service.iter().chain(layers.call) {
        set(&mut env, k.into(), v.into());
    }
    for (k, v) in FIXED {
        set(&mut env, k.into(), v.into());
    }
    if let Some(term) = layers.term {
        set(&mut env, "TERM".into(), term.into());
    }
    add_markers(&mut env, layers);
    env.into_iter().collect()
}

/// Sets a variable. Windows names variables without regard to case, so there a
/// caller's `PATH` replaces the inherited `Path` instead of standing beside it.
fn set(env: &mut BTreeMap<OsString, OsString>, name: OsString, value: OsString) {
    #[cfg(windows)]
    env.retain(|existing, _| !existing.eq_ignore_ascii_case(&name));
    env.insert(name, value);
}

/// The two variables the service and its watchdog find a job's processes by; even a
/// cleared environment keeps them, or a job could outlive Node.
fn add_markers(env: &mut BTreeMap<OsString, OsString>, layers: &EnvLayers<'_>) {
    env.insert(JOB_MARKER.into(), layers.job_marker.into());
    env.insert(OWNER_MARKER.into(), layers.owner_marker.into());
}
