//! The line a terminal would show, rebuilt from the clean stream.
//!
//! Progress bars redraw one line with `\r` (and `CSI K`); a log of every redraw is
//! unreadable, so a line is committed only when it ends, with the text it finally
//! shows. The common case — text appended at the end of the line — is a plain
//! `push_str`; only a redraw pays for column arithmetic.
//!
//! With a screen window (PTY jobs: the terminal's rows less the bottom one), the
//! lines last completed stay editable too: multi-line redraws (`docker pull`, several
//! progress bars) move the cursor up into them (`CSI A`) and rewrite them, and a line
//! is committed only once it has scrolled out of the window. The cursor never leaves
//! the window: moving up stops at its top row, moving down stops at the last line
//! written (below it a terminal would show empty rows; here they do not exist until
//! a `\n` makes one). Without a window, vertical moves are ignored.

use std::borrow::Cow;
use std::collections::VecDeque;

use super::decode::{CURSOR_DOWN, CURSOR_LEFT, CURSOR_UP, ERASE_LINE, ERASE_TO_END};

/// A line longer than this (in bytes) without a newline is committed as it is, so a
/// stream with no newlines at all (a binary dump, `base64 -w0`) stays bounded. With a
/// window, that commits the window's lines too (they come before it).
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024;

/// A window line's buffer bigger than this is freed rather than kept for reuse.
const MAX_SPARE_CAPACITY: usize = 4 * 1024;

pub struct LineAssembler {
    /// The line the cursor is on.
    line: String,
    /// Cursor column in characters; meaningful only when `at_end` is false.
    cursor: usize,
    /// True when the cursor sits right after the last character (the fast path).
    at_end: bool,
    max_line_bytes: usize,
    /// Rows above the bottom line the cursor may move up into (0: no window). The
    /// memory held is up to twice this many lines, each at most `max_line_bytes`.
    window: usize,
    /// Completed lines not yet committed, oldest first, without their `\n`. Only the
    /// last `window` of them are on screen; the older ones have scrolled off and wait
    /// to be committed in one batch. While the cursor is on one of them, its text is
    /// in `line` and its slot here is empty.
    above: VecDeque<String>,
    /// The cursor's row as an index into `above`; `above.len()` is the bottom line.
    row: usize,
    /// The bottom line while the cursor is on a row above it (empty otherwise).
    parked: String,
    /// Cleared line buffers, reused so a flood of lines through the window does not
    /// allocate one per line.
    spare: Vec<String>,
}

impl Default for LineAssembler {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_LINE_BYTES)
    }
}

impl LineAssembler {
    /// An assembler without a window: vertical moves are ignored.
    pub fn new(max_line_bytes: usize) -> Self {
        Self::with_window(max_line_bytes, 0)
    }

    /// An assembler keeping `window` completed lines editable above the bottom one.
    pub fn with_window(max_line_bytes: usize, window: usize) -> Self {
        Self {
            line: String::new(),
            cursor: 0,
            at_end: true,
            max_line_bytes: max_line_bytes.max(1),
            window,
            above: VecDeque::new(),
            row: 0,
            parked: String::new(),
            spare: Vec::new(),
        }
    }

    /// Applies clean-stream text; whole lines (with their `\n`) are appended to `committed`.
    pub fn feed(&mut self, clean: &str, committed: &mut String) {
        let bytes = clean.as_bytes();
        let mut start = 0;
        // Lines of the current run of whole lines (see `Run`), and where it starts.
        let (mut run_lines, mut run_base) = (0, 0);
        let mut on_empty_bottom = self.on_empty_bottom();
        while start < bytes.len() {
            // Every control of the clean stream is ASCII below 0x20 (tab is text), so a
            // byte scan finds them without decoding characters.
            let mut end = next_control(bytes, start);
            while end < bytes.len() && !is_control(bytes[end]) {
                end = next_control(bytes, end + 1);
            }
            let rel = (end < bytes.len()).then_some(end);
            // The commonest case by far: a whole line, ended by `\n` or `\r\n`, written
            // onto an empty bottom line. It goes straight to `committed`; with a window,
            // the run's last lines move to the window when it ends.
            if on_empty_bottom && end < bytes.len() {
                let newline = match (bytes[end], bytes.get(end + 1)) {
                    (b'\n', _) => Some(end),
                    (b'\r', Some(b'\n')) => Some(end + 1),
                    _ => None,
                };
                if let Some(newline) = newline {
                    if run_lines == 0 {
                        run_base = committed.len();
                    }
                    committed.push_str(&clean[start..end]);
                    committed.push('\n');
                    run_lines += 1;
                    if run_lines == self.window {
                        self.commit_above_before(run_base, committed);
                    }
                    start = newline + 1;
                    continue;
                }
            }
            if run_lines > 0 {
                self.settle(run_base, run_lines, committed);
                run_lines = 0;
            }
            if end > start {
                self.put_text(&clean[start..end], committed);
            }
            let Some(control) = rel.map(|_| bytes[end] as char) else {
                break;
            };
            self.control(control, committed);
            start = end + 1;
            on_empty_bottom = self.on_empty_bottom();
        }
        if run_lines > 0 {
            self.settle(run_base, run_lines, committed);
        }
    }

