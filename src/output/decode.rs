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
//! - [`ERASE_LINE`] erases the whole line, the cursor stays (`CSI 2 K`),
//! - [`CURSOR_UP`] moves one row up, the column stays (`CSI n A`, `ESC M`; `CSI n F`
//!   is followed by `\r`),
//! - [`CURSOR_DOWN`] moves one row down, the column stays (`CSI n B`; `CSI n E` is
//!   followed by `\r`).
//!
//! Vertical moves only mean something to an assembler that keeps a screen window of
//! lines (PTY jobs); one without a window ignores them.

use vte::{Params, Parser, Perform};

use super::scan::next_control;

/// Clean-stream control: erase from the cursor to the end of the line.
pub const ERASE_TO_END: char = '\x1b';
/// Clean-stream control: erase the whole line, keeping the cursor column.
pub const ERASE_LINE: char = '\x1c';
/// Clean-stream control: move the cursor one column left.
pub const CURSOR_LEFT: char = '\x08';
/// Clean-stream control: move the cursor one row up, keeping its column.
pub const CURSOR_UP: char = '\x1d';
/// Clean-stream control: move the cursor one row down, keeping its column.
pub const CURSOR_DOWN: char = '\x1e';

/// A cursor-left run longer than this is clamped: it only ever means "start of line".
const MAX_CURSOR_LEFT: u16 = 4096;
/// A vertical run longer than this is clamped: it only ever means "top of the
/// window" (or its bottom), and no terminal the jobs run in has that many rows.
const MAX_CURSOR_ROWS: u16 = 1024;

/// Turns raw output bytes into the clean stream, keeping parser state across reads.
///
/// Most output is plain text, and vte hands it over one character at a time. So while
/// the parser is known to rest in its ground state (no sequence open, no UTF-8
/// character half read), the text up to the next ESC is converted here directly, with
/// exactly vte's rules (see `ground_text`), and only the rest goes through vte.
#[derive(Default)]
pub struct Decoder {
    parser: Parser,
    known: Known,
    /// The start of a UTF-8 character cut off by the end of the last read, held back
    /// until the rest arrives, so vte never sees a character split across reads (its
    /// own handling of that, in 0.15, loses the characters that follow in the window
    /// it completes the split one from, and prints a split C1 control).
    carry: Vec<u8>,
    /// While `known` is `Unknown`: the bytes given to vte since the last ESC (the
    /// sequence still open), so a later read that ends it without an ESC of its own
    /// (`\x1b[3` then `1m`) is seen to return vte to ground. Bounded by `OPEN_MAX`;
    /// past it (an endless OSC or DCS string) the state stays unknown until an ESC.
    open: Vec<u8>,
}

/// The most bytes of an open sequence `Decoder::open` follows.
const OPEN_MAX: usize = 4096;

/// What is known of vte's state after the bytes given to it so far.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
enum Known {
    /// Ground state (vte never holds half a character: see `carry`).
    #[default]
    Ground,
    /// Inside a sequence, or not known.
    Unknown,
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the decoder is known to rest: vte in its ground state, no character
    /// half read. A decoder at rest decodes what follows as a new one does (a
    /// snapshot relies on that: src/output/snapshot.rs).
    pub fn at_rest(&self) -> bool {
        self.known == Known::Ground && self.carry.is_empty()
    }

    /// Decodes `bytes`, appending the clean stream to `out`.
    pub fn decode(&mut self, bytes: &[u8], out: &mut String) {
        if self.carry.is_empty() {
            return self.decode_whole(bytes, out);
        }
        let mut joined = std::mem::take(&mut self.carry);
        joined.extend_from_slice(bytes);
        self.decode_whole(&joined, out);
    }

