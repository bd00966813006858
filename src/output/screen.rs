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

use std::cell::RefCell;
use std::num::NonZeroU16;

use super::cells::{self, ScreenCells};
use super::scan::next_control;
use crate::base::limits::MAX_TERMINAL_SIZE;

/// Queued bytes are emulated once this many are waiting.
const BATCH: usize = 512 * 1024;

/// A run drops the colour changes a skip would not replay once it holds this many.
const PRUNE_COLOURS: usize = 256;

/// The most lines a screen keeps above itself. A kept line costs 32 bytes a cell
/// (vt100's cell), about 2.5 KiB for a full 80-column line.
pub const MAX_SCROLLBACK_LINES: usize = 100_000;

/// The size of a PTY job's emulated terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

pub struct Screen {
    // `contents` takes `&self` but must first emulate the queued bytes.
    inner: RefCell<Inner>,
}

struct Inner {
    parser: vt100::Parser,
    rows: usize,
    /// Lines the main screen keeps above itself.
    scrollback: usize,
    /// Bytes not yet given to the emulator.
    queued: Vec<u8>,
    /// The escape-sequence state after every byte given to the emulator.
    scan: Scan,
    /// Queued bytes are emulated once this many are waiting.
    batch: usize,
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
            inner: RefCell::new(Inner {
                parser: vt100::Parser::new(nonzero(rows), nonzero(cols), scrollback),
                rows: usize::from(nonzero(rows).get()),
                scrollback,
                queued: Vec::new(),
                scan: Scan::default(),
                batch: BATCH,
                skipped: 0,
                deep: false,
            }),
        }
    }

    pub fn process(&mut self, bytes: &[u8]) {
        let inner = self.inner.get_mut();
        inner.queued.extend_from_slice(bytes);
        if inner.queued.len() >= inner.batch {
            inner.flush();
        }
    }

    pub fn scrollback(&self) -> usize {
        self.inner.borrow().scrollback
    }

    pub fn resize(&mut self, cols: u16, rows: u16) {
        let inner = self.inner.get_mut();
        inner.flush();
        inner.parser.set_size(nonzero(rows), nonzero(cols));
        inner.rows = usize::from(nonzero(rows).get());
        // A resize resets the scroll region, and growing the screen consumes its
        // record of scrolled rows.
        inner.scan.region = false;
        inner.deep = false;
    }

    /// The visible screen as text, trailing blank rows removed.
    pub fn contents(&self) -> String {
        let mut inner = self.inner.borrow_mut();
        inner.flush();
        let mut text = inner.parser.screen().contents();
        let trimmed = text.trim_end_matches('\n').len();
        text.truncate(trimmed);
        text
    }

    /// The screen as cells, below up to `scrollback` of the lines kept above it
    /// (none on the alternate screen).
    pub fn cells(&self, scrollback: usize) -> ScreenCells {
        let mut inner = self.inner.borrow_mut();
        inner.flush();
        cells::read(inner.parser.screen_mut(), scrollback)
    }
}

impl Inner {
    /// Emulates the queued bytes, skipping what can never show.
    fn flush(&mut self) {
        if self.queued.is_empty() {
            return;
        }
        let bytes = std::mem::take(&mut self.queued);
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
        self.parser.process(&bytes[fed..]);
        // Keep the allocation for the next batch unless it grew far beyond one.
        let mut bytes = bytes;
        bytes.clear();
        if bytes.capacity() <= 2 * self.batch {
            self.queued = bytes;
        }
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
        self.parser.process(&bytes[fed..start]);
        self.skip();
        // The text after the skipped part is drawn in the colours it left set.
        for &(begin, end, _) in &run.colours[run.replay(resume)] {
            self.parser.process(&bytes[begin..end]);
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
            self.parser.process(b"\r");
            return;
        }
        let pad = MAX_TERMINAL_SIZE as usize + self.rows;
        let mut lines = Vec::with_capacity(pad + 1);
        lines.push(b'\r');
        lines.resize(pad + 1, b'\n');
        self.parser.process(&lines);
        self.deep = true;
    }
}

