use std::path::{Path, PathBuf};

fn main() {
    // Only the Node addon needs napi's link set-up; the plain core builds without it.
    if std::env::var_os("CARGO_FEATURE_NODE").is_some() {
        napi_build::setup();
    }
    envd_protos();
}

/// proto/envd/*.proto → `<package>.rs` (prost's messages) and `<package>.serde.rs`
/// (pbjson's proto3 JSON mapping) in OUT_DIR, which src/daemon/envd/proto.rs includes.
/// protox parses the files in Rust, so no `protoc` is needed. A file that does not
/// parse fails the build, saying where.
fn envd_protos() {
    let dir = Path::new("proto/envd");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("proto/envd is part of the crate")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "proto"))
        .collect();
    files.sort();
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    let descriptors = protox::compile(&files, [dir]).unwrap_or_else(|e| panic!("proto/envd: {e:?}"));
    let packages: Vec<String> = descriptors
        .file
        .iter()
        .filter_map(|f| f.package.clone())
        .filter(|p| !p.starts_with("google."))
        .map(|p| format!(".{p}"))
        .collect();
    let encoded = prost::Message::encode_to_vec(&descriptors);
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut config = prost_build::Config::new();
    // google.protobuf's types (a file's Timestamp) come with their JSON mapping from
    // pbjson-types.
    config
        .compile_well_known_types()
        .extern_path(".google.protobuf", "::pbjson_types");
    config.out_dir(&out);
    config
        .compile_fds(descriptors)
        .unwrap_or_else(|e| panic!("proto/envd: {e}"));
    // Fields this file does not know (a newer SDK's) are skipped in JSON as protobuf
    // skips them in binary, rather than refusing the whole request.
    pbjson_build::Builder::new()
        .ignore_unknown_fields()
        .out_dir(&out)
        .register_descriptors(&encoded)
        .and_then(|b| b.build(&packages))
        .unwrap_or_else(|e| panic!("proto/envd (JSON mapping): {e}"));
}
