//! The emulated screen as cells with their colours and attributes, for a client that
//! draws the terminal itself rather than reading its text.
//!
//! Cells are read from a vt100 screen and merged into runs of equal attributes, so a
//! typical row is a handful of runs, not one entry per column.

/// A screen, optionally with lines that scrolled off above it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScreenCells {
    pub cols: u16,
    pub rows: u16,
    /// `(column, row)` on the screen, both from 0.
    pub cursor: (u16, u16),
    pub cursor_visible: bool,
    pub alternate_screen: bool,
    /// The scrollback lines asked for (oldest first), then the screen's `rows` rows;
    /// `lines.len() - rows` of them are scrollback.
    pub lines: Vec<Vec<CellRun>>,
}

/// Adjacent cells of one line that look the same.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CellRun {
    pub text: String,
    /// `#rrggbb`, or empty for the terminal's default colour.
    pub fg: String,
    pub bg: String,
    pub bold: bool,
    pub italic: bool,
    pub underline: bool,
    pub dim: bool,
    pub inverse: bool,
}

/// Reads `screen` with up to `scrollback` lines above it (none on the alternate screen).
///
/// vt100 shows scrollback only through its viewing offset, so this moves the offset
/// page by page and puts it back at 0. Each page it views is widened by vt100 to the
/// screen's width (rows in scrollback are otherwise kept without trailing blanks).
pub(super) fn read(screen: &mut vt100::Screen, scrollback: usize) -> ScreenCells {
    let (rows, cols) = screen.size();
    let (rows, cols) = (rows.get(), cols.get());
    let alternate_screen = screen.alternate_screen();
    // The alternate screen keeps no scrollback: vt100 reports none for it.
    let kept = screen.scrollback_len();
    let above = scrollback.min(kept);
    let mut lines = Vec::with_capacity(above + usize::from(rows));
    // Line `k` of the scrollback (0 = oldest kept) is the top row when the view is
    // `kept - k` lines up.
    let mut k = kept - above;
    while k < kept {
        let offset = kept - k;
        screen.set_scrollback(offset);
        let page = u16::try_from(offset).map_or(rows, |o| o.min(rows));
        for row in 0..page {
            lines.push(line(screen, row, cols));
        }
        k += usize::from(page);
    }
    screen.set_scrollback(0);
    for row in 0..rows {
        lines.push(line(screen, row, cols));
    }
    let (y, x) = screen.cursor_position();
    ScreenCells {
        cols,
        rows,
        // After writing the last column the cursor waits past it for the next
        // character; it shows on the last column.
        cursor: (x.min(cols - 1), y.min(rows - 1)),
        cursor_visible: !screen.hide_cursor(),
        alternate_screen,
        lines,
    }
}

/// One visible row as runs, trailing blank cells dropped.
fn line(screen: &vt100::Screen, row: u16, cols: u16) -> Vec<CellRun> {
    let mut runs: Vec<CellRun> = Vec::new();
    // How the last run looks.
    let mut last: Option<Look> = None;
    // Runs and text length up to the last cell that shows something.
    let mut shown = (0, 0);
    for col in 0..cols {
        // Rows kept in scrollback may be shorter than the screen is wide.
        let Some(cell) = screen.cell(row, col) else { break };
        if cell.is_wide_continuation() {
            continue;
        }
        let look = Look::of(cell);
        let text = match cell.contents() {
            "" => " ",
            text => text,
        };
        match runs.last_mut() {
            Some(run) if last == Some(look) => run.text.push_str(text),
            _ => {
                runs.push(look.run(text));
                last = Some(look);
            }
        }
        if !(text.trim_start_matches(' ').is_empty() && look.blank_is_invisible()) {
            shown = (runs.len(), runs.last().map_or(0, |r| r.text.len()));
        }
    }
    runs.truncate(shown.0);
    if let Some(run) = runs.last_mut() {
        run.text.truncate(shown.1);
    }
    runs
}

/// A cell's attributes, compared before any string is made.
#[derive(PartialEq, Eq, Clone, Copy)]
struct Look {
    fg: vt100::Color,
    bg: vt100::Color,
    bold: bool,
    italic: bool,
    underline: bool,
    dim: bool,
    inverse: bool,
}

