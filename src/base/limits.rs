//! The limits the service puts on what callers ask for. A leaf: it imports nothing, so
//! any module may use it without tying itself to the service.

use std::time::Duration;

/// Largest command line accepted. Linux refuses a single argument over 128 KiB
/// (MAX_ARG_STRLEN) at exec; refusing here gives a clear error instead.
pub const MAX_COMMAND_BYTES: usize = 128 * 1024;
/// Largest terminal width or height, in cells.
pub const MAX_TERMINAL_SIZE: u16 = 4096;
/// Most cells a terminal's screen may have (`cols × rows`): an emulated cell costs
/// about 32 bytes, so a screen stays under 32 MiB (1024 × 1024, or 4096 × 256).
pub const MAX_SCREEN_CELLS: usize = 1 << 20;
/// Most cells of scrollback (`cols × scrollback`): the 100,000 lines a job may keep, at
/// 80 columns; wider terminals keep proportionally fewer (20,000 at 400). About 256 MiB
/// when full.
pub const MAX_SCROLLBACK_CELLS: usize = 100_000 * 80;
/// Largest single write of input.
pub const MAX_INPUT_BYTES: usize = 16 * 1024 * 1024;
/// Most input a job's queue holds while its program does not read it (one largest
/// write): past it `writeToPty` and `sendInput` fail with `LIMIT_REACHED` instead of
/// growing the queue without bound.
pub const MAX_QUEUED_INPUT_BYTES: usize = MAX_INPUT_BYTES;
/// Largest `maxOutputSize`: the most text a result may carry.
pub const MAX_OUTPUT_SIZE: usize = 64 * 1024 * 1024;
/// Longest SIGTERM → SIGKILL grace a `kill` may ask for.
pub const MAX_GRACE: Duration = Duration::from_secs(60);
/// Longest `KillOptions.reason`: a short word kept with the job, not a message store.
pub const MAX_KILL_REASON_BYTES: usize = 256;
/// Longest session id.
pub const MAX_SESSION_ID_LEN: usize = 128;
