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
    // Every input is tried, so a failure names all the inputs that fail, not only the first.
    let mut failed = Vec::new();
    for input in &inputs {
        let data = std::fs::read(input).unwrap_or_else(|e| panic!("{}: {e}", input.display()));
        if std::panic::catch_unwind(|| check(&data)).is_err() {
            failed.push(input.display().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "{target}: {} of {} corpus inputs fail their check (replay one with `cargo fuzz run {target} <input>`):\n{}",
        failed.len(),
        inputs.len(),
        failed.join("\n")
    );
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

/// The output check's reference for a PTY job's finished text is the stream collapsed
/// within the screen's window, as the job reads it: a cursor-up after a newline moves
/// back onto the line above, so the next newline or text lands there. Against the
/// window-less `collapse` (what the check compared with until the window existed), these
/// minimized forms of six committed corpus inputs failed, though the job read them
/// right and the same whatever the reads.
#[test]
fn output_pipeline_check_reads_a_cursor_up_as_a_pty_job_does() {
    // Byte 0: the limits and mode of part 2; bytes 1..=8: read sizes less one (here one
    // byte a read); then what the process wrote.
    for written in [&b"\n\x1bM\n"[..], b"\n\x1b[AA", b"a\n\x1bMb\n"] {
        let mut data = vec![0u8; 9];
        data.extend_from_slice(written);
        output_pipeline::check(&data);
    }
}