impl Look {
    fn of(cell: &vt100::Cell) -> Self {
        Self {
            fg: cell.fgcolor(),
            bg: cell.bgcolor(),
            bold: cell.bold(),
            italic: cell.italic(),
            underline: cell.underline(),
            dim: cell.dim(),
            inverse: cell.inverse(),
        }
    }

    fn run(&self, text: &str) -> CellRun {
        CellRun {
            text: text.to_string(),
            fg: hex(self.fg),
            bg: hex(self.bg),
            bold: self.bold,
            italic: self.italic,
            underline: self.underline,
            dim: self.dim,
            inverse: self.inverse,
        }
    }

    /// A space with these attributes looks like no cell at all: no background, no
    /// inversion, no underline (a foreground colour or boldness does not show on it).
    fn blank_is_invisible(&self) -> bool {
        self.bg == vt100::Color::Default && !self.inverse && !self.underline
    }
}

/// `#rrggbb`, or `""` for the default colour.
fn hex(color: vt100::Color) -> String {
    let (r, g, b) = match color {
        vt100::Color::Default => return String::new(),
        vt100::Color::Idx(i) => indexed(i),
        vt100::Color::Rgb(r, g, b) => (r, g, b),
    };
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// xterm's 256-colour palette: 16 base colours, a 6×6×6 cube, 24 greys.
fn indexed(i: u8) -> (u8, u8, u8) {
    const BASE: [(u8, u8, u8); 16] = [
        (0x00, 0x00, 0x00),
        (0x80, 0x00, 0x00),
        (0x00, 0x80, 0x00),
        (0x80, 0x80, 0x00),
        (0x00, 0x00, 0x80),
        (0x80, 0x00, 0x80),
        (0x00, 0x80, 0x80),
        (0xc0, 0xc0, 0xc0),
        (0x80, 0x80, 0x80),
        (0xff, 0x00, 0x00),
        (0x00, 0xff, 0x00),
        (0xff, 0xff, 0x00),
        (0x00, 0x00, 0xff),
        (0xff, 0x00, 0xff),
        (0x00, 0xff, 0xff),
        (0xff, 0xff, 0xff),
    ];
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    match i {
        0..=15 => BASE[usize::from(i)],
        16..=231 => {
            let n = usize::from(i - 16);
            (LEVELS[n / 36], LEVELS[n / 6 % 6], LEVELS[n % 6])
        }
        _ => {
            let grey = 8 + 10 * (i - 232);
            (grey, grey, grey)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroU16;

    /// The cells of a `cols` × `rows` terminal after `bytes`, no scrollback.
    fn cells_after(cols: u16, rows: u16, bytes: &[u8]) -> ScreenCells {
        let size = |n| NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN);
        let mut parser = vt100::Parser::new(size(rows), size(cols), 0);
        parser.process(bytes);
        read(parser.screen_mut(), 0)
    }

    fn first_line(bytes: &[u8]) -> Vec<CellRun> {
        cells_after(40, 3, bytes).lines.swap_remove(0)
    }

    fn plain(text: &str) -> CellRun {
        CellRun {
            text: text.to_string(),
            ..CellRun::default()
        }
    }

    #[test]
    fn colours_are_hex_or_empty() {
        let line = first_line(b"\x1b[31mred\x1b[0m \x1b[38;5;208mor\x1b[38;2;1;2;3mrgb\x1b[41mbg");
        let fg = |text: &str, fg: &str| CellRun {
            fg: fg.to_string(),
            ..plain(text)
        };
        let expected = vec![
            fg("red", "#800000"),
            plain(" "),
            fg("or", "#ff8700"),
            fg("rgb", "#010203"),
            CellRun {
                bg: "#800000".to_string(),
                ..fg("bg", "#010203")
            },
        ];
        assert_eq!(line, expected);
    }

    #[test]
    fn the_256_colour_palette() {
        for (i, rgb) in [
            (7, (0xc0, 0xc0, 0xc0)),
            (8, (0x80, 0x80, 0x80)),
            (16, (0, 0, 0)),
            (21, (0, 0, 255)),
            (67, (95, 135, 175)),
            (196, (255, 0, 0)),
            (231, (255, 255, 255)),
            (232, (8, 8, 8)),
            (244, (128, 128, 128)),
            (255, (238, 238, 238)),
        ] {
            assert_eq!(indexed(i), rgb, "colour {i}");
        }
        assert_eq!(hex(vt100::Color::Idx(12)), "#0000ff");
        assert_eq!(hex(vt100::Color::Default), "");
    }

    #[test]
    fn runs_split_where_attributes_change_and_merge_where_they_do_not() {
        let line = first_line(b"\x1b[1mb\x1b[22;3mi\x1b[23;4mu\x1b[24;7mv\x1b[27;2md\x1b[0mn");
        let runs = [
            CellRun {
                bold: true,
                ..plain("b")
            },
            CellRun {
                italic: true,
                ..plain("i")
            },
            CellRun {
                underline: true,
                ..plain("u")
            },
            CellRun {
                inverse: true,
                ..plain("v")
            },
            CellRun {
                dim: true,
                ..plain("d")
            },
            plain("n"),
        ];
        assert_eq!(line, runs);
        // Setting what is already set, or a colour and back, does not split a run.
        let line = first_line(b"\x1b[1;4mab\x1b[1mcd\x1b[31m\x1b[39mef\x1b[0m  gh");
        let merged = CellRun {
            bold: true,
            underline: true,
            ..plain("abcdef")
        };
        assert_eq!(line, [merged, plain("  gh")]);
        // vt100 keeps one intensity: dim after bold replaces it.
        assert_eq!(
            first_line(b"\x1b[1;2mx"),
            [CellRun {
                dim: true,
                ..plain("x")
            }]
        );
    }

    #[test]
    fn a_wide_character_is_one_character_of_its_run() {
        let cells = cells_after(20, 2, "a漢b\x1b[7m字\x1b[0m".as_bytes());
        assert_eq!(
            cells.lines[0],
            [
                plain("a漢b"),
                CellRun {
                    inverse: true,
                    ..plain("字")
                }
            ]
        );
        assert_eq!(cells.cursor, (6, 0));
    }

    #[test]
    fn trailing_blanks_are_dropped_unless_they_show() {
        let cells = cells_after(10, 4, b"a  b   \r\n\r\n\x1b[44m\x1b[K\x1b[0m\r\nx\x1b[4m  \x1b[0m");
        assert_eq!(cells.lines[0], [plain("a  b")]);
        assert_eq!(cells.lines[1], []);
        // An erase in a background colour paints the row.
        let blue = CellRun {
            bg: "#000080".to_string(),
            ..plain("          ")
        };
        assert_eq!(cells.lines[2], [blue]);
        // Underlined blanks show.
        assert_eq!(
            cells.lines[3],
            [
                plain("x"),
                CellRun {
                    underline: true,
                    ..plain("  ")
                }
            ]
        );
        // A colour alone does not show on a blank.
        assert_eq!(first_line(b"ab\x1b[31m   "), [plain("ab")]);
    }

    #[test]
    fn the_cursor_and_its_visibility() {
        let cells = cells_after(20, 5, b"hello");
        assert_eq!((cells.cursor, cells.cursor_visible), ((5, 0), true));
        let cells = cells_after(20, 5, b"hello\x1b[3;7H\x1b[?25l");
        assert_eq!((cells.cursor, cells.cursor_visible), ((6, 2), false));
        // After the last column the cursor waits there for the next character.
        let cells = cells_after(5, 2, b"abcde");
        assert_eq!(cells.cursor, (4, 0));
        assert_eq!(cells.lines[0], [plain("abcde")]);
    }

    #[test]
    fn the_alternate_screen_flag() {
        let cells = cells_after(20, 3, b"main\x1b[?1049halt");
        assert!(cells.alternate_screen);
        assert_eq!(cells.lines[0], [plain("alt")]);
        let cells = cells_after(20, 3, b"main\x1b[?1049halt\x1b[?1049l");
        assert!(!cells.alternate_screen);
        assert_eq!(cells.lines[0], [plain("main")]);
    }
}