    /// Decodes `bytes`, holding back a character cut off at their end.
    fn decode_whole(&mut self, bytes: &[u8], out: &mut String) {
        let keep = cut_character(bytes);
        let (bytes, cut) = bytes.split_at(bytes.len() - keep);
        self.carry.extend_from_slice(cut);
        // What is left may now end in what looks to vte like the start of a character
        // (E2 82 before the held C2): in the stream it is followed by a byte that is no
        // continuation, so it is invalid, and vte must be told so — a NUL does that and
        // is itself invisible in every state (executed as nothing, or ignored).
        let invalid_end = keep > 0 && cut_character(bytes) > 0;
        let mut rest = bytes;
        if rest.is_empty() {
            return;
        }
        if self.known == Known::Ground {
            let esc = rest.iter().position(|&b| b == 0x1b).unwrap_or(rest.len());
            let text = match std::str::from_utf8(&rest[..esc]) {
                Ok(text) => text,
                // The invalid or incomplete bytes (and all after) are vte's to judge.
                Err(e) => std::str::from_utf8(&rest[..e.valid_up_to()]).unwrap_or_default(),
            };
            ground_text(text, out);
            rest = &rest[text.len()..];
            if rest.is_empty() {
                return;
            }
        }
        let mut sink = CleanText { out };
        self.parser.advance(&mut sink, rest);
        if invalid_end {
            self.parser.advance(&mut sink, b"\0");
        }
        self.known = self.state_after(rest);
    }

    /// vte's state after `bytes` were given to it, given what was known before them.
    fn state_after(&mut self, bytes: &[u8]) -> Known {
        let seq = match bytes.iter().rposition(|&b| b == 0x1b) {
            // Every state goes to Escape on ESC; from the last one on, follow the grammar.
            Some(at) => {
                self.open.clear();
                &bytes[at..]
            }
            // No ESC: ground stays ground; an open sequence is followed on.
            None if self.known == Known::Ground => return Known::Ground,
            None if self.open.is_empty() || self.open.len() + bytes.len() > OPEN_MAX => {
                self.open.clear();
                return Known::Unknown;
            }
            None => {
                self.open.extend_from_slice(bytes);
                let known = state_after(Known::Unknown, &self.open);
                if known == Known::Ground {
                    self.open.clear();
                }
                return known;
            }
        };
        match sequence_end(seq) {
            Some(_) => Known::Ground,
            None if seq.len() <= OPEN_MAX => {
                self.open.extend_from_slice(seq);
                Known::Unknown
            }
            None => Known::Unknown,
        }
    }
}

/// vte's state after `bytes`, given what was known before them.
fn state_after(before: Known, bytes: &[u8]) -> Known {
    match bytes.iter().rposition(|&b| b == 0x1b) {
        // No ESC: ground stays ground, anything else stays unknown.
        None => before,
        // Every state goes to Escape on ESC; from the last one on, follow the grammar.
        Some(at) => match sequence_end(&bytes[at..]) {
            Some(_) => Known::Ground,
            None => Known::Unknown,
        },
    }
}

/// How many bytes at the end of `bytes` are the start of a UTF-8 character that is
/// not complete (at most 3), or 0.
fn cut_character(bytes: &[u8]) -> usize {
    for k in 1..=bytes.len().min(3) {
        let b = bytes[bytes.len() - k];
        if b & 0xc0 == 0x80 {
            // A continuation byte: the character starts further back.
            continue;
        }
        if b < 0xc0 {
            return 0;
        }
        return match std::str::from_utf8(&bytes[bytes.len() - k..]) {
            Err(e) if e.valid_up_to() == 0 && e.error_len().is_none() => k,
            _ => 0,
        };
    }
    0
}

/// `seq` starts with ESC and holds no other: the length after which vte is back in
/// its ground state, if it is by the end of `seq`. (vte's transitions, reduced to
/// "where does it return to ground".)
fn sequence_end(seq: &[u8]) -> Option<usize> {
    enum S {
        Escape,
        EscapeIntermediate,
        Csi,
        Osc,
        /// DCS, SOS, PM, APC: only CAN and SUB end them without an ESC. (vte also
        /// ends a DCS on 0x9C; not following that only makes this answer "unknown".)
        Str,
    }
    let mut state = S::Escape;
    for (i, &b) in seq.iter().enumerate().skip(1) {
        if b == 0x18 || b == 0x1a {
            return Some(i + 1);
        }
        state = match state {
            S::Escape => match b {
                0x20..=0x2f => S::EscapeIntermediate,
                b'[' => S::Csi,
                b']' => S::Osc,
                b'P' | b'X' | b'^' | b'_' => S::Str,
                0x30..=0x7e => return Some(i + 1),
                _ => S::Escape,
            },
            S::EscapeIntermediate => match b {
                0x30..=0x7e => return Some(i + 1),
                _ => S::EscapeIntermediate,
            },
            S::Csi => match b {
                0x40..=0x7e => return Some(i + 1),
                _ => S::Csi,
            },
            S::Osc => match b {
                0x07 => return Some(i + 1),
                _ => S::Osc,
            },
            S::Str => S::Str,
        };
    }
    None
}

