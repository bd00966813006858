//! Feeds arbitrary bytes to the network face's request decoding
//! (`daemon::decode_request`: the Connect envelopes, then the protobuf or JSON decode
//! of each `process.Process` request, then the checks of what it names). The first
//! byte picks the method and the content type, the rest is the body. A crash is a
//! panic; a refusal must be a Connect error with a code.
//!
//! The check itself, shared by the fuzz target (fuzz/fuzz_targets/envd_request.rs, under
//! libFuzzer and AddressSanitizer) and the replay of its committed corpus in `cargo test`
//! (tests/fuzz_corpus.rs).

use native_shell_service::daemon::decode_request;

const METHODS: [&str; 9] = [
    "Start",
    "Connect",
    "List",
    "Update",
    "StreamInput",
    "SendInput",
    "SendSignal",
    "CloseStdin",
    "Nope",
];
const TYPES: [&str; 5] = [
    "application/json",
    "application/proto",
    "application/connect+json",
    "application/connect+proto",
    "text/plain",
];

/// One input: panics (a crash, to either driver) where the code under test fails.
pub fn check(data: &[u8]) {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let method = METHODS[usize::from(pick) % METHODS.len()];
    let content_type = TYPES[usize::from(pick / 16) % TYPES.len()];
    if let Err(e) = decode_request(method, content_type, body) {
        assert!(!e.code.as_str().is_empty() && !e.message.is_empty());
    }
}
