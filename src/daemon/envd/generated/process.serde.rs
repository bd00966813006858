// The parts of process's JSON mapping (pbjson-build), split by scripts/split-envd-serde.mjs.
include!("process.serde.1.rs");
include!("process.serde.2.rs");
include!("process.serde.3.rs");
include!("process.serde.4.rs");
include!("process.serde.5.rs");
include!("process.serde.6.rs");
