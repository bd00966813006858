//! Seeing through commands that run other commands.
//!
//! `sudo rm -rf x` runs `rm`, so a rule denying `rm` must see it: we report both
//! `sudo` and `rm` as roots and match rules against both `sudo rm -rf x` and
//! `rm -rf x` (a [`View`] each). Shells and `eval` go further: their argument is
//! itself a script, which `parse.rs` parses again ([`Code`]).
//!
//! Option parsing here only has to find where the wrapped command starts. Each
//! wrapper's options that take a value are listed, so `sudo -u bob rm` skips `bob`;
//! an unknown option is assumed to take no value. A word we cannot read (a
//! variable) ends option parsing and is taken as the command, which policy matching
//! treats as "could be anything".

use super::words::Word;

/// A run of a command's words that is a command line of its own (`rm x` in
/// `sudo -u bob rm x`). `then_anything` marks that run-time input is appended to it
/// (what `xargs` reads); an empty view with `then_anything` is a command we cannot
/// see at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct View {
    pub start: usize,
    pub end: usize,
    pub then_anything: bool,
}

/// Script text reaching a command on its standard input, when the command line
/// shows it: a here-document or here-string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stdin {
    Script(String),
    Unknown,
}

/// Shell code that a command will run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Code {
    /// Known text, to be parsed and checked like the command itself.
    Script(String),
    /// Only known at run time (`bash -c "$CMD"`, `curl ... | bash`).
    Unknown,
}

#[derive(Debug, Default)]
pub(crate) struct Unwrapped {
    /// `views[0]` is always the whole command.
    pub views: Vec<View>,
    pub code: Vec<Code>,
    /// Variables set through `env VAR=x` / `sudo VAR=x`, for the caller's check of
    /// variables that make programs run hidden code.
    pub assigned: Vec<String>,
    /// More wrappers than [`MAX_VIEWS`]; the rest was not examined.
    pub truncated: bool,
}

/// A bound on views per command, so `sudo sudo sudo ...` costs linear time.
pub(crate) const MAX_VIEWS: usize = 16;

/// Finds the commands that `words` (one simple command) runs.
pub(crate) fn unwrap(words: &[Word], stdin: &Stdin) -> Unwrapped {
    let mut out = Unwrapped {
        views: vec![View {
            start: 0,
            end: words.len(),
            then_anything: false,
        }],
        ..Unwrapped::default()
    };
    let mut next = 0;
    while next < out.views.len() {
        if out.views.len() > MAX_VIEWS {
            out.views.truncate(MAX_VIEWS);
            out.truncated = true;
            break;
        }
        let view = out.views[next];
        examine(words, view, stdin, &mut out);
        next += 1;
    }
    out
}

/// The name bash would look up, for recognising wrappers: `/usr/bin/sudo` is sudo.
pub(crate) fn basename(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// Shells whose `-c` argument is bash-compatible enough to parse as bash.
const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh", "mksh", "ash"];
/// Shells with a different syntax: their code is run but cannot be read by us.
const FOREIGN_SHELLS: &[&str] = &["fish", "csh", "tcsh", "nu", "elvish", "xonsh"];

fn examine(words: &[Word], view: View, stdin: &Stdin, out: &mut Unwrapped) {
    if view.start >= view.end || view.end > words.len() {
        return;
    }
    let Some(name) = words.get(view.start).and_then(Word::literal) else {
        return;
    };
    let name = basename(name);
    if SHELLS.contains(&name) {
        shell(words, view, stdin, out);
    } else if FOREIGN_SHELLS.contains(&name) {
        let args = &words[view.start + 1..view.end];
        let has_c = args
            .iter()
            .any(|w| w.literal().is_some_and(|s| s.starts_with('-') && s.contains('c')));
        if has_c || args.is_empty() {
            out.code.push(Code::Unknown);
        }
    } else if name == "eval" {
        eval(words, view, out);
    } else if name == "trap" {
        trap(words, view, out);
    } else if name == "find" {
        find(words, view, out);
    } else if let Some(spec) = wrapper(name) {
        wrapped(words, view, name, &spec, out);
    }
}

/// How to find the command inside a wrapper's arguments.
#[derive(Default)]
struct Spec {
    /// Short options that take a value (attached `-ubob` or next word `-u bob`).
    short_with_arg: &'static str,
    /// Short options whose value can only be attached (`xargs -i{}`).
    short_optional: &'static str,
    /// Long options that take the next word as a value when written without `=`.
    long_with_arg: &'static [&'static str],
    /// `VAR=value` words may come before the command.
    assignments: bool,
    /// Operands between the options and the command (`timeout`'s duration).
    operands: usize,
    /// Run-time input is appended to the command's arguments (`xargs`).
    appends: bool,
}

