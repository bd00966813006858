//! What to execute: a shell command line, or a program with an argv (no shell).

use std::ffi::OsString;

/// Program and arguments. In argv mode nothing is interpreted: `$HOME`, `;` and `*`
/// reach the program literally (`shell_cmd`, docs/tools.md).
pub fn program_and_args(command: &str, argv: Option<&[String]>) -> (OsString, Vec<OsString>) {
    match argv {
        Some(args) => (command.into(), args.iter().map(OsString::from).collect()),
        None => shell(command),
    }
}

#[cfg(unix)]
fn shell(command: &str) -> (OsString, Vec<OsString>) {
    ("bash".into(), vec!["-c".into(), command.into()])
}

#[cfg(windows)]
fn shell(command: &str) -> (OsString, Vec<OsString>) {
    ("cmd.exe".into(), vec!["/c".into(), command.into()])
}
