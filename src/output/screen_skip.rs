//! The part of `screen.rs` that decides what a batch may skip: a run of plain lines
//! ([`Run`]) and a shadow of the emulator's parser ([`Scan`]) that says where one may
//! begin and end. Kept apart so the screen itself reads in one sitting.

use super::{MAX_TERMINAL_SIZE, PRUNE_COLOURS};

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
pub(super) struct Run {
    pub(super) start: Option<usize>,
    pub(super) rows: usize,
    /// Line feeds that must follow a skipped part: `2 × rows + kept`.
    pub(super) after: usize,
    /// Positions just after the latest `after + 1` line feeds, and whether each
    /// followed a `\r`.
    pub(super) feeds: std::collections::VecDeque<(usize, bool)>,
    pub(super) total_feeds: usize,
    pub(super) last_text: usize,
    /// The SGR sequences of the run, `[begin, end)`, from the latest one that may
    /// matter: one that starts by resetting every attribute makes those before it
    /// moot once the part to skip is known to reach it.
    pub(super) colours: Vec<(usize, usize, bool)>,
    /// The length of `colours` at which moot sequences are dropped next.
    pub(super) prune_at: usize,
}

impl Run {
    pub(super) fn new(rows: usize, kept: usize) -> Self {
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
    pub(super) fn colours(&mut self, begin: usize, end: usize, resets: bool) {
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
    pub(super) fn replay(&self, resume: usize) -> std::ops::Range<usize> {
        let until = self.colours.partition_point(|&(_, end, _)| end <= resume);
        let from = self.colours[..until].iter().rposition(|&(_, _, resets)| resets);
        from.unwrap_or(0)..until
    }

    /// A line feed at `i`.
    #[inline]
    pub(super) fn feed(&mut self, i: usize, after_cr: bool) {
        if self.feeds.len() == self.after + 1 {
            self.feeds.pop_front();
        }
        self.feeds.push_back((i + 1, after_cr));
        self.total_feeds += 1;
    }

    /// `(start, resume)`: the part `[start, resume)` may be skipped.
    pub(super) fn skippable(&self, end: usize, deep: bool) -> Option<(usize, usize)> {
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
pub(super) enum State {
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

pub(super) enum Step {
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
pub(super) struct Scan {
    pub(super) state: State,
    /// The last byte given was ASCII: no UTF-8 character is half read.
    pub(super) after_ascii: bool,
    pub(super) region: bool,
    pub(super) alt: bool,
    /// Something the scan does not follow was seen: skip no more.
    pub(super) confused: bool,
    /// A full reset (RIS) or an erase of the scrollback (`CSI 3 J`) was seen: the
    /// screen clears its record of scrolled rows.
    pub(super) reset: bool,
    pub(super) csi: Csi,
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
pub(super) struct Csi {
    pub(super) private: bool,
    pub(super) intermediate: bool,
    pub(super) control: bool,
    pub(super) params: [u8; 32],
    pub(super) len: usize,
    pub(super) overflow: bool,
}

impl Csi {
    /// Whether this SGR sequence starts by resetting every attribute: its first
    /// parameter is 0 or empty, without sub-parameters.
    pub(super) fn resets(&self) -> bool {
        let params = &self.params[..self.len];
        let first = params
            .iter()
            .position(|&c| c == b';' || c == b':')
            .unwrap_or(params.len());
        params[..first].iter().all(|&c| c == b'0') && params.get(first) != Some(&b':')
    }
}

impl Scan {
    pub(super) fn step(&mut self, b: u8) -> Step {
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

    pub(super) fn escape(&mut self) {
        self.state = State::Escape;
        self.csi = Csi::default();
    }

    pub(super) fn ground(&mut self, step: Step) -> Step {
        self.state = State::Ground;
        step
    }

    /// A complete CSI sequence with final byte `f`.
    pub(super) fn dispatch(&mut self, f: u8) -> Step {
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
