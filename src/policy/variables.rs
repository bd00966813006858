//! Variables whose value is code.
//!
//! `PS4='$(rm -rf ~)' bash -xc true` runs `rm` although no command in it says so,
//! and `LD_PRELOAD=./x.so ls` runs `x.so` inside an allowed `ls`. Setting one of
//! these (as a prefix, a bare assignment, `export`, or through `env`/`sudo`) makes
//! the decision at least `ask`. The list is deliberately short: the variables bash
//! itself or the dynamic loader turn into execution. Program-specific ones
//! (`GIT_SSH_COMMAND`, `PAGER`, ...) are out of scope; see docs/policy.md.

const CODE_VARIABLES: &[&str] = &[
    // Read by bash: startup files, prompt strings (expanded, so `$(...)` runs),
    // hook commands, and option sets (`SHELLOPTS=xtrace` plus `PS4`).
    "BASH_ENV",
    "ENV",
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    // Decides which program a command name runs.
    "PATH",
    // Loads code into every dynamically linked program.
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH",
];

/// Whether assigning `name` can make a process run code that is not in the command.
pub(crate) fn runs_code(name: &str) -> bool {
    // Exported functions travel in the environment as `BASH_FUNC_name%%`.
    CODE_VARIABLES.contains(&name) || name.starts_with("BASH_FUNC_")
}
