//! The messages of proto/envd/*.proto (prost for protobuf, pbjson for the proto3 JSON
//! mapping, so both Connect codecs read and write them), generated into
//! src/daemon/envd/generated/ by `node scripts/gen-envd-proto.mjs` and committed: the
//! build compiles no .proto parser. `npm test` fails when a .proto changed without them
//! (scripts/check-generated.mjs, against generated/SOURCES.sha256).

#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod process {
    include!("generated/process.rs");
    include!("generated/process.serde.rs");
}

#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod filesystem {
    include!("generated/filesystem.rs");
    include!("generated/filesystem.serde.rs");
}
