//! Feeds arbitrary bytes to `check_command`. A crash is a panic, an abort in the
//! grammar's C code, or a broken invariant asserted below.
//!
//! The check itself, shared by the fuzz target (fuzz/fuzz_targets/check_command.rs, under
//! libFuzzer and AddressSanitizer) and the replay of its committed corpus in `cargo test`
//! (tests/fuzz_corpus.rs).

use native_shell_service::policy::{check_command, CommandPolicy, Decision, MAX_COMMAND_BYTES};

/// One input: panics (a crash, to either driver) where the code under test fails.
pub fn check(data: &[u8]) {
    // Invalid UTF-8 becomes U+FFFD rather than being thrown away, so every input
    // exercises the parser.
    let command = String::from_utf8_lossy(data);
    let policy = CommandPolicy {
        exclude_tools: vec!["run_shell_command(rm)".into(), "run_shell_command(git push)".into()],
        core_tools: vec!["run_shell_command(ls)".into(), "run_shell_command(git)".into()],
        session_approvals: vec!["run_shell_command(cargo test)".into()],
    };
    match check_command(&command, &policy) {
        Ok(check) => {
            // A substitution is always refused.
            if check.has_substitution {
                assert_eq!(check.decision, Decision::Deny, "{command:?}");
            }
            // Nothing runs `rm` with approval.
            if check.roots.iter().any(|r| r == "rm") {
                assert_ne!(check.decision, Decision::Allow, "{command:?}");
            }
        }
        Err(_) => assert!(command.len() > MAX_COMMAND_BYTES),
    }
}