/// Valid UTF-8 text in ground state, as vte would hand it over (controls and the C1
/// characters U+0080..=U+009F executed, the rest printed) and [`CleanText`] would
/// keep it — but copied in runs instead of character by character.
fn ground_text(text: &str, out: &mut String) {
    let bytes = text.as_bytes();
    let mut run = 0;
    if text.is_ascii() {
        // Only controls and DEL are special in ASCII.
        loop {
            let at = next_control(bytes, run);
            out.push_str(&text[run..at]);
            let Some(&b) = bytes.get(at) else { return };
            if let Some(c) = control(b) {
                out.push(c);
            }
            run = at + 1;
        }
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        // 0xC2 leads the two-byte encodings of U+0080..=U+00BF; U+0080..=U+009F are C1.
        let special = b < 0x20 || b == 0x7f || (b == 0xc2 && matches!(bytes.get(i + 1), Some(0x80..=0x9f)));
        if !special {
            i += 1;
            continue;
        }
        out.push_str(&text[run..i]);
        if b == 0xc2 {
            out.push(char::REPLACEMENT_CHARACTER);
            i += 2;
        } else {
            if let Some(c) = control(b) {
                out.push(c);
            }
            i += 1;
        }
        run = i;
    }
    out.push_str(&text[run..]);
}

/// What an executed control byte becomes in the clean stream.
fn control(byte: u8) -> Option<char> {
    match byte {
        b'\n' | 0x0b | 0x0c => Some('\n'),
        b'\r' => Some('\r'),
        b'\t' => Some('\t'),
        0x08 => Some(CURSOR_LEFT),
        // vte hands a lone byte 0x80..=0x9F (invalid UTF-8) to `execute` as a C1
        // control; for text it is an unreadable byte, and those are replaced, never
        // silently dropped.
        0x80..=0x9f => Some(char::REPLACEMENT_CHARACTER),
        // BEL, NUL, SO/SI and the other C0 controls draw nothing.
        _ => None,
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
        if let Some(c) = control(byte) {
            self.out.push(c);
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
            'D' => self.repeat(CURSOR_LEFT, first.clamp(1, MAX_CURSOR_LEFT)),
            'A' => self.repeat(CURSOR_UP, first.clamp(1, MAX_CURSOR_ROWS)),
            'B' => self.repeat(CURSOR_DOWN, first.clamp(1, MAX_CURSOR_ROWS)),
            // Previous / next line: the vertical move, then column 1.
            'F' => {
                self.repeat(CURSOR_UP, first.clamp(1, MAX_CURSOR_ROWS));
                self.out.push('\r');
            }
            'E' => {
                self.repeat(CURSOR_DOWN, first.clamp(1, MAX_CURSOR_ROWS));
                self.out.push('\r');
            }
            // Absolute column 1 (`CSI G`, `CSI 1 G`) is a carriage return in disguise,
            // common in progress bars.
            'G' if first <= 1 => self.out.push('\r'),
            _ => {}
        }
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], _ignore: bool, byte: u8) {
        // Reverse index: one row up (at the top of a real screen it scrolls down,
        // which for a text log is the same as staying on the top row).
        if intermediates.is_empty() && byte == b'M' {
            self.out.push(CURSOR_UP);
        }
    }
}

