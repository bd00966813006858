//! Feeds arbitrary bytes to the network face's request decoding
//! (`daemon::decode_request`: the Connect envelopes, then the protobuf or JSON decode
//! of each `process.Process` request, then the checks of what it names). The first
//! byte picks the method and the content type, the rest is the body. A crash is a
//! panic; a refusal must be a Connect error with a code.
#![no_main]

use libfuzzer_sys::fuzz_target;
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

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else { return };
    let method = METHODS[usize::from(pick) % METHODS.len()];
    let content_type = TYPES[usize::from(pick / 16) % TYPES.len()];
    if let Err(e) = decode_request(method, content_type, body) {
        assert!(!e.code.as_str().is_empty() && !e.message.is_empty());
    }
});