    /// The cursor is at the start of an empty bottom line: where whole lines are
    /// written without column arithmetic.
    fn on_empty_bottom(&self) -> bool {
        self.at_end && self.line.is_empty() && self.row == self.above.len()
    }

    /// The bottom line: the one being written (not yet ended by a newline).
    pub fn current_line(&self) -> &str {
        if self.row == self.above.len() {
            &self.line
        } else {
            &self.parked
        }
    }

    /// The text that may still change: the window's lines, each with its `\n`, then
    /// the bottom line. With no window lines held, the bottom line alone (borrowed).
    pub fn pending(&self) -> Cow<'_, str> {
        if self.above.is_empty() {
            return Cow::Borrowed(&self.line);
        }
        let mut text = String::with_capacity(self.pending_len());
        for (row, line) in self.above.iter().enumerate() {
            text.push_str(if row == self.row { &self.line } else { line });
            text.push('\n');
        }
        text.push_str(self.current_line());
        Cow::Owned(text)
    }

    /// `pending().len()`, without building it.
    pub fn pending_len(&self) -> usize {
        // The slot of the cursor's row is empty and `parked` is empty on the bottom
        // row, so every line is counted once.
        let above: usize = self.above.iter().map(String::len).sum();
        above + self.above.len() + self.line.len() + self.parked.len()
    }

    /// Changes the window (the terminal was resized). Lines beyond the smaller of the
    /// old and new windows are committed: what has scrolled off stays as written, and
    /// the cursor, if it was on one of them, moves to the new top row.
    pub fn set_window(&mut self, window: usize, committed: &mut String) {
        let top = self.above.len().saturating_sub(window.min(self.window));
        if self.row < top {
            self.move_to_row(top);
        }
        self.commit_above(top, committed);
        self.window = window;
    }

    /// Commits the window's lines and the unfinished line as it stands, without
    /// adding a newline.
    pub fn finish(&mut self, committed: &mut String) {
        self.move_to_row(self.above.len());
        self.commit_above(self.above.len(), committed);
        committed.push_str(&self.line);
        self.line.clear();
        self.cursor = 0;
        self.at_end = true;
    }

    /// A run has written as many whole lines as the window holds: every line the
    /// window held has scrolled off. They are committed in front of the run's lines
    /// (which start at `run_base`).
    fn commit_above_before(&mut self, run_base: usize, committed: &mut String) {
        if self.above.is_empty() {
            return;
        }
        let mut lines = String::with_capacity(self.pending_len());
        let n = self.above.len();
        self.commit_above(n, &mut lines);
        committed.insert_str(run_base, &lines);
    }

    /// A run of whole lines — written straight to `committed`, from `run_base` on,
    /// before it was known whether they would stay in the window — is over: the
    /// `run_lines` lines still on screen move from `committed` into the window. So a
    /// flood of lines is copied once, and only its last screenful goes to the window.
    fn settle(&mut self, run_base: usize, run_lines: usize, committed: &mut String) {
        // While the window still holds lines, the run is shorter than the window and
        // all of it stays; once they have gone, only the window's worth does.
        let keep = if self.above.is_empty() {
            run_lines.min(self.window)
        } else {
            run_lines
        };
        let mut split = committed.len();
        for _ in 0..keep {
            // `split - 1` is the `\n` ending the line found last.
            split = committed.as_bytes()[run_base..split - 1]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(run_base, |at| run_base + at + 1);
        }
        for text in committed[split..].split_terminator('\n') {
            let mut line = self.spare.pop().unwrap_or_default();
            line.push_str(text);
            self.above.push_back(line);
        }
        committed.truncate(split);
        self.row = self.above.len();
        self.scroll(committed);
    }

    /// Commits the lines that have left the window, in batches: the window may hold
    /// twice its rows before the older half goes, so a flood of lines pays for one
    /// drain per `window` lines rather than one per line.
    fn scroll(&mut self, committed: &mut String) {
        if self.above.len() > 2 * self.window {
            self.commit_above(self.above.len() - self.window, committed);
        }
    }

    /// Commits the `n` oldest window lines; the cursor must be below them.
    fn commit_above(&mut self, n: usize, committed: &mut String) {
        let n = n.min(self.row);
        for mut line in self.above.drain(..n) {
            committed.push_str(&line);
            committed.push('\n');
            if line.capacity() <= MAX_SPARE_CAPACITY {
                line.clear();
                self.spare.push(line);
            }
        }
        self.row -= n;
    }

    /// Moves the cursor to window row `to` (`above.len()`: the bottom), keeping its column.
    fn move_to_row(&mut self, to: usize) {
        if to == self.row {
            return;
        }
        let column = self.column();
        let bottom = self.above.len();
        let left = std::mem::take(&mut self.line);
        if self.row == bottom {
            self.parked = left;
        } else {
            self.above[self.row] = left;
        }
        self.line = if to == bottom {
            std::mem::take(&mut self.parked)
        } else {
            std::mem::take(&mut self.above[to])
        };
        self.row = to;
        self.cursor = column;
        self.at_end = column == self.line.chars().count();
    }

    fn put_text(&mut self, text: &str, committed: &mut String) {
        if self.at_end {
            self.line.push_str(text);
            if self.line.len() > self.max_line_bytes {
                self.finish(committed);
            }
            return;
        }
        // Overwrite from the cursor, as a terminal does after `\r` or a backspace. In
        // ASCII a character is a byte, and the line is edited in place.
        if text.is_ascii() && self.line.is_ascii() {
            let at = self.cursor;
            if self.line.len() < at {
                let pad = at - self.line.len();
                self.line.extend(std::iter::repeat_n(' ', pad));
            }
            let end = at + text.len();
            if end <= self.line.len() {
                self.line.replace_range(at..end, text);
            } else {
                self.line.truncate(at);
                self.line.push_str(text);
            }
            self.cursor = end;
            self.at_end = end >= self.line.len();
            return;
        }
        let mut chars: Vec<char> = self.line.chars().collect();
        if chars.len() < self.cursor {
            chars.resize(self.cursor, ' ');
        }
        for c in text.chars() {
            if self.cursor < chars.len() {
                chars[self.cursor] = c;
            } else {
                chars.push(c);
            }
            self.cursor += 1;
        }
        self.at_end = self.cursor >= chars.len();
        self.line = chars.into_iter().collect();
    }

    fn control(&mut self, control: char, committed: &mut String) {
        match control {
            '\n' if self.row < self.above.len() => {
                // On a row above the bottom, a newline moves down onto the next row.
                self.move_to_row(self.row + 1);
                self.cursor = 0;
                self.at_end = self.line.is_empty();
            }
            '\n' if self.window == 0 => {
                committed.push_str(&self.line);
                committed.push('\n');
                self.line.clear();
                self.cursor = 0;
                self.at_end = true;
            }
            '\n' => {
                let fresh = self.spare.pop().unwrap_or_default();
                let line = std::mem::replace(&mut self.line, fresh);
                self.above.push_back(line);
                self.row = self.above.len();
                self.cursor = 0;
                self.at_end = true;
                self.scroll(committed);
            }
            '\r' => {
                self.cursor = 0;
                self.at_end = self.line.is_empty();
            }
            CURSOR_LEFT => {
                let col = self.column();
                self.cursor = col.saturating_sub(1);
                // Past the end of the text (after an erase) is not "at the end": writing
                // there pads with spaces.
                self.at_end = self.cursor == self.line.chars().count();
            }
            CURSOR_UP => {
                let top = self.above.len().saturating_sub(self.window);
                if self.row > top {
                    self.move_to_row(self.row - 1);
                }
            }
            CURSOR_DOWN if self.row < self.above.len() => self.move_to_row(self.row + 1),
            ERASE_TO_END if !self.at_end => {
                let keep: String = self.line.chars().take(self.cursor).collect();
                self.line = keep;
                self.at_end = self.line.chars().count() == self.cursor;
            }
            ERASE_LINE => {
                self.cursor = self.column();
                self.line.clear();
                self.at_end = self.cursor == 0;
            }
            _ => {}
        }
    }

    fn column(&self) -> usize {
        if self.at_end {
            self.line.chars().count()
        } else {
            self.cursor
        }
    }
}

