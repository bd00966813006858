//! The environment of a job: inherited, then the service's, then the call's, then
//! the markers every job carries.

use std::ffi::{OsStr, OsString};

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

/// The job's environment, sorted by name, each name once. Built as a list in the order
/// of precedence (inherited, the service's, the call's, the fixed ones, `TERM`, the
/// markers) and sorted once, the last of equal names kept: a map built variable by
/// variable cost a few microseconds more of every spawn, on the JS thread before the
/// clone (its nodes and its walks).
pub fn build(layers: &EnvLayers<'_>) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    if !layers.clear {
        match layers.inherited {
            Some(pairs) => env.extend(owned(pairs)),
            None => env.extend(std::env::vars_os()),
        }
        env.retain(|(name, _)| !REMOVED.iter().any(|removed| same_name(name, OsStr::new(removed))));
        env.extend(owned(layers.service));
    }
    env.extend(owned(layers.call));
    if !layers.clear {
        env.extend(owned(FIXED));
        if let Some(term) = layers.term {
            env.push(("TERM".into(), term.into()));
        }
    }
    // The markers, even in a cleared environment: the service and its watchdog find a
    // job's processes by them, so without them a job could outlive Node.
    env.push((JOB_MARKER.into(), layers.job_marker.into()));
    env.push((OWNER_MARKER.into(), layers.owner_marker.into()));
    // A stable sort keeps equal names in the order above; `dedup_by` keeps the first of
    // a run, so each later one is swapped into its place: the last one set wins.
    env.sort_by(|a, b| name_order(&a.0, &b.0));
    env.dedup_by(|later, kept| {
        let same = same_name(&later.0, &kept.0);
        if same {
            std::mem::swap(later, kept);
        }
        same
    });
    env
}

/// `pairs` as the platform's strings.
fn owned<T: AsRef<OsStr>>(pairs: &[(T, T)]) -> impl Iterator<Item = (OsString, OsString)> + '_ {
    pairs.iter().map(|(k, v)| (k.as_ref().into(), v.as_ref().into()))
}

/// Windows names variables without regard to case, so there a caller's `PATH`
/// replaces the inherited `Path` instead of standing beside it.
#[cfg(windows)]
fn same_name(a: &OsStr, b: &OsStr) -> bool {
    a.eq_ignore_ascii_case(b)
}

#[cfg(not(windows))]
fn same_name(a: &OsStr, b: &OsStr) -> bool {
    a == b
}

/// The order names are sorted in: one in which names `same_name` calls equal are next
/// to each other.
#[cfg(windows)]
fn name_order(a: &OsStr, b: &OsStr) -> std::cmp::Ordering {
    let a = a.as_encoded_bytes().iter().map(u8::to_ascii_uppercase);
    a.cmp(b.as_encoded_bytes().iter().map(u8::to_ascii_uppercase))
}

#[cfg(not(windows))]
fn name_order(a: &OsStr, b: &OsStr) -> std::cmp::Ordering {
    a.cmp(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn layers<'a>(
        inherited: &'a [(String, String)],
        service: &'a [(String, String)],
        call: &'a [(String, String)],
        clear: bool,
    ) -> EnvLayers<'a> {
        EnvLayers {
            inherited: Some(inherited),
            service,
            call,
            term: Some("xterm-256color"),
            job_marker: "job",
            owner_marker: "owner",
            clear,
        }
    }

    fn value<'a>(env: &'a [(OsString, OsString)], name: &str) -> Option<&'a OsStr> {
        env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_os_str())
    }

    #[test]
    fn later_layers_win_and_each_name_appears_once_in_order() {
        // Inherited twice over (an environment may hold a name twice: the last counts).
        let inherited = pairs(&[
            ("ZED", "1"),
            ("PAGER", "less"),
            ("A", "x"),
            ("A", "y"),
            ("GIT_ASKPASS", "/bin/ask"),
            ("TERM", "dumb"),
        ]);
        let service = pairs(&[("A", "service"), ("B", "service")]);
        let call = pairs(&[("B", "call"), ("PAGER", "more"), ("SSH_ASKPASS", "/bin/mine")]);
        let env = build(&layers(&inherited, &service, &call, false));
        let names: Vec<&OsStr> = env.iter().map(|(k, _)| k.as_os_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_by(|a, b| name_order(a, b));
        sorted.dedup_by(|a, b| same_name(a, b));
        assert_eq!(names, sorted, "sorted, each name once");
        assert_eq!(value(&env, "A"), Some(OsStr::new("service")));
        assert_eq!(value(&env, "B"), Some(OsStr::new("call")));
        assert_eq!(value(&env, "ZED"), Some(OsStr::new("1")));
        // The fixed ones over the call's; TERM over the inherited one.
        assert_eq!(value(&env, "PAGER"), Some(OsStr::new("cat")));
        assert_eq!(value(&env, "TERM"), Some(OsStr::new("xterm-256color")));
        // Removed when inherited; a caller may still set one on purpose.
        assert_eq!(value(&env, "GIT_ASKPASS"), None);
        assert_eq!(value(&env, "SSH_ASKPASS"), Some(OsStr::new("/bin/mine")));
        assert_eq!(value(&env, JOB_MARKER), Some(OsStr::new("job")));
        assert_eq!(value(&env, OWNER_MARKER), Some(OsStr::new("owner")));
    }

    #[test]
    fn a_cleared_environment_is_the_call_and_the_markers() {
        let inherited = pairs(&[("HOME", "/root")]);
        let service = pairs(&[("S", "1")]);
        let call = pairs(&[("C", "1"), (JOB_MARKER, "forged")]);
        let env = build(&layers(&inherited, &service, &call, true));
        let names: Vec<&str> = env.iter().filter_map(|(k, _)| k.to_str()).collect();
        let mut expected = vec!["C", JOB_MARKER, OWNER_MARKER];
        expected.sort();
        assert_eq!(names, expected);
        // The marker is the service's, whatever the call says.
        assert_eq!(value(&env, JOB_MARKER), Some(OsStr::new("job")));
    }
}
