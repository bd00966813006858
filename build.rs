// Builds nothing. It is here so that Cargo.toml's [build-dependencies] (syn with the
// features napi's macros turn on) take part in every build of the core: with them the
// daemon's and the tests' builds compile the proc macros, and so the core, as the addon's
// does (src/binding/ is the addon's crate), and the core is compiled once for all three.
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
}