fn is_control(b: u8) -> bool {
    b < 0x20 && b != b'\t'
}

/// The index of the first byte at or after `from` that is below 0x20 or is 0x7F (DEL),
/// or `bytes.len()`. Eight bytes are tested at a time; text between controls is what
/// every stage of the output pipeline spends its time scanning.
pub(crate) fn next_control(bytes: &[u8], from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut i = from;
    while i + 8 <= bytes.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[i..i + 8]);
        let x = u64::from_le_bytes(word);
        // Some byte below 0x20 (a byte with its high bit set never counts), or some
        // byte equal to 0x7F. Either test may point at the wrong byte, never miss one.
        let below = x.wrapping_sub(ONES * 0x20) & !x & HIGH;
        let del = (x ^ (ONES * 0x7f)).wrapping_sub(ONES) & !(x ^ (ONES * 0x7f)) & HIGH;
        if below | del != 0 {
            break;
        }
        i += 8;
    }
    while i < bytes.len() && bytes[i] >= 0x20 && bytes[i] != 0x7f {
        i += 1;
    }
    i
}

/// What a person would read from a whole clean stream: lines as they finally show.
pub fn collapse(clean: &str) -> String {
    collapse_in_window(clean, 0)
}

/// [`collapse`] for a terminal that keeps `window` lines on screen above the cursor
/// line: what a PTY job's text reads.
pub fn collapse_in_window(clean: &str, window: usize) -> String {
    let mut out = String::with_capacity(clean.len());
    let mut assembler = LineAssembler::with_window(usize::MAX, window);
    assembler.feed(clean, &mut out);
    assembler.finish(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::decode::decode_all;

    fn text(raw: &[u8]) -> String {
        collapse(&decode_all(raw))
    }

    #[test]
    fn crlf_is_newline() {
        assert_eq!(text(b"a\r\nb\r\n"), "a\nb\n");
    }

    #[test]
    fn progress_bar_collapses_to_final_state() {
        assert_eq!(text(b"10%\r50%\r100%\ndone\n"), "100%\ndone\n");
    }

    #[test]
    fn shorter_redraw_keeps_tail_unless_erased() {
        assert_eq!(text(b"100%\r50%\n"), "50%%\n");
        assert_eq!(text(b"100%\r\x1b[K50%\n"), "50%\n");
        assert_eq!(text(b"100%\x1b[2K\r50%\n"), "50%\n");
    }

    #[test]
    fn backspace_overwrites() {
        assert_eq!(text(b"abc\x08\x08XY\n"), "aXY\n");
        assert_eq!(text(b"ab\x1b[2DZ\n"), "Zb\n");
    }

    #[test]
    fn overwrite_with_wide_and_multibyte_chars() {
        assert_eq!(text("héllo\rwö".as_bytes()), "wöllo");
    }

    #[test]
    fn partial_line_is_visible_and_finished() {
        let mut a = LineAssembler::default();
        let mut out = String::new();
        a.feed(">>> ", &mut out);
        assert_eq!(out, "");
        assert_eq!(a.current_line(), ">>> ");
        a.finish(&mut out);
        assert_eq!(out, ">>> ");
    }

    #[test]
    fn long_line_is_soft_committed() {
        let mut a = LineAssembler::new(8);
        let mut out = String::new();
        a.feed("0123456789abc", &mut out);
        assert_eq!(out, "0123456789abc");
        assert_eq!(a.current_line(), "");
    }

    #[test]
    fn chunking_does_not_change_the_result() {
        let raw = "x\r\n\x1b[1mbold\x1b[0m 12%\r\x1b[K99%\r\nend €\r\n".as_bytes();
        let whole = text(raw);
        for cut in 0..raw.len() {
            let mut d = crate::output::decode::Decoder::new();
            let mut a = LineAssembler::default();
            let (mut clean, mut out) = (String::new(), String::new());
            d.decode(&raw[..cut], &mut clean);
            a.feed(&clean, &mut out);
            clean.clear();
            d.decode(&raw[cut..], &mut clean);
            a.feed(&clean, &mut out);
            a.finish(&mut out);
            assert_eq!(out, whole, "cut at {cut}");
        }
    }

    /// What a windowed assembler makes of a whole raw stream — checked to be what it
    /// makes of it one character at a time (lines then reach the window one by one
    /// and wait there in a batch, instead of arriving as one run).
    fn screen_text(raw: &[u8], window: usize) -> String {
        let clean = decode_all(raw);
        let whole = collapse_in_window(&clean, window);
        let mut a = LineAssembler::with_window(usize::MAX, window);
        let mut out = String::new();
        let mut buf = [0u8; 4];
        for c in clean.chars() {
            a.feed(c.encode_utf8(&mut buf), &mut out);
        }
        a.finish(&mut out);
        assert_eq!(out, whole, "fed one character at a time");
        whole
    }

    #[test]
    fn a_redraw_two_rows_up_reads_as_the_screen_shows_it() {
        let raw = b"a1\nb1\n\x1b[2Aa2\n\x1b[1Bdone\n";
        assert_eq!(screen_text(raw, 23), "a2\nb1\ndone\n");
        assert_eq!(screen_text(raw, 2), "a2\nb1\ndone\n");
    }

    #[test]
    fn without_a_window_vertical_moves_are_ignored() {
        let raw = b"a1\nb1\n\x1b[2Aa2\n\x1b[1Bdone\n";
        assert_eq!(screen_text(raw, 0), "a1\nb1\na2\ndone\n");
        assert_eq!(text(raw), "a1\nb1\na2\ndone\n");
    }

    /// Three progress bars, redrawn in place the way multi-bar tools do it: go up to
    /// the first bar, rewrite each on its row, end below the last.
    fn three_bars(redraws: usize) -> Vec<u8> {
        let mut raw = b"starting\r\n".to_vec();
        for bar in 0..3 {
            raw.extend_from_slice(format!("bar{bar}   0%\r\n").as_bytes());
        }
        for step in 1..=redraws {
            raw.extend_from_slice(b"\x1b[3A");
            for bar in 0..3 {
                let pct = step * 100 / redraws;
                raw.extend_from_slice(format!("\r\x1b[2Kbar{bar} {pct:3}%\x1b[1B").as_bytes());
            }
            raw.extend_from_slice(b"\r");
        }
        raw.extend_from_slice(b"all done\r\n");
        raw
    }

    #[test]
    fn three_bars_redrawn_fifty_times_read_as_three_lines() {
        let expected = "starting\nbar0 100%\nbar1 100%\nbar2 100%\nall done\n";
        assert_eq!(screen_text(&three_bars(50), 23), expected);
        // Exactly the bars fit: still three lines.
        assert_eq!(screen_text(&three_bars(50), 3), expected);
    }

    #[test]
    fn moving_up_beyond_the_window_stops_at_its_top() {
        // Window of 2: "l1" has scrolled off when the cursor goes up 5 rows; it stays
        // as written and the cursor stops on "l2".
        let raw = b"l1\nl2\nl3\n\x1b[5AX\n";
        assert_eq!(screen_text(raw, 2), "l1\nX2\nl3\n");
        // A redraw of committed lines never reaches them, however many come after.
        let mut raw = Vec::new();
        for i in 0..20 {
            raw.extend_from_slice(format!("line{i}\n").as_bytes());
        }
        raw.extend_from_slice(b"\x1b[100A\rTOP\x1b[100B\rEND\n");
        let out = screen_text(&raw, 3);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(&lines[..17], (0..17).map(|i| format!("line{i}")).collect::<Vec<_>>());
        assert_eq!(&lines[17..], ["TOPe17", "line18", "line19", "END"]);
    }

    #[test]
    fn moving_down_stops_at_the_last_line_written() {
        assert_eq!(screen_text(b"a\nb\x1b[5Bc\n", 5), "a\nbc\n");
        // The column is kept across rows: "y" lands after a gap, as on the screen.
        assert_eq!(screen_text(b"a\nb\x1b[Ax\x1b[3By\n", 5), "ax\nb y\n");
    }

    #[test]
    fn committed_text_never_changes_and_pending_holds_the_rest() {
        let raw = decode_all(b"a1\nb1\nc1\n\x1b[2Ab2\n\x1b[Bnext");
        let mut a = LineAssembler::with_window(usize::MAX, 2);
        let mut out = String::new();
        a.feed(&raw, &mut out);
        // Three lines in one go through a window of two: "a1" is off screen at once.
        assert_eq!(out, "a1\n");
        assert_eq!(a.pending(), "b2\nc1\nnext");
        assert_eq!(a.pending_len(), a.pending().len());
        assert_eq!(a.current_line(), "next");
        a.feed("\n", &mut out);
        a.feed(&decode_all(b"z\n\x1b[9AA"), &mut out);
        // "b2" and "c1" have scrolled off, but wait for the batch (twice the window);
        // the cursor cannot reach them.
        assert_eq!(out, "a1\n");
        assert_eq!(a.pending(), "b2\nc1\nAext\nz\n");
        a.feed(&decode_all(b"\x1b[9B\ry\n"), &mut out);
        assert_eq!(out, "a1\nb2\nc1\nAext\n");
        assert_eq!(a.pending(), "z\ny\n");
        a.finish(&mut out);
        assert_eq!(out, "a1\nb2\nc1\nAext\nz\ny\n");
        assert_eq!(a.pending(), "");
    }

    #[test]
    fn shrinking_the_window_commits_what_left_it() {
        let mut a = LineAssembler::with_window(usize::MAX, 4);
        let mut out = String::new();
        a.feed(&decode_all(b"l1\nl2\nl3\nl4\n\x1b[4Axx"), &mut out);
        assert_eq!(out, "");
        // The cursor was on "l1": it moves to the new top row, "l3" (column kept), and
        // the two rows above it are committed.
        a.set_window(2, &mut out);
        assert_eq!(out, "xx\nl2\n");
        a.feed(&decode_all(b"YY\x1b[9AZ\n"), &mut out);
        assert_eq!(out, "xx\nl2\n");
        a.finish(&mut out);
        assert_eq!(out, "xx\nl2\nl3YYZ\nl4\n");
        // To no window at all: everything but the bottom line goes.
        let mut a = LineAssembler::with_window(usize::MAX, 4);
        let mut out = String::new();
        a.feed(&decode_all(b"l1\nl2\n\x1b[Aprompt"), &mut out);
        a.set_window(0, &mut out);
        assert_eq!(out, "l1\nprompt\n");
        assert_eq!(a.pending(), "");
        a.feed(&decode_all(b"\x1b[A\rtail"), &mut out);
        assert_eq!(a.pending(), "tail");
    }

    #[test]
    fn growing_the_window_does_not_bring_back_what_scrolled_off() {
        let mut a = LineAssembler::with_window(usize::MAX, 2);
        let mut out = String::new();
        // One line per read: they wait in the window's batch, "l1" and "l2" off screen.
        for line in ["l1\n", "l2\n", "l3\n", "l4\n"] {
            a.feed(line, &mut out);
        }
        assert_eq!(out, "");
        a.set_window(5, &mut out);
        assert_eq!(out, "l1\nl2\n");
        a.feed(&decode_all(b"\x1b[9A\rX\n"), &mut out);
        a.finish(&mut out);
        assert_eq!(out, "l1\nl2\nX3\nl4\n");
    }

    #[test]
    fn a_flood_through_the_window_commits_every_line_in_order() {
        let mut a = LineAssembler::with_window(usize::MAX, 23);
        let mut out = String::new();
        let mut expected = String::new();
        for i in 0..1000 {
            let line = format!("{i}\r\n");
            a.feed(&line, &mut out);
            expected.push_str(&format!("{i}\n"));
            assert!(expected.len() - out.len() <= a.pending_len(), "line {i}");
            assert_eq!([out.as_str(), &a.pending()].concat(), expected);
        }
        a.finish(&mut out);
        assert_eq!(out, expected);
    }

    /// The screen model in its plainest form: every line ever written, a row and a
    /// column; the rows the cursor may reach are the last `window + 1`.
    fn naive(chunks: &[&str], window: usize) -> String {
        let (mut lines, mut row, mut cursor) = (vec![Vec::<char>::new()], 0usize, 0usize);
        for c in chunks.iter().flat_map(|c| c.chars()) {
            let last = lines.len() - 1;
            match c {
                '\n' => {
                    if row == last {
                        lines.push(Vec::new());
                    }
                    row += 1;
                    cursor = 0;
                }
                '\r' => cursor = 0,
                CURSOR_LEFT => cursor = cursor.saturating_sub(1),
                CURSOR_UP if row > last.saturating_sub(window) => row -= 1,
                CURSOR_DOWN if row < last => row += 1,
                CURSOR_UP | CURSOR_DOWN => {}
                ERASE_TO_END => {
                    let keep = cursor.min(lines[row].len());
                    lines[row].truncate(keep);
                }
                ERASE_LINE => lines[row].clear(),
                c => {
                    let line = &mut lines[row];
                    if line.len() < cursor {
                        line.resize(cursor, ' ');
                    }
                    if cursor < line.len() {
                        line[cursor] = c;
                    } else {
                        line.push(c);
                    }
                    cursor += 1;
                }
            }
        }
        let lines: Vec<String> = lines.into_iter().map(|l| l.into_iter().collect()).collect();
        lines.join("\n")
    }

    #[test]
    fn matches_the_plain_model_on_random_streams_and_cuts() {
        const PIECES: &[&str] = &[
            "abc",
            "hello world",
            "é€",
            "漢字",
            "\t",
            "\n",
            "\r\n",
            "\r\n",
            "\r",
            "\x08",
            "\x1b",
            "\x1c",
            "\x1d",
            "\x1d\x1d",
            "\x1e",
            "12%",
            "  ",
        ];
        let mut rng = crate::output::test_rng::TestRng::new(0x9E37_79B9_7F4A_7C15u64);
        let mut next = |n: usize| rng.below(n);
        for window in [0, 1, 2, 3] {
            for round in 0..5000 {
                let mut stream = String::new();
                for _ in 0..next(30) {
                    stream.push_str(PIECES[next(PIECES.len())]);
                }
                let mut cuts: Vec<usize> = (0..next(5)).map(|_| next(stream.len() + 1)).collect();
                cuts.extend([0, stream.len()]);
                cuts.retain(|&c| stream.is_char_boundary(c));
                cuts.sort_unstable();
                let chunks: Vec<&str> = cuts.windows(2).map(|w| &stream[w[0]..w[1]]).collect();
                let mut a = LineAssembler::with_window(usize::MAX, window);
                let mut out = String::new();
                for (k, chunk) in chunks.iter().enumerate() {
                    a.feed(chunk, &mut out);
                    // Between reads, committed + pending is the screen so far.
                    let so_far = [out.as_str(), &a.pending()].concat();
                    assert_eq!(
                        so_far,
                        naive(&chunks[..=k], window),
                        "window {window} round {round}: {stream:?}"
                    );
                    assert_eq!(a.pending_len(), a.pending().len());
                }
                a.finish(&mut out);
                let expected = naive(&chunks, window);
                assert_eq!(
                    out, expected,
                    "window {window} round {round}: {stream:?} cut at {cuts:?}"
                );
            }
        }
    }

    #[test]
    fn next_control_finds_every_control_and_del() {
        let mut rng = crate::output::test_rng::TestRng::new(0x1234_5678_9ABC_DEF1);
        for _ in 0..20_000 {
            let state = rng.next_u64();
            let len = (state % 40) as usize;
            let mut bytes: Vec<u8> = (0..len).map(|k| 0x20 + ((state >> (k % 56)) as u8 % 0x5f)).collect();
            for k in 0..len {
                if (state >> (k % 61)).is_multiple_of(9) {
                    bytes[k] = [0x00, 0x09, 0x0a, 0x1f, 0x7f, 0x80, 0xc2, 0xff, 0x20][k % 9];
                }
            }
            for from in 0..=len {
                let expected = (from..len)
                    .find(|&k| bytes[k] < 0x20 || bytes[k] == 0x7f)
                    .unwrap_or(len);
                assert_eq!(next_control(&bytes, from), expected, "{bytes:?} from {from}");
            }
        }
    }
}
