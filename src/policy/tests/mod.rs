//! Tests of the policy. Its table rows are (command, allow entries, deny entries,
//! decision, roots).
//!
//! Entries are written short: `git` means `run_shell_command(git)`, `*` means
//! `run_shell_command`, `session:x` puts `run_shell_command(x)` in
//! `session_approvals`, and `raw:...` is used verbatim.
//!
//! By concern: `table` (the decisions), `details` (the other fields of a check),
//! `robustness` (threads, hostile and random input, timing).

use super::Decision::{Allow, Ask, Deny};
use super::*;

const NONE: &[&str] = &[];
const ALL: &[&str] = &["*"];

type Case = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    Decision,
    &'static [&'static str],
);

mod details;
mod robustness;
mod table;

use table::CASES;

fn policy_of(allow: &[&str], deny: &[&str]) -> CommandPolicy {
    fn entry(e: &str) -> String {
        match e {
            "*" => "run_shell_command".to_string(),
            _ => match e.strip_prefix("raw:") {
                Some(raw) => raw.to_string(),
                None => format!("run_shell_command({e})"),
            },
        }
    }
    let mut policy = CommandPolicy::default();
    for e in allow {
        match e.strip_prefix("session:") {
            Some(s) => policy.session_approvals.push(entry(s)),
            None => policy.core_tools.push(entry(e)),
        }
    }
    policy.exclude_tools = deny.iter().map(|e| entry(e)).collect();
    policy
}