/// A stretch of plain bytes: text (any byte but controls and ESC), `\r`, `\n`, `\b`,
/// `\t`, and the CSI sequences that only move the cursor along its row, erase in it,
/// or set colours (`m`, `K`, `G`, `C`, `D`). Such bytes change nothing but cells,
/// the cursor and the colours, and move the cursor down only by line feeds. The
/// colours a skipped part leaves set are kept by replaying its SGR sequences.
///
/// The run `[start, b)` can be skipped when `b` follows a `\r\n` and the run goes on
/// past `b` with at least `2 × rows + kept` line feeds and some text: from any row,
/// that many line feeds scroll every row present at `b` off the screen and then past
/// the `kept` lines of scrollback, and the rows they bring in are written the same
/// way whether or not the skipped part was emulated.
struct Run {
    start: Option<usize>,
    rows: usize,
    /// Line feeds that must follow a skipped part: `2 × rows + kept`.
    after: usize,
    /// Positions just after the latest `after + 1` line feeds, and whether each
    /// followed a `\r`.
    feeds: std::collections::VecDeque<(usize, bool)>,
    total_feeds: usize,
    last_text: usize,
    /// The SGR sequences of the run, `[begin, end)`, from the latest one that may
    /// matter: one that starts by resetting every attribute makes those before it
    /// moot once the part to skip is known to reach it.
    colours: Vec<(usize, usize, bool)>,
    /// The length of `colours` at which moot sequences are dropped next.
    prune_at: usize,
}

impl Run {
    fn new(rows: usize, kept: usize) -> Self {
        Self {
            start: None,
            rows,
            after: 2 * rows + kept,
            feeds: Default::default(),
            total_feeds: 0,
            last_text: 0,
            colours: Vec::new(),
            prune_at: PRUNE_COLOURS,
        }
    }

    /// An SGR sequence `[begin, end)`; `resets` if it begins by resetting everything.
    fn colours(&mut self, begin: usize, end: usize, resets: bool) {
        if self.colours.len() >= self.prune_at {
            // A skipped part would end at the oldest line feed kept, or later.
            if self.feeds.len() == self.after + 1 {
                let moot = self.replay(self.feeds[0].0).start;
                self.colours.drain(..moot);
            }
            self.prune_at = PRUNE_COLOURS.max(2 * self.colours.len());
        }
        self.colours.push((begin, end, resets));
    }

    /// Which of `colours` to replay for a skipped part ending at `resume`: those
    /// before it, from the last one that resets everything.
    fn replay(&self, resume: usize) -> std::ops::Range<usize> {
        let until = self.colours.partition_point(|&(_, end, _)| end <= resume);
        let from = self.colours[..until].iter().rposition(|&(_, _, resets)| resets);
        from.unwrap_or(0)..until
    }

    /// A line feed at `i`.
    #[inline]
    fn feed(&mut self, i: usize, after_cr: bool) {
        if self.feeds.len() == self.after + 1 {
            self.feeds.pop_front();
        }
        self.feeds.push_back((i + 1, after_cr));
        self.total_feeds += 1;
    }

