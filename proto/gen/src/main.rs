//! proto/envd/*.proto → `<package>.rs` (prost's messages) and `<package>.serde.rs`
//! (pbjson's proto3 JSON mapping) in src/daemon/envd/generated/, which
//! src/daemon/envd/proto.rs includes. protox parses the files in Rust, so no `protoc`
//! is needed. Run through scripts/gen-envd-proto.mjs, which also stamps the sources'
//! digests for scripts/check-generated.mjs.
//!
//! Generated once and committed rather than by the core's build.rs: protox and its
//! parser (logos, miette, prost-reflect) were compiled for every build profile of the
//! core, and the messages generated again, for code that changes only when a .proto
//! does. (prost-build and pbjson-build stay in the core's builds: pbjson-types' own
//! build script uses them.)
//!
//! `cargo run --manifest-path proto/gen/Cargo.toml -- REPOSITORY_ROOT`

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(root) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: nss-envd-protogen REPOSITORY_ROOT");
        return ExitCode::from(2);
    };
    match generate(&root) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("proto/envd: {e}");
            ExitCode::FAILURE
        }
    }
}

fn generate(root: &Path) -> Result<(), String> {
    let dir = root.join("proto/envd");
    let out = root.join("src/daemon/envd/generated");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "proto"))
        .collect();
    files.sort();
    let descriptors = protox::compile(&files, [&dir]).map_err(|e| format!("{e:?}"))?;
    let packages: Vec<String> = descriptors
        .file
        .iter()
        .filter_map(|f| f.package.clone())
        .filter(|p| !p.starts_with("google."))
        .map(|p| format!(".{p}"))
        .collect();
    let encoded = prost::Message::encode_to_vec(&descriptors);
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut config = prost_build::Config::new();
    // google.protobuf's types (a file's Timestamp) come with their JSON mapping from
    // pbjson-types.
    config
        .compile_well_known_types()
        .extern_path(".google.protobuf", "::pbjson_types");
    config.out_dir(&out);
    config.compile_fds(descriptors).map_err(|e| e.to_string())?;
    // Fields this file does not know (a newer SDK's) are skipped in JSON as protobuf
    // skips them in binary, rather than refusing the whole request.
    pbjson_build::Builder::new()
        .ignore_unknown_fields()
        .out_dir(&out)
        .register_descriptors(&encoded)
        .and_then(|b| b.build(&packages))
        .map_err(|e| format!("JSON mapping: {e}"))?;
    Ok(())
}
