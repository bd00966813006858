//! The line a terminal would show, rebuilt from the clean stream.
//!
//! Progress bars redraw one line with `\r` (and `CSI K`); a log of every redraw is
//! unreadable, so a line is committed only when it ends, with the text it finally
//! shows. The common case — text appended at the end of the line — is a plain
//! `push_str`; only a redraw pays for column arithmetic.

use super::decode::{CURSOR_LEFT, ERASE_LINE, ERASE_TO_END};

/// A line longer than this (in bytes) without a newline is committed as it is, so a
/// stream with no newlines at all (a binary dump, `base64 -w0`) stays bounded.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024;

pub struct LineAssembler {
    line: String,
    /// Cursor column in characters; meaningful only when `at_end` is false.
    cursor: usize,
    /// True when the cursor sits right after the last character (the fast path).
    at_end: bool,
    max_line_bytes: usize,
}

impl Default for LineAssembler {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_LINE_BYTES)
    }
}

impl LineAssembler {
    pub fn new(max_line_bytes: usize) -> Self {
        Self {
            line: String::new(),
            cursor: 0,
            at_end: true,
            max_line_bytes: max_line_bytes.max(1),
        }
    }

    /// Applies clean-stream text; whole lines (with their `\n`) are appended to `committed`.
    pub fn feed(&mut self, clean: &str, committed: &mut String) {
        let bytes = clean.as_bytes();
        let mut start = 0;
        while start < bytes.len() {
            // Every control of the clean stream is ASCII below 0x20 (tab is text), so a
            // byte scan finds them without decoding characters.
            let mut end = next_control(bytes, start);
            while end < bytes.len() && !is_control(bytes[end]) {
                end = next_control(bytes, end + 1);
            }
            let rel = (end < bytes.len()).then_some(end);
            // The commonest case by far: a whole line, ended by `\n` or `\r\n`, written
            // onto an empty line. It goes straight to `committed`.
            if self.at_end && self.line.is_empty() && end < bytes.len() {
                let newline = match (bytes[end], bytes.get(end + 1)) {
                    (b'\n', _) => Some(end),
                    (b'\r', Some(b'\n')) => Some(end + 1),
                    _ => None,
                };
                if let Some(newline) = newline {
                    committed.push_str(&clean[start..end]);
                    committed.push('\n');
                    start = newline + 1;
                    continue;
                }
            }
            if end > start {
                self.put_text(&clean[start..end], committed);
            }
            let Some(control) = rel.map(|_| bytes[end] as char) else {
                break;
            };
            self.control(control, committed);
            start = end + 1;
        }
    }

    /// The line being written (not yet ended by a newline).
    pub fn current_line(&self) -> &str {
        &self.line
    }

    /// Commits the unfinished line as it stands, without adding a newline.
    pub fn finish(&mut self, committed: &mut String) {
        committed.push_str(&self.line);
        self.line.clear();
        self.cursor = 0;
        self.at_end = true;
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
            '\n' => {
                committed.push_str(&self.line);
                committed.push('\n');
                self.line.clear();
                self.cursor = 0;
                self.at_end = true;
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
    let mut out = String::with_capacity(clean.len());
    let mut assembler = LineAssembler::new(usize::MAX);
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

    /// The line model in its plainest form: a vector of characters and a cursor.
    fn naive(chunks: &[&str]) -> String {
        let (mut out, mut line, mut cursor) = (String::new(), Vec::<char>::new(), 0usize);
        for c in chunks.iter().flat_map(|c| c.chars()) {
            match c {
                '\n' => {
                    out.extend(line.drain(..));
                    out.push('\n');
                    cursor = 0;
                }
                '\r' => cursor = 0,
                CURSOR_LEFT => cursor = cursor.saturating_sub(1),
                ERASE_TO_END => line.truncate(cursor.min(line.len())),
                ERASE_LINE => line.clear(),
                c => {
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
        out.extend(line);
        out
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
            "\r",
            "\x08",
            "\x1b",
            "\x1c",
            "12%",
            "  ",
        ];
        let mut rng = crate::output::test_rng::TestRng::new(0x9E37_79B9_7F4A_7C15u64);
        let mut next = |n: usize| rng.below(n);
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
            let mut a = LineAssembler::new(usize::MAX);
            let mut out = String::new();
            for chunk in &chunks {
                a.feed(chunk, &mut out);
            }
            a.finish(&mut out);
            assert_eq!(out, naive(&chunks), "round {round}: {stream:?} cut at {cuts:?}");
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
