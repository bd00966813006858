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
use super::scan::next_control;

/// A line longer than this (in bytes) without a newline is committed in pieces of this
/// size, so a stream with no newlines at all (a binary dump, `base64 -w0`) stays
/// bounded (see `LineAssembler::wrap`). With a window, that commits the lines above it
/// too (they come before it).
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
            // the run's last lines move to the window when it ends. A line longer than
            // `max_line_bytes` takes the slow path, which wraps it (`wrap`) as it would
            // had it come in several reads.
            if on_empty_bottom && end < bytes.len() && end - start <= self.max_line_bytes {
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

    /// Commits the window's lines as they stand (the program has gone quiet), keeping
    /// the window for later output; returns whether anything was committed. Nothing is
    /// while the cursor is up in the window: the program is in the middle of a redraw.
    pub fn commit_window(&mut self, committed: &mut String) -> bool {
        if self.above.is_empty() || self.row != self.above.len() {
            return false;
        }
        self.commit_above(self.above.len(), committed);
        true
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
        self.overwrite(text);
        self.wrap(committed);
    }

    /// A line grown past `max_line_bytes`, the cursor at its end, is wrapped as a
    /// terminal wraps a line at its width: its first `max_line_bytes` (cut back to a
    /// character boundary) are committed, again while the rest is still too long, and
    /// what is left stays the line being written, where a `\r` or a backspace lands. The
    /// lines above it in the window are committed first: they come before it.
    ///
    /// Where the pieces end depends only on the line's text, never on where the reads
    /// that brought it ended: committing the whole line once a read had taken it past
    /// the size made a later redraw (`\r`, then text) land on different text depending
    /// on where that read ended, i.e. on the program's timing. With the cursor inside
    /// the line nothing is cut (the text after the cursor may still be overwritten by
    /// the rest of the same write); the line is then at most four times the size (every
    /// character overwritten by a wider one) until the cursor reaches its end.
    fn wrap(&mut self, committed: &mut String) {
        if !self.at_end || self.line.len() <= self.max_line_bytes {
            return;
        }
        self.commit_above(self.row, committed);
        let mut cut = 0;
        while self.line.len() - cut > self.max_line_bytes {
            let piece = &self.line[cut..];
            let mut end = self.max_line_bytes;
            while !piece.is_char_boundary(end) {
                end -= 1;
            }
            // A size smaller than one character still moves on by that character.
            if end == 0 {
                end = piece.chars().next().map_or(piece.len(), char::len_utf8);
            }
            cut += end;
        }
        committed.push_str(&self.line[..cut]);
        self.line.drain(..cut);
    }

    /// Writes `text` from the cursor: appended at the end of the line, or over what is
    /// there after a `\r` or a backspace, as a terminal does.
    fn overwrite(&mut self, text: &str) {
        if self.at_end {
            self.line.push_str(text);
            return;
        }
        // In ASCII a character is a byte, and the line is edited in place.
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

    /// Written out for a snapshot (src/output/snapshot.rs); the spare buffers are a
    /// cache and are not.
    pub(super) fn save(&self, w: &mut super::snapshot_bytes::Writer) {
        w.bytes(self.line.as_bytes());
        w.usize(self.cursor);
        w.bool(self.at_end);
        w.usize(self.max_line_bytes);
        w.usize(self.window);
        w.usize(self.above.len());
        for line in &self.above {
            w.bytes(line.as_bytes());
        }
        w.usize(self.row);
        w.bytes(self.parked.as_bytes());
    }

    /// What `save` wrote, its cursor's row checked to lie in the window.
    pub(super) fn load(r: &mut super::snapshot_bytes::Reader<'_>) -> Result<Self, String> {
        let line = r.string()?;
        let cursor = r.usize()?;
        let at_end = r.bool()?;
        let max_line_bytes = r.usize()?.max(1);
        let window = r.usize()?;
        let count = r.usize()?;
        // Each line takes at least its 8-byte length: a count past what is left is
        // refused by the reads below before it allocates.
        let mut above = VecDeque::new();
        for _ in 0..count {
            above.push_back(r.string()?);
        }
        let row = r.usize()?;
        if row > above.len() {
            return Err("its snapshot puts the cursor below the last line".into());
        }
        Ok(Self {
            line,
            cursor,
            at_end,
            max_line_bytes,
            window,
            above,
            row,
            parked: r.string()?,
            spare: Vec::new(),
        })
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
#[path = "line_tests.rs"]
mod tests;
