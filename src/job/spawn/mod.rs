//! What a job runs, and where: the command line, its environment, its working
//! directory. Starting the process is the platform's (`crate::platform::spawn`).

pub mod command;
pub mod directory;
pub mod env;

pub use crate::platform::{Mode, SpawnSpec};
