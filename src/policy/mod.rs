//! Command policy: may this shell command run, be refused, or need confirmation?
//!
//! The command is parsed with a real bash grammar (tree-sitter-bash), so quoting,
//! escapes, comments and here-documents are understood the way bash understands
//! them. From the tree we take:
//!
//! * every **simple command** (`git push origin`), wherever it sits: after `;`,
//!   `&&`, `||`, `|`, `&` or a newline, inside `( )`, `{ }`, `if`, `while`, `for`,
//!   `case`, functions, and inside the scripts of `bash -c '...'`, `eval '...'`,
//!   `trap '...'` and shells fed a here-document, which are parsed again;
//! * its **roots**: the command name, plus the command behind wrappers such as
//!   `sudo`, `env`, `timeout`, `nice`, `xargs`, `find -exec` (see `roots.rs`);
//! * **substitutions**: `$(...)`, backticks, `<(...)`, `>(...)` and `${x@P}`
//!   anywhere bash would execute them (see `substitution.rs`);
//! * **file redirections** (`>`, `>>`, `&>`, ... to a path).
//!
//! The decision ([`check_command`]):
//! 1. any substitution → [`Decision::Deny`] (the Gemini CLI refuses these);
//! 2. any command matching an `excludeTools` entry → `Deny` (deny beats allow);
//! 3. a command that does not parse, that *might* match an `excludeTools` entry
//!    (`git $X` against `git push`), or that hides code we cannot see
//!    (`bash -c "$CMD"`, `PS4=...`) → [`Decision::Ask`];
//! 4. every command (and every wrapped command) matching a `coreTools` or
//!    `sessionApprovals` entry → [`Decision::Allow`];
//! 5. otherwise → `Ask`. This includes a `coreTools` allowlist that is set but
//!    does not cover a command: the seed says such commands are "rejected or
//!    require confirmation"; we ask, and the tool layer may turn `ask` into a
//!    rejection. With no policy at all, every command asks: nothing is allowed
//!    until someone allows it.
//!
//! A file redirection sets [`CommandCheck::has_redirection`] so a caller can ask;
//! it does not change the decision by itself.
//!
//! Nothing here knows about Node; `src/binding/policy.rs` converts.

mod glob;
mod parse;
mod roots;
mod rules;
mod substitution;
mod variables;
mod words;

#[cfg(test)]
mod tests;

use std::fmt;

use serde::Serialize;

use parse::Analysis;
use roots::View;
use rules::Match;

/// The largest command accepted, in bytes. Linux cannot pass a longer single
/// argument to `bash -c` anyway (MAX_ARG_STRLEN is 128 KiB including the final NUL),
/// and the limit bounds the time and memory one check can take.
pub const MAX_COMMAND_BYTES: usize = 128 * 1024;

/// Tool lists in the Gemini CLI's settings syntax, e.g. `run_shell_command(git)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandPolicy {
    /// Denylist (`excludeTools`): a command matching any entry is refused.
    pub exclude_tools: Vec<String>,
    /// Allowlist (`coreTools`).
    pub core_tools: Vec<String>,
    /// Commands the user approved earlier in this session; they allow like `core_tools`.
    pub session_approvals: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Decision {
    /// Run without asking.
    Allow,
    /// Refuse before running.
    Deny,
    /// Ask the user first.
    Ask,
}

impl Decision {
    pub fn as_str(&self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
            Decision::Ask => "ask",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The verdict on one command, with what it was based on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandCheck {
    pub decision: Decision,
    /// Command names in first-seen order, deduplicated; wrappers and the commands
    /// they run are both listed (`sudo rm x` → `sudo`, `rm`).
    pub roots: Vec<String>,
    /// The text of every simple command, the unit rules are matched against.
    pub subcommands: Vec<String>,
    /// A substitution (`$(...)`, backticks, `<(...)`, `>(...)`, `${x@P}`) was found.
    pub has_substitution: bool,
    /// Output is redirected to a file (`/dev/null` does not count).
    pub has_redirection: bool,
    /// Why, in a sentence a person can read.
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyError {
    /// The command is longer than [`MAX_COMMAND_BYTES`].
    TooLarge { len: usize, max: usize },
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyError::TooLarge { len, max } => {
                write!(
                    f,
                    "command is {len} bytes; the policy checks commands of at most {max} bytes"
                )
            }
        }
    }
}

impl std::error::Error for PolicyError {}

/// Decides whether `command` may run under `policy`. Synchronous, never panics,
/// typically a few microseconds (see docs/policy.md for measurements).
pub fn check_command(command: &str, policy: &CommandPolicy) -> Result<CommandCheck, PolicyError> {
    if command.len() > MAX_COMMAND_BYTES {
        return Err(PolicyError::TooLarge {
            len: command.len(),
            max: MAX_COMMAND_BYTES,
        });
    }
    let analysis = parse::analyze(command);
    let (decision, reason) = decide(&analysis, policy);
    Ok(CommandCheck {
        decision,
        roots: roots_of(&analysis),
        subcommands: analysis.commands.iter().map(|c| c.text.clone()).collect(),
        has_substitution: !analysis.substitutions.is_empty(),
        has_redirection: analysis.has_redirection,
        reason,
    })
}

fn roots_of(analysis: &Analysis) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut roots = Vec::new();
    for command in &analysis.commands {
        for view in &command.views {
            if let Some(word) = command.words.get(view.start).filter(|_| view.start < view.end) {
                let name = word.display();
                if seen.insert(name) {
                    roots.push(name.to_string());
                }
            }
        }
    }
    roots
}

