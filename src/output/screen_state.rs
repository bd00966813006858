//! Everything a vt100 screen is, read out whole: the cells of both grids and of the
//! scrollback with their line wraps, the cursors, the saved cursor, the scroll regions,
//! the modes and the last character drawn. A terminal job's snapshot (screen_redraw.rs)
//! is drawn from this and checked against it.
//!
//! Why from vt100's `Debug` text: vt100 shows the visible cells and some modes, but
//! keeps the rest private (the saved cursor, the scroll region, origin mode, the grid
//! that is not shown, the last character for `REP`), and no other well-kept emulator
//! both writes its state out and is the one this crate's screens already are. Its
//! `Debug` (derived) is complete and its form fixed by the derive, and cell contents
//! appear in it as numbers, never as text a program could shape. The reader is strict:
//! anything it does not expect is an error, so a vt100 whose form changed gives no
//! snapshot (the journal then keeps every step, as before), never a wrong one.
//!
//! What is left out on purpose: bytes of a cell past its length (vt100 leaves them
//! when it clears a cell; they are never shown), and the count of rows scrolled off
//! past the most a screen can grow by (`MAX_TERMINAL_SIZE` + its rows, or the
//! scrollback's capacity if more): beyond that, vt100 behaves the same whatever the
//! count (`Grid::set_size` pulls back at most the growth).

use crate::base::limits::MAX_TERMINAL_SIZE;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Color {
    #[default]
    Default,
    Idx(u8),
    Rgb(u8, u8, u8),
}

/// A cell's colours and modes (vt100's bits: 1 bold, 2 dim, 4 italic, 8 underline,
/// 16 inverse).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Attrs {
    pub(super) fg: Color,
    pub(super) bg: Color,
    pub(super) mode: u8,
}

pub(super) const IS_WIDE: u8 = 0b1000_0000;
pub(super) const IS_WIDE_CONTINUATION: u8 = 0b0100_0000;
const LEN_BITS: u8 = 0b0001_1111;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Cell {
    /// The cell's text (its bytes up to its length).
    pub(super) text: String,
    /// vt100's length byte: the text's length and the wide flags.
    pub(super) flags: u8,
    pub(super) attrs: Attrs,
}

