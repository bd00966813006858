fn main() {
    // Only the Node addon needs napi's link set-up; the plain core builds without it.
    // (envd's protobuf messages are generated ahead and committed:
    // src/daemon/envd/proto.rs, scripts/gen-envd-proto.mjs.)
    if std::env::var_os("CARGO_FEATURE_NODE").is_some() {
        napi_build::setup();
    }
}
