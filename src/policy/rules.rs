//! The user's allow and deny lists (Gemini CLI syntax) and how a command's words
//! are matched against them.
//!
//! An entry is `run_shell_command` (every command) or `run_shell_command(git push)`:
//! a prefix of whole words. `git push` matches `git push origin` but not
//! `git pushx` or `git status`. The older tool name `ShellTool` is accepted too, and
//! entries naming other tools are ignored.
//!
//! Matching is asymmetric on purpose. A word that is only known at run time
//! (`$X`, a glob, `{a,b}`) never proves that a command is *allowed*, but it may
//! make it *denied*: `git $X` could be `git push`. So deny matching has three
//! answers and the caller turns "maybe" into `ask`. Likewise a deny rule `rm`
//! catches `/bin/rm` (same basename), while an allow rule `git` does not allow
//! `./git`, which may be any program.

use super::glob;
use super::roots::{basename, View};
use super::words::{Form, Word};

/// One parsed entry.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    /// The entry as the user wrote it, for reasons.
    pub entry: String,
    /// The command prefix; empty means every command.
    pub words: Vec<String>,
}

impl Rule {
    pub(crate) fn is_everything(&self) -> bool {
        self.words.is_empty()
    }
}

/// Parses the shell entries of a tool list, skipping entries for other tools.
pub(crate) fn parse_rules<'a>(entries: impl IntoIterator<Item = &'a String>) -> Vec<Rule> {
    entries
        .into_iter()
        .filter_map(|e| {
            parse_entry(e).map(|words| Rule {
                entry: e.trim().to_string(),
                words,
            })
        })
        .collect()
}

fn parse_entry(entry: &str) -> Option<Vec<String>> {
    let entry = entry.trim();
    for tool in ["run_shell_command", "ShellTool"] {
        let Some(rest) = entry.strip_prefix(tool) else { continue };
        let rest = rest.trim();
        if rest.is_empty() {
            return Some(Vec::new());
        }
        let inner = rest.strip_prefix('(')?.strip_suffix(')')?;
        return Some(split_words(inner));
    }
    None
}

/// Splits a rule's command into words, honouring simple quoting so that
/// `run_shell_command(git commit -m "wip")` reads like the command it names.
fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => current.extend(chars.next()),
            (Some(_), c) => current.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                current.extend(chars.next());
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            (None, c) => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(current);
    }
    words
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Match {
    No,
    /// Only if run-time values turn out a certain way.
    Maybe,
    Yes,
}

/// Whether an allow rule certainly covers the command line `view`.
pub(crate) fn allows(rule: &Rule, words: &[Word], view: View) -> bool {
    rule.is_everything() || definite(rule, view_words(words, view), false)
}

/// Whether a deny rule covers the command line `view`.
pub(crate) fn denies(rule: &Rule, words: &[Word], view: View) -> Match {
    let ws = view_words(words, view);
    if rule.is_everything() || definite(rule, ws, true) {
        Match::Yes
    } else if possible(rule, ws, view.then_anything) {
        Match::Maybe
    } else {
        Match::No
    }
}

fn view_words(words: &[Word], view: View) -> &[Word] {
    words.get(view.start..view.end).unwrap_or(&[])
}

fn same_word(value: &str, rule_word: &str, first: bool, deny: bool) -> bool {
    value == rule_word || (deny && first && basename(value) == rule_word)
}

/// Every rule word equals the corresponding literal word.
fn definite(rule: &Rule, ws: &[Word], deny: bool) -> bool {
    ws.len() >= rule.words.len()
        && rule
            .words
            .iter()
            .zip(ws)
            .enumerate()
            .all(|(i, (r, w))| w.literal().is_some_and(|v| same_word(v, r, i == 0, deny)))
}

/// Whether some expansion of the words could start with the rule's words, or could
/// once options are skipped. A small automaton: `states[k]` means "the first k rule
/// words can be matched so far"; `after_option[k]` means the same, with the previous
/// word an option whose value this word may be.
///
/// Skipping options catches `git -C . push` and `git --no-pager push` for a rule
/// `git push`: global options between a command and its subcommand. It only ever
/// turns a non-match into "maybe" (→ `ask`); a `deny` needs an exact prefix.
fn possible(rule: &Rule, ws: &[Word], then_anything: bool) -> bool {
    let n = rule.words.len();
    let mut states = vec![false; n + 1];
    let mut after_option = vec![false; n + 1];
    states[0] = true;
    for w in ws {
        let mut next = vec![false; n + 1];
        let mut next_after_option = vec![false; n + 1];
        for s in (0..n).filter(|&s| states[s] || after_option[s]) {
            if s > 0 {
                // An option (or something that could be one) may be skipped, and so
                // may the word after an option, which may be its value.
                let optionish = match &w.form {
                    Form::Literal(v) | Form::Pattern { literal: v, .. } => v.starts_with('-'),
                    Form::Unknown { .. } => true,
                };
                if optionish {
                    next_after_option[s] = true;
                }
                if after_option[s] {
                    next[s] = true;
                }
            }
            match &w.form {
                Form::Literal(v) => {
                    if same_word(v, &rule.words[s], s == 0, true) {
                        next[s + 1] = true;
                    }
                }
                // A command name with a directory part is compared by basename,
                // which a glob makes hard to reason about: treat it as anything.
                Form::Pattern { pattern, .. } if s == 0 && pattern.contains('/') => next[s..].fill(true),
                Form::Pattern { pattern, .. } => {
                    // A glob becomes zero or more words, each matching the pattern.
                    next[s] = true;
                    let mut t = s;
                    while t < n && glob::may_match(pattern, &rule.words[t]) {
                        t += 1;
                        next[t] = true;
                    }
                }
                Form::Unknown { splits: false } => next[s + 1] = true,
                Form::Unknown { splits: true } => next[s..].fill(true),
            }
        }
        if next[n] {
            return true;
        }
        if !next.contains(&true) && !next_after_option.contains(&true) {
            return false;
        }
        states = next;
        after_option = next_after_option;
    }
    // Whatever is appended at run time could supply the remaining rule words.
    then_anything && (states.contains(&true) || after_option.contains(&true))
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn entries() {
        assert_eq!(parse_entry("run_shell_command"), Some(vec![]));
        assert_eq!(
            parse_entry(" run_shell_command(git  status) "),
            Some(vec!["git".into(), "status".into()])
        );
        assert_eq!(parse_entry("ShellTool(rm)"), Some(vec!["rm".into()]));
        assert_eq!(parse_entry("run_shell_command()"), Some(vec![]));
        assert_eq!(
            parse_entry("run_shell_command(git commit -m \"a b\")"),
            Some(vec!["git".into(), "commit".into(), "-m".into(), "a b".into()])
        );
        assert_eq!(parse_entry("read_file"), None);
        assert_eq!(parse_entry("run_shell_command(git"), None);
    }
}
