//! The fuzz target of fuzz/checks/output_pipeline.rs (what is fed and what is checked is
//! described there); `cargo test` replays its corpus through the same check
//! (tests/fuzz_corpus.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../checks/output_pipeline.rs"]
mod check;

fuzz_target!(|data: &[u8]| check::check(data));
