//! The emulated terminal screen (vt100), for full-screen programs — vim, top, less —
//! whose text log is a jumble of redraws. Only PTY jobs have one.
//!
//! Emulating every byte costs about 20 ns (vt100 updates a cell per character), which
//! would make the screen the bottleneck of a PTY flood. Most of a flood never shows:
//! once more lines follow than the screen has rows, what came before has scrolled off.
//! So bytes are queued and handed to the emulator in batches (or when the screen is
//! read), and in each batch a run of plain lines that is followed by enough further
//! plain lines to wipe the whole screen is skipped. The result is identical to
//! emulating every byte; see [`Scan`] for the conditions that make it so, and the
//! tests, which compare against a plain emulator on random streams and cuts.
//!
//! The screen may keep lines that scrolled off (scrollback); then a run is skipped only
//! if enough lines follow it to push it out of the scrollback as well.
//!
//! The screen has a lock of its own, apart from its job's: a batch's emulation and a
//! read of the cells take milliseconds, and under the job's lock they held every other
//! caller of the job (the host's JS thread reading output or taking an event) as long.
//! The reader queues bytes under the job's lock ([`Screen::queue`], which
//! keeps their order, under a lock of the queue's own that nothing holds for long)
//! and emulates them after letting it go ([`Screen::flush`]); readers of the screen
//! take it from the job and read it outside the job's lock. Locks are taken job, then
//! queue; or emulator, then queue; the queue's is never held while taking another.

use std::num::NonZeroU16;
use std::sync::{Arc, Mutex, MutexGuard};

use super::cells::{self, ScreenCells};
use super::scan::next_control;
use crate::base::limits::MAX_TERMINAL_SIZE;
use crate::base::sync::lock;

#[path = "screen_skip.rs"]
mod skip;
#[path = "screen_snapshot.rs"]
mod snapshot;
use skip::{Run, Scan, State, Step};

/// Queued bytes are emulated once this many are waiting (at least).
const BATCH: usize = 512 * 1024;

/// A batch's bytes per line kept above the screen, up to [`MAX_BATCH`]. A batch of
/// plain lines is emulated from about `scrollback + rows` lines before its end (what
/// came before is skipped), whatever its size: with 2000 lines kept (the Gemini
/// drop-in's window), a 512 KiB batch of 64-byte lines emulated a quarter of its bytes,
/// a 2 MiB one a sixteenth.
const BATCH_PER_KEPT_LINE: usize = 1024;

/// The most bytes a screen queues before emulating them.
const MAX_BATCH: usize = 4 * 1024 * 1024;

/// The batch for a screen that keeps `scrollback` lines above it.
fn batch_for(scrollback: usize) -> usize {
    scrollback.saturating_mul(BATCH_PER_KEPT_LINE).clamp(BATCH, MAX_BATCH)
}

/// A run drops the colour changes a skip would not replay once it holds this many.
const PRUNE_COLOURS: usize = 256;

/// The most lines a screen keeps above itself. A kept line costs 32 bytes a cell
/// (vt100's cell), about 2.5 KiB for a full 80-column line.
pub const MAX_SCROLLBACK_LINES: usize = 100_000;

/// The size of a PTY job's emulated terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ScreenSize {
    pub cols: u16,
    pub rows: u16,
    /// Lines kept above the screen once they scroll off (clamped to
    /// [`MAX_SCROLLBACK_LINES`]).
    pub scrollback: usize,
}

impl ScreenSize {
    /// A terminal that keeps nothing above its screen.
    pub const fn new(cols: u16, rows: u16) -> Self {
        Self {
            cols,
            rows,
            scrollback: 0,
        }
    }
}

/// A handle to one job's screen: clones share it (see the module's comment).
#[derive(Clone)]
pub struct Screen {
    shared: Arc<Shared>,
}

struct Shared {
    /// Bytes not yet given to the emulator, under a lock of their own: the reader
    /// queues them under the job's lock and must not wait there for an emulation or a
    /// walk of the cells that holds `emulator` (that would hold the job's other
    /// callers as long). Taken last, and only briefly.
    queue: Mutex<Queue>,
    emulator: Mutex<Inner>,
}

struct Queue {
    bytes: Vec<u8>,
    /// Queued bytes are emulated once this many are waiting.
    batch: usize,
}

struct Inner {
    /// The emulator, made at its first use ([`Inner::parser`]): its grid (vt100's cell
    /// is 32 bytes: 60 KiB at 80 × 24, written as it is made) was most of what an idle
    /// job held, and a job that prints nothing never needs it.
    parser: Option<vt100::Parser>,
    cols: NonZeroU16,
    rows: usize,
    /// Lines the main screen keeps above itself.
    scrollback: usize,
    /// The escape-sequence state after every byte given to the emulator.
    scan: Scan,
    /// Bytes skipped so far (for tests and profiling).
    skipped: u64,
    /// The main screen has scrolled at least `MAX_TERMINAL_SIZE + rows` rows since its
    /// size last changed (see [`Inner::skip`]).
    deep: bool,
}

