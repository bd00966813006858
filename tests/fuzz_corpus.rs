//! Every fuzz target's committed corpus (fuzz/corpus/<target>/), replayed through the
//! target's own check (fuzz/checks/) on every `cargo test`: each input that once found a
//! bug, or widened what the fuzzer reached, is tried again on every change, in the build
//! `npm test` already made. What this replay does not do is fuzz: no new inputs and no
//! AddressSanitizer; those are `cargo fuzz run` in scripts/release-check.sh (docs/policy.md,
//! CONTRIBUTING.md).

use std::path::{Path, PathBuf};

#[path = "../fuzz/checks/check_command.rs"]
mod check_command;
#[path = "../fuzz/checks/envd_files.rs"]
mod envd_files;
#[path = "../fuzz/checks/envd_request.rs"]
mod envd_request;
#[path = "../fuzz/checks/output_pipeline.rs"]
mod output_pipeline;

/// Feeds each file of fuzz/corpus/`target` to `check`, naming the input a panic came from.
/// An empty or missing corpus fails: a renamed folder must not turn the replay into nothing.
fn replay(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut inputs: Vec<PathBuf> = entries
        .map(|entry| entry.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path())
        .filter(|path| path.is_file())
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "{}: no corpus to replay", dir.display());
    for input in &inputs {
        let data = std::fs::read(input).unwrap_or_else(|e| panic!("{}: {e}", input.display()));
        if std::panic::catch_unwind(|| check(&data)).is_err() {
            panic!(
                "{target}: the corpus input {} fails its check (replay it with `cargo fuzz run {target} {}`)",
                input.display(),
                input.display()
            );
        }
    }
    eprintln!("{target}: {} corpus inputs replayed", inputs.len());
}

#[test]
fn check_command_corpus() {
    replay("check_command", check_command::check);
}

#[test]
fn envd_files_corpus() {
    replay("envd_files", envd_files::check);
}

#[test]
fn envd_request_corpus() {
    replay("envd_request", envd_request::check);
}

#[test]
fn output_pipeline_corpus() {
    replay("output_pipeline", output_pipeline::check);
}
