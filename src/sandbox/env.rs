//! A sandboxed job's environment, without the agent's secrets.
//!
//! A job inherits the environment of the process that runs the service: an agent's
//! own API keys, cloud credentials, tokens. Limiting reads (`read`) keeps `~/.aws`
//! from a job, but the same secrets in its environment would reach it anyway, and a
//! job told by a poisoned README to send them somewhere only needs to print them. So a
//! sandboxed job gets no variable whose name or value looks like a credential, unless
//! the sandbox's `env` names it; the report (`Enforced::env_dropped`) lists the names
//! left out, never their values.
//!
//! The rules are ours, written after reading the Gemini CLI's own sanitization (names
//! with TOKEN, SECRET, PASSWORD, KEY, AUTH, CREDENTIAL and the like; values that hold a
//! private key, a password in a URL or a well-known token's prefix), with two changes:
//! `GIT_AUTHOR_*` are kept (an author's name is no secret, and `git commit` in a job
//! needs it), and names with CERT are kept (`SSL_CERT_FILE`, `NODE_EXTRA_CA_CERTS` name
//! a certificate authority's file, a public key: dropping them breaks TLS behind a
//! company proxy). A heuristic: a secret under an innocent name with an unknown format
//! passes. Names are compared in upper case, as the Gemini CLI does.

use std::ffi::{OsStr, OsString};
use std::sync::{Mutex, OnceLock};

use regex::bytes::Regex;

/// Parts of a name that mark a credential, in any case; AUTH but in AUTHOR
/// (`GIT_AUTHOR_NAME` is no secret, and `git commit` in a job needs it). One
/// expression: a spawn runs it over every name.
fn secret_name_parts() -> &'static Regex {
    static PARTS: OnceLock<Regex> = OnceLock::new();
    PARTS.get_or_init(|| {
        Regex::new(concat!(
            "(?i-u)TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|KEY|CREDENTIAL|CREDS|PRIVATE|COOKIE|WEBHOOK",
            "|AUTH([^O]|O[^R]|O?$)",
        ))
        .expect("the pattern is fixed and valid")
    })
}

/// Whole names that hold a credential without saying so: connection strings carry the
/// password, a DSN its key.
const SECRET_NAMES: &[&str] = &[
    "DATABASE_URL",
    "DB_URL",
    "DB_URI",
    "CONNECTION_STRING",
    "REDIS_URL",
    "MONGODB_URI",
    "SENTRY_DSN",
];

/// Values that are secrets whatever their name (matched on the raw bytes). One
/// expression whose every branch holds a literal, so the search skips ahead to those
/// (a spawn runs it over the whole environment: a few microseconds).
fn secret_values() -> &'static Regex {
    static SET: OnceLock<Regex> = OnceLock::new();
    SET.get_or_init(|| {
        Regex::new(concat!(
            "(?-u)",
            // A private key in PEM form.
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
            // A password in a URL (`https://user:pass@host`, a proxy's, a database's).
            r"|://[^:/@\s]+:[^@\s]+@",
            // GitHub's tokens, Google API keys, AWS access key ids, Slack tokens, Stripe
            // keys, Anthropic and OpenAI keys, npm tokens, GitLab tokens.
            r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}",
            r"|AIza[0-9A-Za-z_-]{30,}",
            r"|(AKIA|ASIA)[0-9A-Z]{16}",
            r"|xox[abposr]-[A-Za-z0-9-]{10,}",
            r"|[rs]k_(live|test)_[0-9A-Za-z]{20,}",
            r"|sk-(ant-|proj-)?[A-Za-z0-9_-]{20,}",
            r"|npm_[A-Za-z0-9]{30,}",
            r"|glpat-[A-Za-z0-9_-]{20,}",
            // A JSON Web Token (three base64url parts, the first a JSON object).
            r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        ))
        .expect("the pattern is fixed and valid")
    })
}

/// Whether the variable `name=value` looks like a credential.
pub fn looks_secret(name: &OsStr, value: &OsStr) -> bool {
    if secret_values().is_match(value.as_encoded_bytes()) {
        return true;
    }
    let name = name.as_encoded_bytes();
    // Git's configuration passed through the environment (`GIT_CONFIG_KEY_0`, what
    // the Gemini CLI compatibility layer sets) is configuration, not a key: its values
    // are checked above.
    if starts_with_ci(name, b"GIT_CONFIG_") {
        return false;
    }
    if SECRET_NAMES.iter().any(|n| name.eq_ignore_ascii_case(n.as_bytes())) || ends_with_ci(name, b"_DSN") {
        return true;
    }
    secret_name_parts().is_match(name)
}