impl Screen {
    /// A screen of `cols` × `rows` that keeps `scrollback` lines above it (at most
    /// [`MAX_SCROLLBACK_LINES`]).
    pub fn new(cols: u16, rows: u16, scrollback: usize) -> Self {
        let scrollback = scrollback.min(MAX_SCROLLBACK_LINES);
        Self {
            shared: Arc::new(Shared {
                queue: Mutex::new(Queue {
                    bytes: Vec::new(),
                    batch: batch_for(scrollback),
                }),
                emulator: Mutex::new(Inner {
                    parser: None,
                    cols: nonzero(cols),
                    rows: usize::from(nonzero(rows).get()),
                    scrollback,
                    scan: Scan::default(),
                    skipped: 0,
                    deep: false,
                }),
            }),
        }
    }

    /// The emulator with everything queued so far given to it. Flushes are serialised
    /// by the emulator's lock and each takes the whole queue, so bytes are emulated in
    /// the order they were queued.
    fn flushed(&self) -> MutexGuard<'_, Inner> {
        let mut inner = lock(&self.shared.emulator);
        let bytes = std::mem::take(&mut lock(&self.shared.queue).bytes);
        if !bytes.is_empty() {
            let spare = inner.emulate(bytes);
            // Keep the allocation for the next batch unless it grew far beyond one.
            let mut queue = lock(&self.shared.queue);
            if queue.bytes.is_empty() && spare.capacity() <= 2 * queue.batch {
                queue.bytes = spare;
            }
        }
        inner
    }

    /// Queues `bytes` for the emulator; returns whether a batch is due ([`Screen::flush`]).
    pub fn queue(&self, bytes: &[u8]) -> bool {
        let mut queue = lock(&self.shared.queue);
        queue.bytes.extend_from_slice(bytes);
        queue.bytes.len() >= queue.batch
    }

    /// Emulates what is queued.
    pub fn flush(&self) {
        drop(self.flushed());
    }

    /// Queues `bytes` and emulates a batch that is due.
    pub fn process(&self, bytes: &[u8]) {
        if self.queue(bytes) {
            self.flush();
        }
    }

    pub fn scrollback(&self) -> usize {
        lock(&self.shared.emulator).scrollback
    }

    pub fn resize(&self, cols: u16, rows: u16) {
        let mut inner = self.flushed();
        // A screen not made yet is made at the new size when it is.
        if let Some(parser) = inner.parser.as_mut() {
            parser.set_size(nonzero(rows), nonzero(cols));
        }
        inner.cols = nonzero(cols);
        inner.rows = usize::from(nonzero(rows).get());
        // A resize resets the scroll region, and growing the screen consumes its
        // record of scrolled rows.
        inner.scan.region = false;
        inner.deep = false;
    }

    /// The visible screen as text, trailing blank rows removed.
    pub fn contents(&self) -> String {
        let mut inner = self.flushed();
        let mut text = inner.parser().screen().contents();
        let trimmed = text.trim_end_matches('\n').len();
        text.truncate(trimmed);
        text
    }

    /// The screen as cells, below up to `scrollback` of the lines kept above it
    /// (none on the alternate screen).
    pub fn cells(&self, scrollback: usize) -> ScreenCells {
        let mut inner = self.flushed();
        cells::read(inner.parser().screen_mut(), scrollback)
    }

    #[cfg(test)]
    pub(super) fn set_batch(&self, batch: usize) {
        lock(&self.shared.queue).batch = batch;
    }

    #[cfg(test)]
    pub(super) fn skipped(&self) -> u64 {
        lock(&self.shared.emulator).skipped
    }

    #[cfg(test)]
    pub(super) fn cursor(&self) -> (u16, u16) {
        lock(&self.shared.emulator).parser().screen().cursor_position()
    }

    /// Holds the emulator as a long read of the screen would.
    #[cfg(test)]
    pub(super) fn hold_emulator(&self) -> impl Sized + '_ {
        lock(&self.shared.emulator)
    }

    #[cfg(test)]
    pub(super) fn has_emulator(&self) -> bool {
        lock(&self.shared.emulator).parser.is_some()
    }

    #[cfg(test)]
    pub(super) fn with_parser<T>(&self, f: impl FnOnce(&vt100::Parser) -> T) -> T {
        f(lock(&self.shared.emulator).parser())
    }
}

