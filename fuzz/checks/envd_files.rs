//! Feeds arbitrary uploads to the parsing half of the network face's POST /files
//! (`daemon::decode_upload`: the query's path, the multipart/form-data parser, where
//! each part goes). The first byte picks the content type, the second how many of the
//! next bytes are the query string; the rest is the body. A crash is a panic; an
//! accepted upload must name absolute, folded paths (no `.` or `..` left).
//!
//! The check itself, shared by the fuzz target (fuzz/fuzz_targets/envd_files.rs, under
//! libFuzzer and AddressSanitizer) and the replay of its committed corpus in `cargo test`
//! (tests/fuzz_corpus.rs).

use std::path::Component;

use native_shell_service::daemon::decode_upload;

const TYPES: [&str; 5] = [
    "multipart/form-data; boundary=B",
    "multipart/form-data; boundary=\"--x y\"",
    "application/octet-stream",
    "",
    "text/plain",
];

/// One input: panics (a crash, to either driver) where the code under test fails.
pub fn check(data: &[u8]) {
    let [pick, query_len, rest @ ..] = data else { return };
    let content_type = TYPES[usize::from(*pick) % TYPES.len()];
    let split = usize::from(*query_len).min(rest.len());
    let (query, body) = rest.split_at(split);
    let query = String::from_utf8_lossy(query);
    if let Ok(files) = decode_upload(content_type, &query, body) {
        assert!(!files.is_empty());
        for (path, len) in files {
            assert!(path.is_absolute(), "{path:?}");
            assert!(
                path.components()
                    .all(|c| matches!(c, Component::RootDir | Component::Normal(_))),
                "{path:?}"
            );
            assert!(len <= body.len());
        }
    }
}