fn wrapper(name: &str) -> Option<Spec> {
    let spec = match name {
        "sudo" => Spec {
            short_with_arg: "CDghpRrTtUu",
            long_with_arg: &[
                "close-from",
                "chdir",
                "group",
                "host",
                "prompt",
                "chroot",
                "role",
                "command-timeout",
                "type",
                "other-user",
                "user",
            ],
            assignments: true,
            ..Spec::default()
        },
        "doas" => Spec {
            short_with_arg: "aCu",
            ..Spec::default()
        },
        "env" => Spec {
            short_with_arg: "uCS",
            long_with_arg: &["unset", "chdir", "split-string"],
            assignments: true,
            ..Spec::default()
        },
        "timeout" => Spec {
            short_with_arg: "sk",
            long_with_arg: &["signal", "kill-after"],
            operands: 1,
            ..Spec::default()
        },
        "nice" => Spec {
            short_with_arg: "n",
            long_with_arg: &["adjustment"],
            ..Spec::default()
        },
        "exec" => Spec {
            short_with_arg: "a",
            ..Spec::default()
        },
        // `time` is a bash keyword (`time -p`) and GNU time (`-f FMT`, `-o FILE`).
        "time" => Spec {
            short_with_arg: "fo",
            long_with_arg: &["format", "output"],
            ..Spec::default()
        },
        "stdbuf" => Spec {
            short_with_arg: "ioe",
            long_with_arg: &["input", "output", "error"],
            ..Spec::default()
        },
        "xargs" => Spec {
            short_with_arg: "adEILnPs",
            short_optional: "eil",
            long_with_arg: &[
                "arg-file",
                "delimiter",
                "max-args",
                "max-procs",
                "max-chars",
                "process-slot-var",
            ],
            appends: true,
            ..Spec::default()
        },
        "nohup" | "command" | "builtin" | "setsid" | "coproc" => Spec::default(),
        _ => return None,
    };
    Some(spec)
}

/// `sudo -u bob rm x` → adds the view `rm x`.
fn wrapped(words: &[Word], view: View, name: &str, spec: &Spec, out: &mut Unwrapped) {
    let mut i = view.start + 1;
    // `sudo -s` / `sudo -i` / `doas -s` with no command start an interactive shell.
    let mut shell_mode = false;
    let runs_shell = |opt: char| matches!((name, opt), ("sudo", 's' | 'i') | ("doas", 's'));
    while i < view.end {
        // A word we cannot read ends the options: it is (or could be) the command.
        let Some(s) = words[i].literal() else { break };
        if s == "--" {
            i += 1;
            break;
        }
        if spec.assignments {
            if let Some(var) = assignment_name(s) {
                out.assigned.push(var.to_string());
                i += 1;
                continue;
            }
        }
        if name == "env" && s == "-" {
            // `env -` is `env -i`.
            i += 1;
            continue;
        }
        if let Some(long) = s.strip_prefix("--") {
            let (opt, value) = match long.split_once('=') {
                Some((o, v)) => (o, Some(v)),
                None => (long, None),
            };
            if name == "env" && opt == "split-string" {
                let string = value
                    .map(str::to_string)
                    .or_else(|| words.get(i + 1).and_then(|w| w.literal().map(str::to_string)));
                let after = if value.is_some() { i + 1 } else { i + 2 };
                split_string(words, view, string, after, out);
                return;
            }
            shell_mode |= name == "sudo" && matches!(opt, "shell" | "login");
            i += if value.is_none() && spec.long_with_arg.contains(&opt) {
                2
            } else {
                1
            };
            continue;
        }
        if s.len() > 1 && s.starts_with('-') {
            let cluster = &s[1..];
            if name == "command" && cluster.contains(['v', 'V']) {
                // `command -v git` only looks git up; it does not run it.
                return;
            }
            let mut takes_next = false;
            for (at, c) in cluster.char_indices() {
                shell_mode |= runs_shell(c);
                let rest = &cluster[at + c.len_utf8()..];
                if spec.short_with_arg.contains(c) {
                    if name == "env" && c == 'S' {
                        let (string, after) = if rest.is_empty() {
                            (words.get(i + 1).and_then(|w| w.literal().map(str::to_string)), i + 2)
                        } else {
                            (Some(rest.to_string()), i + 1)
                        };
                        split_string(words, view, string, after, out);
                        return;
                    }
                    takes_next = rest.is_empty();
                    break;
                }
                if spec.short_optional.contains(c) {
                    break;
                }
            }
            i += if takes_next { 2 } else { 1 };
            continue;
        }
        break;
    }
    i = i.saturating_add(spec.operands);
    let then_anything = view.then_anything || spec.appends;
    if i < view.end {
        out.views.push(View {
            start: i,
            end: view.end,
            then_anything,
        });
    } else if shell_mode {
        out.code.push(Code::Unknown);
    } else if view.then_anything {
        // e.g. `... | xargs sudo`: the command itself comes from the input.
        out.views.push(View {
            start: view.end,
            end: view.end,
            then_anything: true,
        });
    }
}

