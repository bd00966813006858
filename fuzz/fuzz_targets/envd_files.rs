//! The fuzz target of fuzz/checks/envd_files.rs (what is fed and what is checked is
//! described there); `cargo test` replays its corpus through the same check
//! (tests/fuzz_corpus.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../checks/envd_files.rs"]
mod check;

fuzz_target!(|data: &[u8]| check::check(data));
