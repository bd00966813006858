//! What a job runs, and where: the command line, its environment, its working
//! directory. Starting the process is the platform's (`crate::platform::spawn`).

pub mod command;
pub mod directory;
pub mod env;

use std::ffi::OsString;

use directory::WorkingDir;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Pty,
    Pipes,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Pty => "pty",
            Mode::Pipes => "pipes",
        }
    }
}

pub struct SpawnSpec<'a> {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub cwd: &'a WorkingDir,
    pub mode: Mode,
    pub cols: u16,
    pub rows: u16,
}