/// `env -S 'rm -rf x' y`: the string is split into words and run, with the
/// remaining arguments after it. Parsing it as shell code over-approximates the
/// splitting, which is what we want here.
fn split_string(words: &[Word], view: View, string: Option<String>, after: usize, out: &mut Unwrapped) {
    let Some(mut script) = string else {
        out.code.push(Code::Unknown);
        return;
    };
    for w in words.get(after..view.end).unwrap_or(&[]) {
        match w.literal() {
            Some(s) => {
                script.push(' ');
                script.push_str(s);
            }
            None => {
                out.code.push(Code::Unknown);
                return;
            }
        }
    }
    out.code.push(Code::Script(script));
}

/// `bash [options] -c 'script'`, `bash <<EOF`, `curl ... | sh`.
fn shell(words: &[Word], view: View, stdin: &Stdin, out: &mut Unwrapped) {
    let mut command_string = false;
    let mut read_stdin = false;
    let mut pending_values = 0usize;
    let mut i = view.start + 1;
    while i < view.end {
        if pending_values > 0 {
            // The value of `-o pipefail`, `-O extglob`, `--rcfile FILE`.
            pending_values -= 1;
            i += 1;
            continue;
        }
        let Some(s) = words[i].literal() else { break };
        if s == "--" || s == "-" {
            i += 1;
            break;
        }
        if s.starts_with("--") {
            if s == "--rcfile" || s == "--init-file" {
                pending_values += 1;
            }
            i += 1;
            continue;
        }
        if s.len() > 1 && (s.starts_with('-') || s.starts_with('+')) {
            for c in s[1..].chars() {
                match c {
                    'c' if s.starts_with('-') => command_string = true,
                    's' => read_stdin = true,
                    'o' | 'O' => pending_values += 1,
                    _ => {}
                }
            }
            i += 1;
            continue;
        }
        break;
    }
    if command_string {
        match words.get(i).filter(|_| i < view.end) {
            Some(w) => match w.literal() {
                Some(s) => {
                    out.code.push(Code::Script(s.to_string()));
                    // `find -exec sh -c 'x {}'` and `xargs -I{} sh -c 'x {}'` paste
                    // file names or input into the script text itself, so what
                    // runs is partly unknown.
                    if view.then_anything || s.contains("{}") {
                        out.code.push(Code::Unknown);
                    }
                }
                None => out.code.push(Code::Unknown),
            },
            // The script would come from the input `xargs` appends.
            None if view.then_anything => out.code.push(Code::Unknown),
            None => {}
        }
    } else if i < view.end && !read_stdin {
        // `bash script.sh` runs a file, like any other program runs its own code.
    } else {
        match stdin {
            Stdin::Script(s) => out.code.push(Code::Script(s.clone())),
            Stdin::Unknown => out.code.push(Code::Unknown),
        }
    }
}

/// `eval` joins its arguments with spaces and runs the result.
fn eval(words: &[Word], view: View, out: &mut Unwrapped) {
    let args = &words[view.start + 1..view.end];
    if view.then_anything {
        out.code.push(Code::Unknown);
        return;
    }
    if args.is_empty() {
        return;
    }
    let mut script = String::new();
    for w in args {
        let Some(s) = w.literal() else {
            out.code.push(Code::Unknown);
            return;
        };
        if !script.is_empty() {
            script.push(' ');
        }
        script.push_str(s);
    }
    out.code.push(Code::Script(script));
}

/// `trap 'cleanup; rm -rf x' EXIT` runs its first argument later, as code.
fn trap(words: &[Word], view: View, out: &mut Unwrapped) {
    let mut args = &words[view.start + 1..view.end];
    if args.first().and_then(Word::literal) == Some("--") {
        args = &args[1..];
    }
    if view.then_anything {
        out.code.push(Code::Unknown);
        return;
    }
    let Some(action) = args.first() else { return };
    match action.literal() {
        // `trap -p`, `trap -l` print; `trap SIG` (one argument) and `trap - SIG`
        // reset; `trap '' SIG` ignores. None of them run code.
        Some(s) if s.starts_with('-') || s.is_empty() || args.len() == 1 => {}
        Some(s) => out.code.push(Code::Script(s.to_string())),
        None => out.code.push(Code::Unknown),
    }
}

/// `find . -name x -exec rm {} \;` runs `rm`.
fn find(words: &[Word], view: View, out: &mut Unwrapped) {
    let mut i = view.start + 1;
    while i < view.end {
        let is_exec = matches!(words[i].literal(), Some("-exec" | "-execdir" | "-ok" | "-okdir"));
        i += 1;
        if !is_exec {
            continue;
        }
        let start = i;
        while i < view.end {
            match words[i].literal() {
                Some(";") => break,
                Some("+") if i > start && words[i - 1].literal() == Some("{}") => break,
                _ => i += 1,
            }
        }
        if i > start {
            out.views.push(View {
                start,
                end: i,
                then_anything: false,
            });
        }
    }
}

/// `NAME=value` or `NAME+=value` → `NAME`.
pub(crate) fn assignment_name(word: &str) -> Option<&str> {
    let eq = word.find('=')?;
    let name = word[..eq].strip_suffix('+').unwrap_or(&word[..eq]);
    let mut chars = name.chars();
    let first = chars.next()?;
    if (first.is_ascii_alphabetic() || first == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Some(name)
    } else {
        None
    }
}