/// The text a view stands for, for reasons.
fn view_text(command: &parse::SimpleCommand, view: View) -> String {
    if view.start >= view.end {
        return format!("the code `{}` runs (only known at run time)", command.text);
    }
    let words = command.words.get(view.start..view.end).unwrap_or(&[]);
    let text = words.iter().map(|w| w.written.as_str()).collect::<Vec<_>>().join(" ");
    if view.start == 0 {
        format!("`{text}`")
    } else {
        format!("`{text}` (run by `{}`)", command.text)
    }
}

fn decide(analysis: &Analysis, policy: &CommandPolicy) -> (Decision, String) {
    if !analysis.substitutions.is_empty() {
        let what: Vec<&str> = analysis.substitutions.iter().map(|c| c.describe()).collect();
        return (
            Decision::Deny,
            format!(
                "{} is not allowed: it runs a command that cannot be checked before it runs",
                what.join(" and ")
            ),
        );
    }

    let deny = rules::parse_rules(&policy.exclude_tools);
    if let Some(rule) = deny.iter().find(|r| r.is_everything()) {
        return (
            Decision::Deny,
            format!("every shell command is blocked by excludeTools entry `{}`", rule.entry),
        );
    }
    let mut maybe_denied = None;
    for command in &analysis.commands {
        for &view in &command.views {
            for rule in &deny {
                match rules::denies(rule, &command.words, view) {
                    Match::Yes => {
                        return (
                            Decision::Deny,
                            format!(
                                "{} is blocked by excludeTools entry `{}`",
                                view_text(command, view),
                                rule.entry
                            ),
                        );
                    }
                    Match::Maybe if maybe_denied.is_none() => maybe_denied = Some((command, view, rule)),
                    _ => {}
                }
            }
        }
    }

    if let Some(error) = &analysis.syntax_error {
        return (
            Decision::Ask,
            format!("the command does not parse as bash ({error}), so it cannot be checked"),
        );
    }
    if let Some((command, view, rule)) = maybe_denied {
        return (
            Decision::Ask,
            format!(
                "{} may be blocked by excludeTools entry `{}`: it matches once words only known at run time, or options before the subcommand, are taken into account",
                view_text(command, view),
                rule.entry
            ),
        );
    }
    let allow = rules::parse_rules(policy.core_tools.iter().chain(&policy.session_approvals));
    // Hidden code is judged like a command we cannot read: only a policy that
    // allows everything and denies nothing lets it through.
    let allows_everything = deny.is_empty() && allow.iter().any(|r| r.is_everything());
    if !analysis.hazards.is_empty() && !allows_everything {
        return (
            Decision::Ask,
            format!("it cannot be checked fully: {}", analysis.hazards.join("; ")),
        );
    }
    if analysis.commands.is_empty() {
        return match allow.iter().find(|r| r.is_everything()) {
            Some(rule) => (Decision::Allow, format!("allowed by `{}`", rule.entry)),
            None => (Decision::Ask, "there is no command to check".to_string()),
        };
    }
    for command in &analysis.commands {
        for &view in &command.views {
            if !allow.iter().any(|r| rules::allows(r, &command.words, view)) {
                let why = if allow.is_empty() {
                    "no coreTools or sessionApprovals entries are set"
                } else {
                    "it is not covered by coreTools or sessionApprovals"
                };
                return (
                    Decision::Ask,
                    format!("{} needs confirmation: {why}", view_text(command, view)),
                );
            }
        }
    }
    (
        Decision::Allow,
        "every command is covered by coreTools or sessionApprovals".to_string(),
    )
}
