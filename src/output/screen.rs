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

use std::cell::RefCell;
use std::num::NonZeroU16;

use super::line::next_control;
use crate::service::MAX_TERMINAL_SIZE;

/// Queued bytes are emulated once this many are waiting.
const BATCH: usize = 512 * 1024;

pub struct Screen {
    // `contents` takes `&self` but must first emulate the queued bytes.
    inner: RefCell<Inner>,
}

struct Inner {
    parser: vt100::Parser,
    rows: usize,
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
    pub fn new(cols: u16, rows: u16) -> Self {
        Self {
            inner: RefCell::new(Inner {
                parser: vt100::Parser::new(nonzero(rows), nonzero(cols), 0),
                rows: usize::from(nonzero(rows).get()),
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
}

impl Inner {
    /// Emulates the queued bytes, skipping what can never show.
    fn flush(&mut self) {
        if self.queued.is_empty() {
            return;
        }
        let bytes = std::mem::take(&mut self.queued);
        let mut fed = 0;
        let mut run = Run::new(self.rows);
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
                Step::Within | Step::Benign => {}
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
        let decided = run.skippable(end, self.scan.alt || self.deep);
        *run = Run::new(self.rows);
        let Some((start, resume)) = decided else { return fed };
        if self.scan.region || self.scan.confused || start < fed {
            return fed;
        }
        self.parser.process(&bytes[fed..start]);
        self.skip();
        self.skipped += (resume - start) as u64;
        resume
    }

    /// Stands in for a skipped run of plain lines ending in `\r\n`: after it, the
    /// cursor is in column 0, and the lines that follow the run wipe the screen.
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
/// the cursor and the colours, and move the cursor down only by line feeds.
///
/// The run `[start, b)` can be skipped when `b` follows a `\r\n` and the run goes on
/// past `b` with at least `2 × rows` line feeds and some text: from any row, that many
/// line feeds scroll every row present at `b` off the screen, and the rows they bring
/// in are written the same way whether or not the skipped part was emulated.
struct Run {
    start: Option<usize>,
    rows: usize,
    /// Positions just after the latest `2 × rows + 1` line feeds, and whether each
    /// followed a `\r`.
    feeds: std::collections::VecDeque<(usize, bool)>,
    total_feeds: usize,
    last_text: usize,
}

impl Run {
    fn new(rows: usize) -> Self {
        Self {
            start: None,
            rows,
            feeds: Default::default(),
            total_feeds: 0,
            last_text: 0,
        }
    }

    /// A line feed at `i`.
    #[inline]
    fn feed(&mut self, i: usize, after_cr: bool) {
        if self.feeds.len() == 2 * self.rows + 1 {
            self.feeds.pop_front();
        }
        self.feeds.push_back((i + 1, after_cr));
        self.total_feeds += 1;
    }

    /// `(start, resume)`: the part `[start, resume)` may be skipped.
    fn skippable(&self, end: usize, deep: bool) -> Option<(usize, usize)> {
        let start = self.start?;
        debug_assert!(self.feeds.back().is_none_or(|&(at, _)| at <= end));
        if self.feeds.len() < 2 * self.rows + 1 {
            return None;
        }
        let (resume, after_cr) = self.feeds[0];
        // Line feeds in the skipped part.
        let skipped_feeds = self.total_feeds - 2 * self.rows;
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
    /// A full reset (RIS) was seen; the screen clears its scroll record.
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
        let mut s = Screen::new(20, 5);
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
            b"\x1b[K",
            b"\x1b[2K",
            b"\x1b[5D",
            b"\x1b[G",
            b"\x1b[3C",
            b"\x1b[5;3H",
            b"\x1b[2A",
            b"\x1b[2J",
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
                for i in 0..lines {
                    out.extend_from_slice(format!("{i} flood").as_bytes());
                    out.extend_from_slice(ending);
                }
            }
            _ => out.extend_from_slice(OTHER[rng.below(OTHER.len() as u64) as usize]),
        }
    }

    fn same(screen: &Screen, reference: &vt100::Parser, what: &str) {
        let mut expected = reference.screen().contents();
        expected.truncate(expected.trim_end_matches('\n').len());
        assert_eq!(screen.contents(), expected, "{what}");
        let inner = screen.inner.borrow();
        assert_eq!(
            inner.parser.screen().cursor_position(),
            reference.screen().cursor_position(),
            "{what}: cursor"
        );
    }

    #[test]
    fn skipping_never_changes_the_screen() {
        let mut skipped = 0;
        for seed in 1..=60u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let (mut cols, mut rows) = (20 + rng.below(100) as u16, 3 + rng.below(40) as u16);
            let mut screen = Screen::new(cols, rows);
            screen.inner.get_mut().batch = 1 + rng.below(64 * 1024) as usize;
            let mut reference = vt100::Parser::new(nonzero(rows), nonzero(cols), 0);
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
                    0 => same(&screen, &reference, &format!("seed {seed}, step {step}")),
                    1 => {
                        (cols, rows) = (20 + rng.below(100) as u16, 3 + rng.below(60) as u16);
                        screen.resize(cols, rows);
                        reference.set_size(nonzero(rows), nonzero(cols));
                    }
                    _ => {}
                }
            }
            same(&screen, &reference, &format!("seed {seed}, end"));
            skipped += screen.inner.borrow().skipped;
        }
        assert!(
            skipped > 1_000_000,
            "the streams exercise the skip: {skipped} bytes skipped"
        );
    }

    #[test]
    fn growing_after_a_flood_brings_back_the_scrolled_rows() {
        for grow_to in [10, 60, 300] {
            let mut screen = Screen::new(40, 3);
            let mut reference = vt100::Parser::new(nonzero(3), nonzero(40), 0);
            let flood: Vec<u8> = (0..6000).flat_map(|i| format!("{i}\r\n").into_bytes()).collect();
            for part in [&b"start\r\n"[..], &flood, b"end"] {
                screen.process(part);
                reference.process(part);
            }
            same(&screen, &reference, "before growing");
            screen.resize(40, grow_to);
            reference.set_size(nonzero(grow_to), nonzero(40));
            same(&screen, &reference, &format!("grown to {grow_to} rows"));
            assert!(screen.inner.borrow().skipped > 0);
        }
    }

    #[test]
    fn a_flood_is_mostly_skipped() {
        let mut s = Screen::new(80, 24);
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
}
