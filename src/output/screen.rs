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
use super::line::next_control;
use crate::limits::MAX_TERMINAL_SIZE;

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
mod tests {
    use super::*;

    #[test]
    fn redraws_leave_the_final_screen() {
        let mut s = Screen::new(20, 5, 0);
        s.process(b"hello\r\nworld\x1b[H\x1b[2Jtop line\x1b[3;1Hthird");
        assert_eq!(s.contents(), "top line\n\nthird");
    }

    /// A small deterministic generator (xorshift), so failures replay exactly.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// Pieces of terminal output, plain and not, in the proportions that matter: many
    /// plain lines (so that skips happen), and every kind of sequence the scan tracks.
    fn piece(rng: &mut Rng, out: &mut Vec<u8>) {
        const OTHER: &[&[u8]] = &[
            b"\x1b[1;32m",
            b"\x1b[0m",
            b"\x1b[00;4m",
            b"\x1b[0:3m",
            b"\x1b[;41m",
            b"\x1b[48;2;1;2;3m",
            b"\x1b[K",
            b"\x1b[2K",
            b"\x1b[5D",
            b"\x1b[G",
            b"\x1b[3C",
            b"\x1b[5;3H",
            b"\x1b[2A",
            b"\x1b[2J",
            b"\x1b[3J",
            b"\x1b[H",
            b"\x1b[3;10r",
            b"\x1b[r",
            b"\x1b[?1049h",
            b"\x1b[?1049l",
            b"\x1b[?47h",
            b"\x1b[?25l",
            b"\x1b]0;title\x07",
            b"\x1b]8;;http://x\x1b\\",
            b"\x1bPqabc\x1b\\",
            b"\x1b_apc",
            b"\x1b]2;unterminated",
            "é€🙂".as_bytes(),
            "漢字".as_bytes(),
            b"\xff",
            b"\xe2\x82",
            b"\x1bc",
            b"\x18",
            b"\x07",
            b"\t",
            b"\x08",
            b"\x1b[3b",
            b"\x1bM",
            b"\x1b7",
            b"\x1b8",
            b"\x1b[2S",
            b"\x1b[4L",
            b"\x1b[?6h",
            b"\x1b[?6l",
            b"\x1b[?7l",
            b"\x1b[?7h",
            b"\x1b",
            b"\x1b[",
            b"\x1b[1;",
            b"\x1b(B",
            b"\x1b[1\n2m",
            b"\x1b\n[m",
            b"\n",
            b"\r",
        ];
        match rng.below(10) {
            0..=5 => {
                let long = rng.below(8) == 0;
                let len = rng.below(if long { 200 } else { 30 }) as usize;
                for _ in 0..len {
                    out.push(b'a' + rng.below(26) as u8);
                }
                out.extend_from_slice(if rng.below(10) == 0 { b"\n" } else { b"\r\n" });
            }
            6 => {
                // A flood: enough lines for the first skip on the main screen.
                let lines = 4200 + rng.below(2000);
                let ending: &[u8] = if rng.below(4) == 0 { b"\n" } else { b"\r\n" };
                // Half the floods are coloured, some lines resetting all attributes.
                let colours: &[&str] = if rng.below(2) == 0 {
                    &[
                        "\x1b[31m",
                        "\x1b[0;44m",
                        "\x1b[1m",
                        "",
                        "\x1b[m",
                        "\x1b[38;5;208m",
                        "\x1b[22;7m",
                    ]
                } else {
                    &[""]
                };
                let every = 1 + rng.below(500) as usize;
                for i in 0..lines {
                    out.extend_from_slice(colours[i as usize / every % colours.len()].as_bytes());
                    out.extend_from_slice(format!("{i} flood").as_bytes());
                    out.extend_from_slice(ending);
                }
            }
            _ => out.extend_from_slice(OTHER[rng.below(OTHER.len() as u64) as usize]),
        }
    }

    /// The screen matches the reference emulator: text, cursor, and the cells of the
    /// screen and of everything kept above it.
    fn same(screen: &Screen, reference: &mut vt100::Parser, what: &str) {
        let mut expected = reference.screen().contents();
        expected.truncate(expected.trim_end_matches('\n').len());
        assert_eq!(screen.contents(), expected, "{what}");
        assert_eq!(
            screen.inner.borrow().parser.screen().cursor_position(),
            reference.screen().cursor_position(),
            "{what}: cursor"
        );
        let all = usize::MAX;
        let cells = screen.cells(all);
        let expected = cells::read(reference.screen_mut(), all);
        assert!(cells == expected, "{what}: cells");
    }