fn starts_with_ci(hay: &[u8], prefix: &[u8]) -> bool {
    hay.len() >= prefix.len() && hay[..prefix.len()].eq_ignore_ascii_case(prefix)
}

fn ends_with_ci(hay: &[u8], suffix: &[u8]) -> bool {
    hay.len() >= suffix.len() && hay[hay.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
}

/// Drops from `env` every variable that looks like a credential and is not in
/// `allowed` (names, exactly as written) or `kept` (the service's own: the markers its
/// watchdog finds a job's processes by, without which a job could outlive Node);
/// returns the dropped names, sorted.
pub fn sanitize(env: &mut Vec<(OsString, OsString)>, allowed: &[String], kept: &[&str]) -> Vec<String> {
    let mut last = LAST.try_lock().ok();
    let mut index = 0;
    let mut dropped = Vec::new();
    env.retain(|(name, value)| {
        let at = index;
        index += 1;
        let keep = kept.iter().any(|k| OsStr::new(k) == name)
            || allowed.iter().any(|a| OsStr::new(a) == name)
            || !match last.as_deref_mut() {
                Some(last) => last.looks_secret(at, name, value),
                None => looks_secret(name, value),
            };
        if !keep {
            dropped.push(name.to_string_lossy().into_owned());
        }
        keep
    });
    if let Some(last) = last.as_deref_mut() {
        last.truncate(index);
    }
    dropped.sort();
    dropped
}

/// The last environment checked, variable by variable, and each one's verdict.
///
/// A spawn checks the whole environment, and nearly all of it is the same at every
/// spawn (what the service inherited and was given; the job's own markers are `kept`
/// and never checked): the regular expressions over some forty variables were a few
/// microseconds of every sandboxed spawn, mostly spent bringing their tables back into
/// the cache. A variable equal, name and value byte for byte, to the one at the same
/// place last time gets that one's verdict (`looks_secret` depends on nothing else);
/// any other is checked and remembered. Only what the service's caller set is kept
/// here, never anything a job wrote. One for the process, taken with `try_lock`: a
/// spawn that finds another using it checks its variables as before.
struct Verdicts {
    env: Vec<(OsString, OsString, bool)>,
}

static LAST: Mutex<Verdicts> = Mutex::new(Verdicts { env: Vec::new() });

impl Verdicts {
    /// `looks_secret(name, value)` for the variable at place `at`.
    fn looks_secret(&mut self, at: usize, name: &OsStr, value: &OsStr) -> bool {
        if let Some((n, v, secret)) = self.env.get(at) {
            if n == name && v == value {
                return *secret;
            }
        }
        let secret = looks_secret(name, value);
        let entry = (name.to_owned(), value.to_owned(), secret);
        match self.env.get_mut(at) {
            Some(slot) => *slot = entry,
            None => {
                // Places skipped (kept or allowed variables) hold the empty variable,
                // with its own verdict: a true one, should one ever be there.
                while self.env.len() < at {
                    let empty = looks_secret(OsStr::new(""), OsStr::new(""));
                    self.env.push((OsString::new(), OsString::new(), empty));
                }
                self.env.push(entry);
            }
        }
        secret
    }

    fn truncate(&mut self, len: usize) {
        self.env.truncate(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        list.iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn credentials_go_unless_allowed_and_ordinary_variables_stay() {
        let mut env = pairs(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/u"),
            ("GEMINI_API_KEY", "x"),
            ("GITHUB_TOKEN", "x"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("PGPASSWORD", "x"),
            ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
            ("DATABASE_URL", "postgres://localhost/db"),
            ("SENTRY_DSN", "x"),
            ("GIT_AUTHOR_NAME", "A"),
            ("SSL_CERT_FILE", "/etc/ssl/certs/ca.pem"),
            ("GIT_CONFIG_KEY_0", "core.pager"),
            ("HTTPS_PROXY", "http://me:hunter2@proxy:3128"),
            ("INNOCENT", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            ("MY_TOKEN", "allowed"),
            ("LANG", "C.UTF-8"),
        ]);
        let dropped = sanitize(&mut env, &["MY_TOKEN".to_string()], &["SSH_AUTH_SOCK"]);
        assert_eq!(
            dropped,
            [
                "AWS_SECRET_ACCESS_KEY",
                "DATABASE_URL",
                "GEMINI_API_KEY",
                "GITHUB_TOKEN",
                "HTTPS_PROXY",
                "INNOCENT",
                "PGPASSWORD",
                "SENTRY_DSN",
            ]
        );
        let kept: Vec<_> = env.iter().map(|(k, _)| k.to_string_lossy().into_owned()).collect();
        assert_eq!(
            kept,
            [
                "PATH",
                "HOME",
                "SSH_AUTH_SOCK",
                "GIT_AUTHOR_NAME",
                "SSL_CERT_FILE",
                "GIT_CONFIG_KEY_0",
                "MY_TOKEN",
                "LANG"
            ]
        );
    }

    #[test]
    fn a_variable_changed_since_the_last_spawn_is_checked_again() {
        // The same places, first harmless, then each changed in its name or its value
        // alone: the verdicts remembered from the first spawn must not carry over.
        let allowed: &[String] = &[];
        let first = pairs(&[
            ("PATH", "/usr/bin"),
            ("MARKER", "job.1"),
            ("NOTE", "plain"),
            ("PASS", "x"),
            ("LANG", "C.UTF-8"),
        ]);
        let mut env = first.clone();
        assert!(sanitize(&mut env, allowed, &["MARKER"]).is_empty());
        assert_eq!(env, first);
        let mut env = pairs(&[
            ("PATH", "/usr/bin"),
            ("MARKER", "job.2"),
            ("NOTE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            ("PASSWORD", "x"),
            ("LANG", "C.UTF-8"),
            ("API_KEY", "y"),
        ]);
        assert_eq!(
            sanitize(&mut env, allowed, &["MARKER"]),
            ["API_KEY", "NOTE", "PASSWORD"]
        );
        // Remembered from the second spawn, and shorter: the same verdicts again.
        let mut env = pairs(&[
            ("PATH", "/usr/bin"),
            ("MARKER", "job.3"),
            ("NOTE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            ("PASSWORD", "x"),
        ]);
        assert_eq!(sanitize(&mut env, allowed, &["MARKER"]), ["NOTE", "PASSWORD"]);
        let mut env = first.clone();
        assert!(sanitize(&mut env, allowed, &["MARKER"]).is_empty());
        // A kept variable's place, then holding an ordinary one that is a secret.
        let mut env = pairs(&[("PATH", "/usr/bin"), ("GITHUB_TOKEN", "z")]);
        assert_eq!(sanitize(&mut env, allowed, &["MARKER"]), ["GITHUB_TOKEN"]);
    }

    /// What the check costs a spawn, over this process's own environment as a job's
    /// (a marker that changes at every spawn added): the median thread CPU time of a
    /// `sanitize` whose variables are those of the spawn before, against one that
    /// checks every variable (`looks_secret` over each), taking turns. Printed, not
    /// asserted: `cargo test --release --lib env_check_cost -- --ignored --nocapture`.
    #[cfg(unix)]
    #[test]
    #[ignore]
    fn env_check_cost() {
        fn cpu_ns() -> u64 {
            let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            // SAFETY: writes the timespec it is given.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
            t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
        }
        let base: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        let (mut remembered, mut checked) = (Vec::new(), Vec::new());
        for round in 0..2000 {
            let mut env = base.clone();
            env.push(("NSS_MARKER".into(), format!("job.{round}").into()));
            let t0 = cpu_ns();
            let dropped = sanitize(&mut env, &[], &["NSS_MARKER"]);
            remembered.push(cpu_ns() - t0);
            let mut env = base.clone();
            let t0 = cpu_ns();
            env.retain(|(n, v)| !looks_secret(n, v));
            checked.push(cpu_ns() - t0);
            assert!(dropped.len() <= base.len());
        }
        let median = |v: &mut Vec<u64>| {
            v.sort_unstable();
            v[v.len() / 2] as f64 / 1e3
        };
        eprintln!(
            "{} variables: remembered {:.2} µs, every variable checked {:.2} µs (medians of 2000)",
            base.len(),
            median(&mut remembered),
            median(&mut checked)
        );
    }

    #[test]
    fn a_proxy_without_a_password_stays() {
        assert!(!looks_secret(
            OsStr::new("HTTPS_PROXY"),
            OsStr::new("http://proxy:3128")
        ));
        assert!(looks_secret(
            OsStr::new("X"),
            OsStr::new("-----BEGIN OPENSSH PRIVATE KEY-----\nabc")
        ));
    }
}
