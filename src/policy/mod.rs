//! Placeholder: the command policy lands here.