    /// Feeds random streams in random cuts, with random resizes, to a screen keeping
    /// `scrollback(rng)` lines and to a plain emulator, and compares them now and then.
    /// Returns the bytes skipped.
    fn compare_with_a_plain_emulator(seeds: u64, scrollback: impl Fn(&mut Rng) -> usize) -> u64 {
        let mut skipped = 0;
        for seed in 1..=seeds {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let (mut cols, mut rows) = (20 + rng.below(100) as u16, 3 + rng.below(40) as u16);
            let kept = scrollback(&mut rng);
            let mut screen = Screen::new(cols, rows, kept);
            screen.inner.get_mut().batch = 1 + rng.below(64 * 1024) as usize;
            let mut reference = vt100::Parser::new(nonzero(rows), nonzero(cols), kept);
            let mut stream = Vec::new();
            for _ in 0..rng.below(400) {
                piece(&mut rng, &mut stream);
            }
            let mut at = 0;
            let mut step = 0;
            while at < stream.len() {
                let cut = (at + 1 + rng.below(70_000) as usize).min(stream.len());
                screen.process(&stream[at..cut]);
                reference.process(&stream[at..cut]);
                at = cut;
                step += 1;
                match rng.below(12) {
                    0 => same(&screen, &mut reference, &format!("seed {seed}, step {step}")),
                    1 => {
                        (cols, rows) = (20 + rng.below(100) as u16, 3 + rng.below(60) as u16);
                        screen.resize(cols, rows);
                        reference.set_size(nonzero(rows), nonzero(cols));
                    }
                    _ => {}
                }
            }
            same(
                &screen,
                &mut reference,
                &format!("seed {seed} (scrollback {kept}), end"),
            );
            skipped += screen.inner.borrow().skipped;
        }
        skipped
    }

    #[test]
    fn skipping_never_changes_the_screen() {
        let skipped = compare_with_a_plain_emulator(60, |_| 0);
        assert!(
            skipped > 1_000_000,
            "the streams exercise the skip: {skipped} bytes skipped"
        );
    }

    #[test]
    fn skipping_never_changes_the_screen_or_its_scrollback() {
        // Mostly far fewer lines than a flood has, so that much of floods is skipped.
        let skipped = compare_with_a_plain_emulator(20, |rng| match rng.below(4) {
            0 => 1 + rng.below(30) as usize,
            1 | 2 => 30 + rng.below(1500) as usize,
            _ => 3000,
        });
        assert!(
            skipped > 500_000,
            "the streams exercise the skip: {skipped} bytes skipped"
        );
    }

    #[test]
    fn growing_after_a_flood_brings_back_the_scrolled_rows() {
        let flood: Vec<u8> = (0..6000).flat_map(|i| format!("{i}\r\n").into_bytes()).collect();
        // Erasing the scrollback (CSI 3 J) also erases vt100's count of scrolled rows.
        let erased: Vec<u8> = [&flood[..], b"\x1b[3J", &flood].concat();
        for stream in [&flood, &erased] {
            for (grow_to, kept) in [(10, 0), (60, 0), (300, 0), (60, 20), (300, 100)] {
                let mut screen = Screen::new(40, 3, kept);
                let mut reference = vt100::Parser::new(nonzero(3), nonzero(40), kept);
                for part in [&b"start\r\n"[..], stream, b"end"] {
                    screen.process(part);
                    reference.process(part);
                }
                same(&screen, &mut reference, "before growing");
                screen.resize(40, grow_to);
                reference.set_size(nonzero(grow_to), nonzero(40));
                let what = format!("grown to {grow_to} rows, scrollback {kept}");
                same(&screen, &mut reference, &what);
                assert!(screen.inner.borrow().skipped > 0);
            }
        }
    }

    #[test]
    fn a_flood_is_mostly_skipped() {
        let mut s = Screen::new(80, 24, 0);
        let mut fed = 0;
        for i in 0..200_000 {
            let line = format!("{i:08} the quick brown fox\r\n");
            fed += line.len();
            s.process(line.as_bytes());
        }
        assert!(s.contents().ends_with("00199999 the quick brown fox"));
        let skipped = s.inner.borrow().skipped as usize;
        assert!(skipped > fed * 9 / 10, "{skipped} of {fed} bytes skipped");
    }