impl CleanText<'_> {
    fn repeat(&mut self, control: char, times: u16) {
        self.out.extend(std::iter::repeat_n(control, usize::from(times)));
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
    fn vertical_moves_become_row_controls() {
        assert_eq!(decode_all(b"\x1b[A\x1b[2A\x1b[0B\x1b[2B"), "\x1d\x1d\x1d\x1e\x1e\x1e");
        assert_eq!(decode_all(b"\x1b[2F\x1b[E"), "\x1d\x1d\r\x1e\r");
        assert_eq!(decode_all(b"a\x1bMb"), "a\x1db");
        // A huge count is clamped; private or intermediate forms are not moves.
        assert_eq!(decode_all(b"\x1b[99999A").len(), usize::from(MAX_CURSOR_ROWS));
        assert_eq!(decode_all(b"\x1b[?1A\x1b(M"), "");
    }

    #[test]
    fn replaces_invalid_utf8() {
        assert_eq!(decode_all(b"a\xffb\x80c"), "a\u{fffd}b\u{fffd}c");
    }

    #[test]
    fn drops_other_controls() {
        assert_eq!(decode_all(b"a\x07\x00b\x7f"), "ab");
    }

    /// vte alone, character by character: what the fast path must reproduce exactly
    /// (given whole: vte 0.15 itself loses text when a read splits a character).
    fn reference(chunks: &[&[u8]]) -> String {
        let mut parser = Parser::new();
        let mut out = String::new();
        for chunk in chunks {
            parser.advance(&mut CleanText { out: &mut out }, chunk);
        }
        out
    }

    #[test]
    fn fast_path_matches_vte_on_random_streams_and_cuts() {
        const PIECES: &[&[u8]] = &[
            b"plain text ",
            b"\r\n",
            b"\n",
            b"\r",
            b"\t",
            b"\x08",
            b"\x7f",
            b"\x00",
            b"\x07",
            b"\x0b",
            b"\x18",
            b"\x1a",
            "é€🙂漢".as_bytes(),
            "\u{85}\u{9f}\u{a0}".as_bytes(),
            b"\x80",
            b"\x9b",
            b"\xff",
            b"\xe2\x82",
            b"\xc2",
            b"\x1b[31m",
            b"\x1b[2K",
            b"\x1b[5D",
            b"\x1b[G",
            b"\x1b[3A",
            b"\x1b[B",
            b"\x1b[2F",
            b"\x1b[E",
            b"\x1bM",
            b"\x1b[",
            b"\x1b[1;",
            b"\x1b",
            b"\x1b]0;title\x07",
            b"\x1b]8;;u\x1b\\",
            b"\x1b]2;open",
            b"\x1bPq#0\x1b\\",
            b"\x1bP1$r",
            b"\x1b_apc",
            b"\x1b(B",
            b"\x1b(",
            b"\x1bc",
            b"\x1b[?25l",
            b"\x1b[1\n2m",
            b"\x1b\x9c",
            b"\x1bP\x9c",
        ];
        let mut rng = crate::output::test_rng::TestRng::new(0x2545_F491_4F6C_DD1Du64);
        let mut next = |n: usize| rng.below(n);
        for round in 0..3000 {
            let mut stream = Vec::new();
            for _ in 0..next(40) {
                stream.extend_from_slice(PIECES[next(PIECES.len())]);
            }
            let mut cuts = vec![0, stream.len()];
            for _ in 0..next(6) {
                cuts.push(next(stream.len() + 1));
            }
            cuts.sort_unstable();
            let chunks: Vec<&[u8]> = cuts.windows(2).map(|w| &stream[w[0]..w[1]]).collect();
            let mut d = Decoder::new();
            let mut out = String::new();
            for chunk in &chunks {
                d.decode(chunk, &mut out);
            }
            // Reads may split characters and sequences anywhere: the text is what vte
            // makes of the whole stream in one piece.
            assert_eq!(out, reference(&[&stream]), "round {round}: {stream:?} cut at {cuts:?}");
        }
    }

    #[test]
    fn a_character_split_across_reads_loses_nothing() {
        let decode_in = |reads: &[&[u8]]| {
            let mut d = Decoder::new();
            let mut out = String::new();
            for r in reads {
                d.decode(r, &mut out);
            }
            out
        };
        let bytes = "ÿ ÿ".as_bytes();
        assert_eq!(decode_in(&[&bytes[..1], &bytes[1..]]), "ÿ ÿ");
        let bytes = "é, à".as_bytes();
        assert_eq!(decode_in(&[&bytes[..1], &bytes[1..]]), "é, à");
        assert_eq!(decode_in(&[b"a\xc2", b"\x9bb"]), "a\u{fffd}b");
        let euro = "x€y".as_bytes();
        assert_eq!(decode_in(&[&euro[..2], &euro[2..3], &euro[3..]]), "x€y");
    }
}
