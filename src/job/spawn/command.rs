//! What to execute: a shell command line, or a program with an argv (no shell).
//!
//! On Unix the command runs as `bash -c <command>`. On Windows it runs as
//! `cmd.exe /d /s /c "<command>"` (the seeds' `cmd.exe /c`; `/d` skips AutoRun
//! commands from the registry, `/s` makes cmd take the text between the outer quotes
//! verbatim), or, with `shell: 'powershell'` / `'pwsh'`, as
//! `powershell.exe|pwsh.exe -NoProfile -Command <command>`. Either way the console's
//! output code page is set to UTF-8 first (`chcp 65001`, as the Gemini CLI does), so
//! programs that write in the console's code page write UTF-8.
//!
//! On Windows a program receives one command line, not an argv, so the arguments given
//! to `crate::platform::spawn` there are already written as their reader parses them
//! (see `windows`); the platform only puts the program's path in front.

use std::ffi::OsString;

use crate::base::error::{Result, ServiceError};

/// Which shell runs a command (the `shell` run option). Only Windows has a choice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Shell {
    /// `bash` on Unix, `cmd.exe` on Windows.
    #[default]
    Default,
    /// Windows PowerShell 5.1 (`powershell.exe`, on every Windows 10 and 11).
    PowerShell,
    /// PowerShell 7 (`pwsh.exe`, where installed).
    Pwsh,
}

impl Shell {
    /// The `shell` option: `'cmd'`, `'powershell'` or `'pwsh'`, on Windows only.
    pub fn parse(name: Option<&str>) -> Result<Self> {
        let shell = match name {
            None => return Ok(Self::Default),
            Some("cmd") => Self::Default,
            Some("powershell") => Self::PowerShell,
            Some("pwsh") => Self::Pwsh,
            Some(other) => {
                return Err(ServiceError::invalid(format!(
                    "shell must be 'cmd', 'powershell' or 'pwsh', got {other:?}"
                )))
            }
        };
        if cfg!(windows) {
            Ok(shell)
        } else {
            Err(ServiceError::invalid(
                "the shell option is for Windows; elsewhere commands run in bash",
            ))
        }
    }
}

/// Program and arguments. In argv mode nothing is interpreted: `$HOME`, `;` and `*`
/// reach the program literally (`shell_cmd`, docs/tools.md).
pub fn program_and_args(command: &str, argv: Option<&[String]>, shell: Shell) -> (OsString, Vec<OsString>) {
    match argv {
        Some(args) => (command.into(), args.iter().map(|a| argument(a)).collect()),
        None => shell_command(command, shell),
    }
}

#[cfg(unix)]
fn argument(arg: &str) -> OsString {
    arg.into()
}

#[cfg(unix)]
fn shell_command(command: &str, _shell: Shell) -> (OsString, Vec<OsString>) {
    ("bash".into(), vec!["-c".into(), command.into()])
}

#[cfg(windows)]
fn argument(arg: &str) -> OsString {
    windows::quote(arg).into()
}

#[cfg(windows)]
fn shell_command(command: &str, shell: Shell) -> (OsString, Vec<OsString>) {
    windows::shell_command(command, shell)
}

/// The Windows command lines, kept buildable everywhere so their tests run on Linux too.
#[cfg_attr(not(windows), allow(dead_code))]
mod windows {
    use std::ffi::OsString;

    use super::Shell;

    /// `command` for cmd.exe: after `/s /c`, cmd drops the first and the last quote of
    /// the rest of the line and runs what is between exactly as typed, so the command
    /// needs no escaping of its own (its quotes, `&`, `|`, `%` mean what they mean at
    /// a cmd prompt). `chcp` runs first, quietly; the command's exit code is cmd's.
    pub fn shell_command(command: &str, shell: Shell) -> (OsString, Vec<OsString>) {
        match shell {
            Shell::Default => (
                "cmd.exe".into(),
                vec![
                    "/d".into(),
                    "/s".into(),
                    "/c".into(),
                    format!("\"chcp 65001 >nul 2>&1 & {command}\"").into(),
                ],
            ),
            Shell::PowerShell | Shell::Pwsh => {
                let program = if shell == Shell::Pwsh {
                    "pwsh.exe"
                } else {
                    "powershell.exe"
                };
                // Setting the console's output encoding from inside is PowerShell's own
                // `chcp 65001`, and also makes PowerShell itself write UTF-8 to pipes.
                let script = format!("[Console]::OutputEncoding = [System.Text.Encoding]::UTF8; {command}");
                (
                    program.into(),
                    vec!["-NoProfile".into(), "-Command".into(), quote(&script).into()],
                )
            }
        }
    }

    /// One argument as the Microsoft C runtime (and `CommandLineToArgvW`) parses it back:
    /// quoted when it is empty or holds a space, tab or quote; inside quotes a `"` is
    /// written `\"`, and backslashes are doubled only where they precede a quote (one
    /// written or the closing one), elsewhere they are literal.
    pub fn quote(arg: &str) -> String {
        if !arg.is_empty() && !arg.contains([' ', '\t', '\n', '\u{b}', '"']) {
            return arg.to_string();
        }
        let mut quoted = String::with_capacity(arg.len() + 2);
        quoted.push('"');
        let mut backslashes = 0;
        for c in arg.chars() {
            match c {
                '\\' => backslashes += 1,
                '"' => {
                    quoted.extend(std::iter::repeat_n('\\', backslashes * 2 + 1));
                    quoted.push('"');
                    backslashes = 0;
                }
                c => {
                    quoted.extend(std::iter::repeat_n('\\', backslashes));
                    quoted.push(c);
                    backslashes = 0;
                }
            }
        }
        quoted.extend(std::iter::repeat_n('\\', backslashes * 2));
        quoted.push('"');
        quoted
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn arguments_are_quoted_as_the_c_runtime_reads_them() {
            assert_eq!(quote("plain"), "plain");
            assert_eq!(quote(r"C:\dir\file"), r"C:\dir\file");
            assert_eq!(quote(""), r#""""#);
            assert_eq!(quote("two words"), r#""two words""#);
            assert_eq!(quote(r#"say "hi""#), r#""say \"hi\"""#);
            assert_eq!(quote(r"ends\ with\"), r#""ends\ with\\""#);
            assert_eq!(quote(r#"a\"b c"#), r#""a\\\"b c""#);
        }

        #[test]
        fn cmd_gets_the_command_verbatim_between_quotes() {
            let (program, args) = shell_command(r#"echo "a b" & exit /b 3"#, Shell::Default);
            assert_eq!(program, "cmd.exe");
            let args: Vec<String> = args.into_iter().map(|a| a.to_string_lossy().into_owned()).collect();
            assert_eq!(
                args,
                ["/d", "/s", "/c", r#""chcp 65001 >nul 2>&1 & echo "a b" & exit /b 3""#]
            );
        }

        #[test]
        fn powershell_gets_one_quoted_script() {
            let (program, args) = shell_command(r#"Write-Output "x""#, Shell::Pwsh);
            assert_eq!(program, "pwsh.exe");
            let last = args
                .last()
                .map(|a| a.to_string_lossy().into_owned())
                .unwrap_or_default();
            assert!(
                last.starts_with('"') && last.ends_with(r#"Write-Output \"x\"""#),
                "{last}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_option_names() {
        assert!(Shell::parse(Some("bash")).is_err());
        assert_eq!(Shell::parse(None).ok(), Some(Shell::Default));
        assert_eq!(Shell::parse(Some("powershell")).is_ok(), cfg!(windows));
    }
}