    /// `(start, resume)`: the part `[start, resume)` may be skipped.
    fn skippable(&self, end: usize, deep: bool) -> Option<(usize, usize)> {
        let start = self.start?;
        debug_assert!(self.feeds.back().is_none_or(|&(at, _)| at <= end));
        if self.feeds.len() < self.after + 1 {
            return None;
        }
        let (resume, after_cr) = self.feeds[0];
        // Line feeds in the skipped part.
        let skipped_feeds = self.total_feeds - self.after;
        let enough = deep || skipped_feeds >= MAX_TERMINAL_SIZE as usize + self.rows;
        (after_cr && enough && self.last_text >= resume).then_some((start, resume))
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
enum State {
    #[default]
    Ground,
    Escape,
    EscapeIntermediate,
    Csi,
    /// OSC: ends with BEL, CAN, SUB or ESC.
    Osc,
    /// DCS, SOS, PM, APC: end with CAN, SUB or ESC (DCS also with 0x9C, which is
    /// not tracked: staying here longer than vte only means skipping less).
    Str,
}

enum Step {
    /// Ends a sequence that keeps a run going.
    Benign,
    /// Inside a sequence.
    Within,
    /// Anything else: ends a run.
    Other,
}

/// A shadow of vte's state machine (the parser inside vt100), tracking only what the
/// skip needs: whether the parser is in its ground state, which sequences are
/// benign, and the state a skip must not cross — a scroll region (rows outside it
/// never scroll off), the alternate screen (no scroll-off record), and full resets.
/// It leaves ground only when vte does and returns only when vte surely has.
struct Scan {
    state: State,
    /// The last byte given was ASCII: no UTF-8 character is half read.
    after_ascii: bool,
    region: bool,
    alt: bool,
    /// Something the scan does not follow was seen: skip no more.
    confused: bool,
    /// A full reset (RIS) or an erase of the scrollback (`CSI 3 J`) was seen: the
    /// screen clears its record of scrolled rows.
    reset: bool,
    csi: Csi,
}

impl Default for Scan {
    fn default() -> Self {
        Self {
            state: State::Ground,
            after_ascii: true,
            region: false,
            alt: false,
            confused: false,
            reset: false,
            csi: Csi::default(),
        }
    }
}

#[derive(Default)]
struct Csi {
    private: bool,
    intermediate: bool,
    control: bool,
    params: [u8; 32],
    len: usize,
    overflow: bool,
}

impl Csi {
    /// Whether this SGR sequence starts by resetting every attribute: its first
    /// parameter is 0 or empty, without sub-parameters.
    fn resets(&self) -> bool {
        let params = &self.params[..self.len];
        let first = params
            .iter()
            .position(|&c| c == b';' || c == b':')
            .unwrap_or(params.len());
        params[..first].iter().all(|&c| c == b'0') && params.get(first) != Some(&b':')
    }
}

impl Scan {
    fn step(&mut self, b: u8) -> Step {
        let cancel = b == 0x18 || b == 0x1a;
        let c0 = b < 0x20 && b != 0x1b && !cancel;
        match self.state {
            State::Ground => {
                if b == 0x1b {
                    self.escape();
                    return Step::Within;
                }
                Step::Other
            }
            State::Escape => match b {
                0x1b => Step::Within,
                _ if cancel => self.ground(Step::Other),
                _ if c0 => {
                    self.csi.control = true;
                    Step::Within
                }
                0x20..=0x2f => {
                    self.state = State::EscapeIntermediate;
                    Step::Within
                }
                b'[' => {
                    self.state = State::Csi;
                    Step::Within
                }
                b']' => {
                    self.state = State::Osc;
                    Step::Within
                }
                b'P' | b'X' | b'^' | b'_' => {
                    self.state = State::Str;
                    Step::Within
                }
                0x30..=0x7e => {
                    if b == b'c' {
                        // RIS: a new screen, no region, main screen, no scroll record.
                        self.region = false;
                        self.alt = false;
                        self.confused = false;
                        self.reset = true;
                    }
                    self.ground(Step::Other)
                }
                _ => Step::Within,
            },
            State::EscapeIntermediate => match b {
                0x1b => {
                    self.escape();
                    Step::Within
                }
                _ if cancel => self.ground(Step::Other),
                0x30..=0x7e => self.ground(Step::Other),
                _ => Step::Within,
            },
            State::Csi => match b {
                0x1b => {
                    self.escape();
                    Step::Within
                }
                _ if cancel => self.ground(Step::Other),
                _ if c0 => {
                    self.csi.control = true;
                    Step::Within
                }
                0x20..=0x2f => {
                    self.csi.intermediate = true;
                    Step::Within
                }
                0x3c..=0x3f => {
                    self.csi.private = true;
                    Step::Within
                }
                0x30..=0x3b => {
                    if self.csi.len < self.csi.params.len() {
                        self.csi.params[self.csi.len] = b;
                        self.csi.len += 1;
                    } else {
                        self.csi.overflow = true;
                    }
                    Step::Within
                }
                0x40..=0x7e => {
                    let step = self.dispatch(b);
                    self.ground(step)
                }
                _ => Step::Within,
            },
            State::Osc => match b {
                0x1b => {
                    self.escape();
                    Step::Within
                }
                0x07 => self.ground(Step::Other),
                _ if cancel => self.ground(Step::Other),
                _ => Step::Within,
            },
            State::Str => match b {
                0x1b => {
                    self.escape();
                    Step::Within
                }
                _ if cancel => self.ground(Step::Other),
                _ => Step::Within,
            },
        }
    }

    fn escape(&mut self) {
        self.state = State::Escape;
        self.csi = Csi::default();
    }

    fn ground(&mut self, step: Step) -> Step {
        self.state = State::Ground;
        step
    }

    /// A complete CSI sequence with final byte `f`.
    fn dispatch(&mut self, f: u8) -> Step {
        let csi = &self.csi;
        if csi.overflow {
            self.confused = true;
            return Step::Other;
        }
        let params = &csi.params[..csi.len];
        if !csi.private && !csi.intermediate && !csi.control && matches!(f, b'm' | b'K' | b'G' | b'C' | b'D') {
            return Step::Benign;
        }
        if f == b'J' && params.contains(&b'3') {
            // ED 3 erases the scrollback and with it vt100's count of the rows that
            // scrolled off. Any 3 among the parameters counts: a needless reset only
            // makes the next skip pad the screen again.
            self.reset = true;
        }
        if !csi.private && !csi.intermediate && f == b'r' {
            // DECSTBM: any explicit margins count as a region (full-screen ones too).
            self.region = !params.is_empty();
        }
        if csi.private && !csi.intermediate && (f == b'h' || f == b'l') {
            let switches = params
                .split(|&c| c == b';')
                .any(|p| matches!(p, b"47" | b"1047" | b"1049"));
            if switches {
                self.alt = f == b'h';
            }
        }
        Step::Other
    }
}

fn nonzero(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

#[cfg(test)]
#[path = "screen_tests.rs"]
mod tests;