    /// The text of a line of cells.
    fn text(line: &[cells::CellRun]) -> String {
        line.iter().map(|run| run.text.as_str()).collect()
    }

    #[test]
    fn scrollback_gives_the_lines_above_the_screen_in_order() {
        let mut s = Screen::new(20, 10, 100);
        let lines: Vec<String> = (0..150).map(|i| format!("line {i}")).collect();
        s.process(lines.join("\r\n").as_bytes());
        let cells = s.cells(20);
        let got: Vec<String> = cells.lines.iter().map(|l| text(l)).collect();
        assert_eq!(got, lines[120..150]);
        assert_eq!((cells.rows, cells.cols, cells.cursor), (10, 20, (8, 9)));
        // Asking for more than is kept gives what is kept: 100 lines.
        let got: Vec<String> = s.cells(1000).lines.iter().map(|l| text(l)).collect();
        assert_eq!(got, lines[40..150]);
        // Without scrollback, the screen alone.
        assert_eq!(s.cells(0).lines.len(), 10);
        // Reading moved vt100's view and put it back.
        assert_eq!(s.contents(), lines[140..150].join("\n"));
    }

    #[test]
    fn the_alternate_screen_has_no_scrollback() {
        let mut s = Screen::new(20, 5, 100);
        s.process((0..30).map(|i| format!("{i}\r\n")).collect::<String>().as_bytes());
        s.process(b"\x1b[?1049hfull screen");
        let cells = s.cells(10);
        assert!(cells.alternate_screen);
        assert_eq!(cells.lines.len(), 5);
        assert_eq!(text(&cells.lines[0]), "full screen");
        s.process(b"\x1b[?1049l");
        let cells = s.cells(10);
        assert!(!cells.alternate_screen);
        assert_eq!(cells.lines.len(), 15);
        assert_eq!(text(&cells.lines[0]), "16");
    }

    #[test]
    fn scrollback_is_capped() {
        let s = Screen::new(20, 5, usize::MAX);
        let capacity = s.inner.borrow().parser.screen().scrollback_capacity();
        assert_eq!(capacity, MAX_SCROLLBACK_LINES);
    }

    #[test]
    fn a_flood_with_scrollback_keeps_its_last_lines_and_is_still_skipped() {
        let mut s = Screen::new(80, 24, 2000);
        let mut fed = 0;
        for i in 0..200_000 {
            let line = format!("{i:08} the quick brown fox\r\n");
            fed += line.len();
            s.process(line.as_bytes());
        }
        let cells = s.cells(2000);
        assert_eq!(cells.lines.len(), 2024);
        for (n, line) in cells.lines[..2023].iter().enumerate() {
            assert_eq!(text(line), format!("{:08} the quick brown fox", 200_000 - 2023 + n));
        }
        assert!(cells.lines[2023].is_empty());
        let skipped = s.inner.borrow().skipped as usize;
        assert!(skipped > fed / 2, "{skipped} of {fed} bytes skipped");
    }

    /// Resident memory of the process, in KiB.
    fn rss_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap_or("");
        line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0)
    }

    /// Memory of a screen after 10,000 full 80-column lines, with and without 2000
    /// lines of scrollback, and the cost of reading them all as cells. Run alone, in
    /// release: `cargo test --release --lib screen_memory -- --ignored --nocapture
    /// --test-threads=1`.
    #[test]
    #[ignore]
    fn screen_memory_and_cells_cost() {
        for kept in [0, 2000] {
            let before = rss_kib();
            let mut s = Screen::new(80, 24, kept);
            for i in 0..10_000 {
                s.process(format!("{i:08} {}\r\n", "x".repeat(71)).as_bytes());
            }
            let _ = s.contents();
            let after = rss_kib();
            let rounds = 50;
            let started = std::time::Instant::now();
            let mut lines = 0;
            for _ in 0..rounds {
                lines += s.cells(kept).lines.len();
            }
            let each = started.elapsed().as_micros() / rounds;
            let kept_rows = s.inner.borrow().parser.screen().scrollback_len();
            eprintln!(
                "scrollback {kept}: RSS +{} KiB; vt100 cells {} KiB; cells({kept}) {each} µs for {} lines",
                after - before,
                (kept_rows + 24) * (80 * 32 + 32) / 1024,
                lines / rounds as usize
            );
            std::hint::black_box(s);
        }
    }
}
