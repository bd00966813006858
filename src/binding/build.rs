fn main() {
    // napi's link set-up for a Node addon (its symbols are Node's, found when it loads).
    napi_build::setup();
}
