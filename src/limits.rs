//! The limits the service puts on what callers ask for. A leaf: it imports nothing, so
//! any module may use it without tying itself to the service.

use std::time::Duration;

/// Largest command line accepted. Linux refuses a single argument over 128 KiB
/// (MAX_ARG_STRLEN) at exec; refusing here gives a clear error instead.
pub const MAX_COMMAND_BYTES: usize = 128 * 1024;
/// Largest terminal width or height, in cells.
pub const MAX_TERMINAL_SIZE: u16 = 4096;
/// Largest single write of input.
pub const MAX_INPUT_BYTES: usize = 16 * 1024 * 1024;
/// Longest SIGTERM → SIGKILL grace a `kill` may ask for.
pub const MAX_GRACE: Duration = Duration::from_secs(60);
/// Longest session id.
pub const MAX_SESSION_ID_LEN: usize = 128;
