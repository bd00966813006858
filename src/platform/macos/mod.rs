//! macOS: not implemented yet.
