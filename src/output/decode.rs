//! Bytes from a terminal or pipe → the "clean stream": text a person would read,
//! plus the few controls that change which text a line finally shows.
//!
//! The escape-sequence grammar is vte's (the parser of alacritty): it knows CSI, OSC,
//! DCS and friends, reassembles a UTF-8 character split across two reads and turns
//! invalid UTF-8 into U+FFFD. We only decide what survives.
//!
//! The clean stream is a `String` where these characters are controls for
//! [`super::line::LineAssembler`]; nothing else below U+0020 can appear:
//! - `\n` ends a line, `\r` returns to column 0, `\t` is kept as text,
//! - `\x08` moves one column left (backspace, `CSI n D`),
//! - [`ERASE_TO_END`] erases from the cursor to the end of the line (`CSI K`),
//! - [`ERASE_LINE`] erases the whole line, the cursor stays (`CSI 2 K`).

use vte::{Params, Parser, Perform};

/// Clean-stream control: erase from the cursor to the end of the line.
pub const ERASE_TO_END: char = '\x1b';
/// Clean-stream control: erase the whole line, keeping the cursor column.
pub const ERASE_LINE: char = '\x1c';
/// Clean-stream control: move the cursor one column left.
pub const CURSOR_LEFT: char = '\x08';

/// A cursor-left run longer than this is clamped: it only ever means "start of line".
const MAX_CURSOR_LEFT: u16 = 4096;

/// Turns raw output bytes into the clean stream, keeping parser state across reads.
#[derive(Default)]
pub struct Decoder {
    parser: Parser,
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes `bytes`, appending the clean stream to `out`.
    pub fn decode(&mut self, bytes: &[u8], out: &mut String) {
        let mut sink = CleanText { out };
        self.parser.advance(&mut sink, bytes);
    }
}

struct CleanText<'a> {
    out: &'a mut String,
}

impl Perform for CleanText<'_> {
    fn print(&mut self, c: char) {
        // DEL reaches `print` from vte; it draws nothing on a terminal.
        if c != '\x7f' {
            self.out.push(c);
        }
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' | 0x0b | 0x0c => self.out.push('\n'),
            b'\r' => self.out.push('\r'),
            b'\t' => self.out.push('\t'),
            0x08 => self.out.push(CURSOR_LEFT),
            // vte hands a lone byte 0x80..=0x9F (invalid UTF-8) to `execute` as a C1
            // control; for text it is an unreadable byte, and those are replaced, never
            // silently dropped.
            0x80..=0x9f => self.out.push(char::REPLACEMENT_CHARACTER),
            // BEL, NUL, SO/SI and the other C0 controls draw nothing.
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], _ignore: bool, action: char) {
        if !intermediates.is_empty() {
            return;
        }
        let first = params.iter().next().and_then(|p| p.first().copied()).unwrap_or(0);
        match action {
            'K' => match first {
                0 => self.out.push(ERASE_TO_END),
                2 => self.out.push(ERASE_LINE),
                // `CSI 1 K` erases from the start to the cursor: the line's visible text
                // after the cursor survives, which for a text log is close enough to
                // "nothing changes".
                _ => {}
            },
            'D' => {
                for _ in 0..first.clamp(1, MAX_CURSOR_LEFT) {
                    self.out.push(CURSOR_LEFT);
                }
            }
            // Absolute column 1 (`CSI G`, `CSI 1 G`) is a carriage return in disguise,
            // common in progress bars.
            'G' if first <= 1 => self.out.push('\r'),
            _ => {}
        }
    }
}

/// Decodes one complete byte string (convenience for tests and one-shot callers).
pub fn decode_all(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    Decoder::new().decode(bytes, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colours_and_titles() {
        let s = decode_all(b"\x1b[31mred\x1b[0m \x1b]0;title\x07plain\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\");
        assert_eq!(s, "red plainlink");
    }

    #[test]
    fn keeps_line_controls() {
        assert_eq!(decode_all(b"a\r\nb\tc\x08\x1b[K\x1b[2K"), "a\r\nb\tc\x08\x1b\x1c");
    }

    #[test]
    fn reassembles_split_utf8() {
        let euro = "€".as_bytes();
        let mut d = Decoder::new();
        let mut out = String::new();
        d.decode(&euro[..1], &mut out);
        d.decode(&euro[1..2], &mut out);
        d.decode(&euro[2..], &mut out);
        assert_eq!(out, "€");
    }

    #[test]
    fn replaces_invalid_utf8() {
        assert_eq!(decode_all(b"a\xffb\x80c"), "a\u{fffd}b\u{fffd}c");
    }

    #[test]
    fn drops_other_controls() {
        assert_eq!(decode_all(b"a\x07\x00b\x7f"), "ab");
    }
}