impl Cell {
    /// A cell as a new row has it (vt100's `Cell::DEFAULT`).
    pub(super) fn is_default(&self) -> bool {
        self.text.is_empty() && self.flags == 0 && self.attrs == Attrs::default()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Row {
    pub(super) cells: Vec<Cell>,
    pub(super) wrapped: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Pos {
    pub(super) row: u16,
    pub(super) col: u16,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Scrollback {
    pub(super) rows: Vec<Row>,
    pub(super) capacity: usize,
    pub(super) offset: usize,
    /// Rows scrolled off (kept or not), up to the most that can matter (see the
    /// module's comment).
    pub(super) scrolled: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Grid {
    pub(super) rows_count: u16,
    pub(super) cols: u16,
    pub(super) pos: Pos,
    pub(super) saved_pos: Pos,
    /// Empty for an alternate grid never shown.
    pub(super) rows: Vec<Row>,
    pub(super) scroll_top: u16,
    pub(super) scroll_bottom: u16,
    pub(super) origin_mode: bool,
    pub(super) saved_origin_mode: bool,
    pub(super) scrollback: Option<Scrollback>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct ScreenState {
    pub(super) main: Grid,
    pub(super) alternate: Grid,
    pub(super) attrs: Attrs,
    pub(super) saved_attrs: Attrs,
    /// vt100's bits: 1 application keypad, 2 application cursor, 4 hidden cursor,
    /// 8 alternate screen, 16 bracketed paste.
    pub(super) modes: u8,
    pub(super) mouse_mode: String,
    pub(super) mouse_encoding: String,
    pub(super) cursor_style: String,
    pub(super) last_char: Option<char>,
}

pub(super) const MODE_APPLICATION_KEYPAD: u8 = 1;
pub(super) const MODE_APPLICATION_CURSOR: u8 = 2;
pub(super) const MODE_HIDE_CURSOR: u8 = 4;
pub(super) const MODE_ALTERNATE_SCREEN: u8 = 8;
pub(super) const MODE_BRACKETED_PASTE: u8 = 16;

impl ScreenState {
    /// `screen` read out whole.
    pub(super) fn read(screen: &vt100::Screen) -> Result<Self, String> {
        let text = format!("{screen:?}");
        let mut r = DebugText { text: &text, at: 0 };
        let state = r.screen()?;
        if r.at != text.len() {
            return Err(r.fail("the end"));
        }
        Ok(state)
    }
}

/// A strict reader of vt100's derived `Debug` text.
struct DebugText<'a> {
    text: &'a str,
    at: usize,
}

impl DebugText<'_> {
    fn fail(&self, wanted: &str) -> String {
        let end = (self.at + 40).min(self.text.len());
        let found = self.text.get(self.at..end).unwrap_or("");
        format!("vt100's state reads `{found}` where {wanted} was expected")
    }

    fn lit(&mut self, expected: &str) -> Result<(), String> {
        if self.take(expected) {
            Ok(())
        } else {
            Err(self.fail(&format!("`{expected}`")))
        }
    }

    /// Takes `expected` if it comes next (no error made: this runs for every cell).
    fn take(&mut self, expected: &str) -> bool {
        let next = self.text[self.at..].starts_with(expected);
        if next {
            self.at += expected.len();
        }
        next
    }

    fn word(&mut self) -> Result<&str, String> {
        let rest = &self.text[self.at..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len == 0 {
            return Err(self.fail("a name or a number"));
        }
        self.at += len;
        Ok(&rest[..len])
    }

    fn number<T: std::str::FromStr>(&mut self) -> Result<T, String> {
        let at = self.at;
        let word = self.word()?;
        word.parse().map_err(|_| {
            self.at = at;
            self.fail("a number")
        })
    }

    fn boolean(&mut self) -> Result<bool, String> {
        match self.word()? {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(self.fail("true or false")),
        }
    }

    /// `[item, item, ...]`.
    fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Result<T, String>) -> Result<Vec<T>, String> {
        self.lit("[")?;
        let mut items = Vec::new();
        if self.take("]") {
            return Ok(items);
        }
        loop {
            items.push(item(self)?);
            if self.take("]") {
                return Ok(items);
            }
            self.lit(", ")?;
        }
    }

    fn screen(&mut self) -> Result<ScreenState, String> {
        self.lit("Screen { grid: ")?;
        let main = self.grid()?;
        self.lit(", alternate_grid: ")?;
        let alternate = self.grid()?;
        self.lit(", attrs: ")?;
        let attrs = self.attrs()?;
        self.lit(", saved_attrs: ")?;
        let saved_attrs = self.attrs()?;
        self.lit(", modes: ")?;
        let modes = self.number()?;
        self.lit(", mouse_protocol_mode: ")?;
        let mouse_mode = self.word()?.to_string();
        self.lit(", mouse_protocol_encoding: ")?;
        let mouse_encoding = self.word()?.to_string();
        self.lit(", cursor_style: ")?;
        let cursor_style = self.word()?.to_string();
        self.lit(", last_char: ")?;
        let last_char = if self.take("None") {
            None
        } else {
            self.lit("Some(")?;
            let c = self.char_literal()?;
            self.lit(")")?;
            Some(c)
        };
        self.lit(" }")?;
        Ok(ScreenState {
            main,
            alternate,
            attrs,
            saved_attrs,
            modes,
            mouse_mode,
            mouse_encoding,
            cursor_style,
            last_char,
        })
    }

    fn pos(&mut self) -> Result<Pos, String> {
        self.lit("Pos { row: ")?;
        let row = self.number()?;
        self.lit(", col: ")?;
        let col = self.number()?;
        self.lit(" }")?;
        Ok(Pos { row, col })
    }

    fn grid(&mut self) -> Result<Grid, String> {
        self.lit("Grid { size: Size { rows: ")?;
        let rows_count = self.number()?;
        self.lit(", cols: ")?;
        let cols = self.number()?;
        self.lit(" }, pos: ")?;
        let pos = self.pos()?;
        self.lit(", saved_pos: ")?;
        let saved_pos = self.pos()?;
        self.lit(", rows: ")?;
        let rows = self.list(Self::row)?;
        self.lit(", scroll_top: ")?;
        let scroll_top = self.number()?;
        self.lit(", scroll_bottom: ")?;
        let scroll_bottom = self.number()?;
        self.lit(", origin_mode: ")?;
        let origin_mode = self.boolean()?;
        self.lit(", saved_origin_mode: ")?;
        let saved_origin_mode = self.boolean()?;
        self.lit(", scrollback: ")?;
        let scrollback = if self.take("None") {
            None
        } else {
            self.lit("Some(ScrollbackState { rows: ")?;
            let mut rows = self.list(Self::row)?;
            // vt100 trims a row's trailing blank cells as it scrolls off, and widens
            // rows again to the screen's width when they are viewed (`set_scrollback`);
            // either way they show the same, so they are compared trimmed.
            for row in &mut rows {
                let blank = row.cells.iter().rev().take_while(|c| c.is_default()).count();
                row.cells.truncate(row.cells.len() - blank);
            }
            self.lit(", capacity: ")?;
            let capacity = self.number()?;
            self.lit(", offset: ")?;
            let offset = self.number()?;
            self.lit(", unbounded_len: ")?;
            let scrolled: usize = self.number()?;
            self.lit(" })")?;
            let matters = (usize::from(MAX_TERMINAL_SIZE) + usize::from(rows_count)).max(capacity);
            Some(Scrollback {
                rows,
                capacity,
                offset,
                scrolled: scrolled.min(matters),
            })
        };
        self.lit(" }")?;
        Ok(Grid {
            rows_count,
            cols,
            pos,
            saved_pos,
            rows,
            scroll_top,
            scroll_bottom,
            origin_mode,
            saved_origin_mode,
            scrollback,
        })
    }

    fn row(&mut self) -> Result<Row, String> {
        self.lit("Row { cells: ")?;
        let cells = self.list(Self::cell)?;
        self.lit(", wrapped: ")?;
        let wrapped = self.boolean()?;
        self.lit(" }")?;
        Ok(Row { cells, wrapped })
    }

    fn cell(&mut self) -> Result<Cell, String> {
        self.lit("Cell { contents: ")?;
        let contents: Vec<u8> = self.list(Self::number)?;
        self.lit(", len: ")?;
        let flags: u8 = self.number()?;
        self.lit(", attrs: ")?;
        let attrs = self.attrs()?;
        self.lit(" }")?;
        let len = usize::from(flags & LEN_BITS);
        let text = contents
            .get(..len)
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
            .ok_or_else(|| self.fail("a cell's text"))?
            .to_string();
        Ok(Cell {
            text,
            flags: flags & !LEN_BITS,
            attrs,
        })
    }

    fn attrs(&mut self) -> Result<Attrs, String> {
        self.lit("Attrs { fgcolor: ")?;
        let fg = self.color()?;
        self.lit(", bgcolor: ")?;
        let bg = self.color()?;
        self.lit(", mode: ")?;
        let mode = self.number()?;
        self.lit(" }")?;
        Ok(Attrs { fg, bg, mode })
    }

    fn color(&mut self) -> Result<Color, String> {
        if self.take("Default") {
            return Ok(Color::Default);
        }
        if self.take("Idx(") {
            let i = self.number()?;
            self.lit(")")?;
            return Ok(Color::Idx(i));
        }
        self.lit("Rgb(")?;
        let r = self.number()?;
        self.lit(", ")?;
        let g = self.number()?;
        self.lit(", ")?;
        let b = self.number()?;
        self.lit(")")?;
        Ok(Color::Rgb(r, g, b))
    }

    /// A `char`'s `Debug`: `'c'`, with `\t \r \n \0 \\ \' \"` and `\u{…}` escapes.
    fn char_literal(&mut self) -> Result<char, String> {
        self.lit("'")?;
        let rest = &self.text[self.at..];
        let (c, used) = match rest.strip_prefix('\\') {
            None => {
                let c = rest.chars().next().ok_or_else(|| self.fail("a character"))?;
                (c, c.len_utf8())
            }
            Some(escaped) => {
                let simple = match escaped.as_bytes().first() {
                    Some(b't') => Some('\t'),
                    Some(b'r') => Some('\r'),
                    Some(b'n') => Some('\n'),
                    Some(b'0') => Some('\0'),
                    Some(b'\\') => Some('\\'),
                    Some(b'\'') => Some('\''),
                    Some(b'"') => Some('"'),
                    _ => None,
                };
                match simple {
                    Some(c) => (c, 2),
                    None => {
                        let hex = escaped
                            .strip_prefix("u{")
                            .and_then(|h| h.split_once('}'))
                            .map(|(h, _)| h)
                            .ok_or_else(|| self.fail("a character's escape"))?;
                        let c = u32::from_str_radix(hex, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .ok_or_else(|| self.fail("a character's code"))?;
                        (c, 1 + 2 + hex.len() + 1)
                    }
                }
            }
        };
        self.at += used;
        self.lit("'")?;
        Ok(c)
    }
}

/// Where two states first differ (tests: a whole state is too long to print).
#[cfg(test)]
pub(super) fn first_difference(a: &ScreenState, b: &ScreenState) -> Option<String> {
    fn grid(name: &str, a: &Grid, b: &Grid) -> Option<String> {
        let rows = |g: &Grid| -> Vec<Row> {
            let mut all = g.scrollback.as_ref().map(|s| s.rows.clone()).unwrap_or_default();
            all.extend(g.rows.iter().cloned());
            all
        };
        let (ra, rb) = (rows(a), rows(b));
        if ra.len() != rb.len() {
            return Some(format!("{name}: {} rows against {}", ra.len(), rb.len()));
        }
        let kept = a.scrollback.as_ref().map_or(0, |s| s.rows.len());
        for (i, (x, y)) in ra.iter().zip(&rb).enumerate() {
            if x != y {
                return Some(format!("{name} row {i} ({kept} kept above the screen):\n{x:?}\n{y:?}"));
            }
        }
        let strip = |g: &Grid| Grid {
            rows: Vec::new(),
            scrollback: g.scrollback.as_ref().map(|s| Scrollback {
                rows: Vec::new(),
                ..s.clone()
            }),
            ..g.clone()
        };
        (strip(a) != strip(b)).then(|| format!("{name}:\n{:?}\n{:?}", strip(a), strip(b)))
    }
    grid("main", &a.main, &b.main)
        .or_else(|| grid("alternate", &a.alternate, &b.alternate))
        .or_else(|| {
            let strip = |s: &ScreenState| ScreenState {
                main: Grid::default(),
                alternate: Grid::default(),
                ..s.clone()
            };
            (strip(a) != strip(b)).then(|| format!("{:?}\n{:?}", strip(a), strip(b)))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroU16;

    fn parser(rows: u16, cols: u16, scrollback: usize) -> vt100::Parser {
        let n = |v: u16| NonZeroU16::new(v).expect("not zero");
        vt100::Parser::new(n(rows), n(cols), scrollback)
    }

    #[test]
    fn reads_every_part_of_a_screen() {
        let mut p = parser(4, 10, 5);
        p.process("ab\x1b[1;31mc\u{e9}\u{4e2d}\r\nline2\r\n3\r\n4\r\n5\r\n6".as_bytes());
        p.process(b"\x1b7\x1b[2;3r\x1b[?1049h\x1b[2;3Hhi\x1b[?1049l\x1b[?1h\x1b[?2004h\x1b[?1000h\x1b[?1006h\x1b[4 q\x1b[38;2;1;2;3;48;5;200mZ");
        let state = ScreenState::read(p.screen()).expect("reads");
        let scrollback = state.main.scrollback.as_ref().expect("kept");
        assert_eq!(scrollback.rows.len(), 2);
        let first = &scrollback.rows[0].cells;
        assert_eq!(first[2].text, "c");
        assert_eq!(first[2].attrs.fg, Color::Idx(1));
        assert_eq!(first[3].text, "\u{e9}");
        assert_eq!(first[4].flags, IS_WIDE);
        assert_eq!(first[5].flags, IS_WIDE_CONTINUATION);
        assert_eq!((state.main.scroll_top, state.main.scroll_bottom), (1, 2));
        // `CSI ? 1049 h` saved the cursor again, where the scroll region put it.
        assert_eq!(state.main.saved_pos, Pos { row: 1, col: 0 });
        assert_eq!(state.alternate.rows[1].cells[2].text, "h");
        assert_eq!(state.modes, MODE_APPLICATION_CURSOR | MODE_BRACKETED_PASTE);
        assert_eq!(state.mouse_mode, "PressRelease");
        assert_eq!(state.mouse_encoding, "Sgr");
        assert_eq!(state.cursor_style, "SteadyUnderline");
        assert_eq!(state.attrs.fg, Color::Rgb(1, 2, 3));
        assert_eq!(state.attrs.bg, Color::Idx(200));
        assert_eq!(state.last_char, Some('Z'));
    }

    #[test]
    fn reads_a_character_as_debug_writes_it() {
        for c in [
            '\'', '\\', '"', 'x', '\u{e9}', '\u{4e2d}', '\u{200b}', '\u{1b}', '\n', '\0',
        ] {
            let text = format!("{c:?})");
            let mut r = DebugText { text: &text, at: 0 };
            assert_eq!(r.char_literal(), Ok(c), "{text}");
            assert_eq!(&text[r.at..], ")");
        }
        for bad in ["'ab'", "'\\u{110000}'", "'\\q'", "'", "''"] {
            let mut r = DebugText { text: bad, at: 0 };
            assert!(r.char_literal().is_err(), "{bad}");
        }
    }

    #[test]
    fn anything_unexpected_is_an_error() {
        let mut p = parser(2, 5, 0);
        p.process(b"hi");
        let text = format!("{:?}", p.screen());
        for cut in [0, 10, text.len() / 2, text.len() - 1] {
            let mut r = DebugText {
                text: &text[..cut],
                at: 0,
            };
            assert!(r.screen().is_err(), "cut at {cut}");
        }
        let renamed = text.replacen("wrapped", "wrapt", 1);
        let mut r = DebugText { text: &renamed, at: 0 };
        assert!(r.screen().unwrap_err().contains("wrapt"));
    }
}
