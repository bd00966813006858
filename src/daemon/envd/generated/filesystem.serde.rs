// The parts of filesystem's JSON mapping (pbjson-build), split by scripts/split-envd-serde.mjs.
include!("filesystem.serde.1.rs");
include!("filesystem.serde.2.rs");
include!("filesystem.serde.3.rs");
include!("filesystem.serde.4.rs");
include!("filesystem.serde.5.rs");