impl Inner {
    /// The emulator, made now if this is its first use.
    fn parser(&mut self) -> &mut vt100::Parser {
        let (rows, cols, scrollback) = (nonzero(self.rows as u16), self.cols, self.scrollback);
        self.parser
            .get_or_insert_with(|| vt100::Parser::new(rows, cols, scrollback))
    }

    /// Emulates `bytes` (not empty), skipping what can never show; returns them
    /// emptied, for their allocation.
    fn emulate(&mut self, bytes: Vec<u8>) -> Vec<u8> {
        let mut fed = 0;
        let mut run = self.new_run();
        // Where the escape sequence being read began.
        let mut seq_begin = 0;
        let n = bytes.len();
        let mut i = 0;
        while i < n {
            if self.scan.state == State::Ground {
                // A run starts only where no UTF-8 character is half read.
                let after_ascii = if i == 0 {
                    self.scan.after_ascii
                } else {
                    bytes[i - 1] < 0x80
                };
                if run.start.is_none() && after_ascii {
                    run.start = Some(i);
                }
                // The hot loop: text, `\r`, `\n`, `\b`, `\t` in ground state.
                while i < n {
                    let text_end = next_control(&bytes, i);
                    if text_end > i {
                        run.last_text = text_end - 1;
                        i = text_end;
                        if i == n {
                            break;
                        }
                    }
                    let b = bytes[i];
                    if b == b'\n' {
                        if run.start.is_some() {
                            run.feed(i, i > 0 && bytes[i - 1] == b'\r');
                        } else {
                            run.start = Some(i + 1);
                        }
                    } else if !matches!(b, b'\r' | 0x08 | b'\t') {
                        break;
                    }
                    i += 1;
                }
                if i == n {
                    break;
                }
                seq_begin = i;
            }
            match self.scan.step(bytes[i]) {
                Step::Within => {}
                Step::Benign => {
                    if bytes[i] == b'm' && run.start.is_some_and(|start| start <= seq_begin) {
                        run.colours(seq_begin, i + 1, self.scan.csi.resets());
                    }
                }
                Step::Other => fed = self.end_run(&bytes, fed, &mut run, seq_begin),
            }
            if std::mem::take(&mut self.scan.reset) {
                self.deep = false;
            }
            i += 1;
        }
        self.scan.after_ascii = bytes[n - 1] < 0x80;
        fed = self.end_run(&bytes, fed, &mut run, bytes.len());
        self.parser().process(&bytes[fed..]);
        let mut bytes = bytes;
        bytes.clear();
        bytes
    }

    /// Closes the current run where a non-plain sequence begins (`end`), skipping its
    /// invisible part. Returns the new count of bytes given to the emulator.
    fn end_run(&mut self, bytes: &[u8], fed: usize, run: &mut Run, end: usize) -> usize {
        let run = std::mem::replace(run, self.new_run());
        let Some((start, resume)) = run.skippable(end, self.scan.alt || self.deep) else {
            return fed;
        };
        if self.scan.region || self.scan.confused || start < fed {
            return fed;
        }
        self.parser().process(&bytes[fed..start]);
        self.skip();
        // The text after the skipped part is drawn in the colours it left set.
        for &(begin, end, _) in &run.colours[run.replay(resume)] {
            self.parser().process(&bytes[begin..end]);
        }
        self.skipped += (resume - start) as u64;
        resume
    }

    /// A run on the current screen: the lines after a skipped part must push it off
    /// the screen and, on the main screen, out of the scrollback.
    fn new_run(&self) -> Run {
        let kept = if self.scan.alt { 0 } else { self.scrollback };
        Run::new(self.rows, kept)
    }

    /// Stands in for a skipped run of plain lines ending in `\r\n`: after it, the
    /// cursor is in column 0, and the lines that follow the run wipe the screen (and
    /// the scrollback, with the blank lines this adds to it).
    ///
    /// One more effect must be kept: vt100 counts the rows that scrolled off, and
    /// growing the screen later brings that many blank rows back at the top. So the
    /// first skip on the main screen (after start or a resize) scrolls by the most a
    /// screen can grow, and later ones need not.
    fn skip(&mut self) {
        if self.scan.alt || self.deep {
            self.parser().process(b"\r");
            return;
        }
        let pad = MAX_TERMINAL_SIZE as usize + self.rows;
        let mut lines = Vec::with_capacity(pad + 1);
        lines.push(b'\r');
        lines.resize(pad + 1, b'\n');
        self.parser().process(&lines);
        self.deep = true;
    }
}

fn nonzero(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

#[cfg(test)]
#[path = "screen_tests.rs"]
mod tests;
