//! The bytes that make a new vt100 screen of the same size the same as a screen read
//! out whole (screen_state.rs): a terminal job's snapshot, from which its journal
//! starts again (snapshot.rs) and a restart in place rebuilds its screen without
//! replaying every byte the job wrote.
//!
//! How: the rows scrolled off are pushed first (blank, by `SU`), then every row of the
//! scrollback and the screen is drawn in order as a program would print it — a row that
//! wraps ends at the last column and the next one's first character wraps it, so vt100
//! marks it wrapped as it did; each other row ends with `\r\n`, which scrolls the rows
//! above into the scrollback. The alternate grid is drawn after `CSI ? 47 h` (which
//! keeps what it held). Then each grid's scroll region, saved cursor, origin mode and
//! cursor, the modes, the colours, and last the character `REP` repeats (drawn again
//! over a cell that shows it).
//!
//! A screen this cannot draw (a wrapping row that does not end at its last column, a
//! last character shown nowhere) gives an error, and every result is checked against
//! the screen it was drawn from before it is used (`Screen::snapshot`): a snapshot is
//! the same screen or none.

use std::fmt::Write as _;

use super::screen_state::{
    Attrs, Color, Grid, Pos, Row, ScreenState, IS_WIDE, IS_WIDE_CONTINUATION, MODE_ALTERNATE_SCREEN,
    MODE_APPLICATION_CURSOR, MODE_APPLICATION_KEYPAD, MODE_BRACKETED_PASTE, MODE_HIDE_CURSOR,
};

/// Bytes to give a new emulator after setting its width to `cols` (its height stays).
pub(super) struct Segment {
    pub(super) cols: u16,
    pub(super) bytes: Vec<u8>,
}

/// The bytes that draw `state` on a new screen of its height and scrollback, in
/// segments each drawn at its own width: rows kept above the screen keep the width
/// they scrolled off at (vt100 does not narrow them when the screen shrinks), so a
/// run of rows wider than the screen is drawn at its width and pushed off before the
/// next. The last segment is at the screen's width.
pub(super) fn redraw(state: &ScreenState) -> Result<Vec<Segment>, String> {
    let mut out = Out::default();
    let mut segments = Vec::new();
    let alternate_shown = state.modes & MODE_ALTERNATE_SCREEN != 0;
    let scrollback = state.main.scrollback.as_ref().map_or(&[][..], |s| &s.rows[..]);
    let mut first = scrollback.len();
    // Runs of rows wider than the screen (kept from before it shrank), and runs of
    // rows that fit before them: each drawn at its width, then pushed off by `SU`.
    let fits = |row: &Row| row.cells.len() <= usize::from(state.main.cols);
    let mut start = 0;
    while start < scrollback.len() {
        let fit = fits(&scrollback[start]);
        let run = scrollback[start..].iter().take_while(|r| fits(r) == fit).count();
        if fit && start + run == scrollback.len() {
            first = start;
            break;
        }
        if start == 0 {
            out.scrolled_off(&state.main)?;
        }
        let rows = &scrollback[start..start + run];
        let widest = rows.iter().map(|r| r.cells.len()).max().unwrap_or(0);
        let cols = if fit {
            state.main.cols
        } else {
            u16::try_from(widest).map_err(|_| "a row wider than a terminal")?
        };
        out.rows(rows.iter(), cols)?;
        let on_screen = run.min(usize::from(state.main.rows_count));
        let _ = write!(out.bytes, "\x1b[{on_screen}S");
        segments.push(Segment {
            cols,
            bytes: std::mem::take(&mut out.bytes).into_bytes(),
        });
        start += run;
    }
    if first == 0 {
        out.scrolled_off(&state.main)?;
    }
    out.rows(scrollback[first..].iter().chain(&state.main.rows), state.main.cols)?;
    let active = if state.alternate.rows.is_empty() {
        if alternate_shown {
            return Err("the alternate screen is shown but has no rows".into());
        }
        &state.main
    } else {
        if alternate_shown {
            out.grid_state(&state.main, state.saved_attrs)?;
        }
        out.text("\x1b[?47h");
        out.rows(state.alternate.rows.iter(), state.alternate.cols)?;
        if alternate_shown {
            &state.alternate
        } else {
            out.grid_state(&state.alternate, state.saved_attrs)?;
            out.text("\x1b[?47l");
            &state.main
        }
    };
    if let Some(c) = state.last_char {
        out.draw_again(active, c)?;
    }
    out.grid_state(active, state.saved_attrs)?;
    out.modes(state)?;
    out.attrs(state.attrs);
    segments.push(Segment {
        cols: state.main.cols,
        bytes: out.bytes.into_bytes(),
    });
    Ok(segments)
}

/// The bytes so far, with the colours and column they leave set.
#[derive(Default)]
struct Out {
    bytes: String,
    attrs: Attrs,
    col: u16,
}

impl Out {
    fn text(&mut self, s: &str) {
        self.bytes.push_str(s);
    }

    fn attrs(&mut self, attrs: Attrs) {
        if attrs == self.attrs {
            return;
        }
        self.bytes.push_str("\x1b[0");
        for (bit, code) in [(1, 1), (2, 2), (4, 3), (8, 4), (16, 7)] {
            if attrs.mode & bit != 0 {
                let _ = write!(self.bytes, ";{code}");
            }
        }
        for (color, base) in [(attrs.fg, 38), (attrs.bg, 48)] {
            match color {
                Color::Default => {}
                Color::Idx(i) => {
                    let _ = write!(self.bytes, ";{base};5;{i}");
                }
                Color::Rgb(r, g, b) => {
                    let _ = write!(self.bytes, ";{base};2;{r};{g};{b}");
                }
            }
        }
        self.bytes.push('m');
        self.attrs = attrs;
    }

    /// Rows scrolled off the main grid that the scrollback does not hold (it keeps at
    /// most its capacity), pushed blank by `SU` before the rows are drawn: the kept ones
    /// drawn after push them out again.
    fn scrolled_off(&mut self, main: &Grid) -> Result<(), String> {
        let Some(scrollback) = main.scrollback.as_ref() else {
            return Ok(());
        };
        let kept = scrollback.rows.len();
        let mut blank = scrollback
            .scrolled
            .checked_sub(kept)
            .ok_or("the scrollback holds more rows than scrolled off")?;
        if blank > 0 && kept < scrollback.capacity.min(scrollback.scrolled) {
            return Err("rows scrolled off were taken back into the screen".into());
        }
        let rows = usize::from(main.rows_count.max(1));
        while blank > 0 {
            let now = blank.min(rows);
            let _ = write!(self.bytes, "\x1b[{now}S");
            blank -= now;
        }
        Ok(())
    }

    /// Draws `rows` from the top left of a blank grid, scrolling as a program printing
    /// them would.
    fn rows<'a>(&mut self, rows: impl Iterator<Item = &'a Row>, cols: u16) -> Result<(), String> {
        self.text("\x1b[H");
        self.col = 0;
        let mut previous_wrapped: Option<bool> = None;
        for row in rows {
            match previous_wrapped {
                None => {}
                Some(true) => {
                    if self.col < cols {
                        return Err("a wrapping row does not reach its last column".into());
                    }
                    // Wrap now, even into a row that starts blank: a space, taken
                    // back, the cell then made as it is below.
                    if row.cells.first().is_none_or(|c| c.text.is_empty()) {
                        self.attrs(Attrs::default());
                        self.text(" \x08");
                        self.col = 0;
                    }
                }
                Some(false) => {
                    // New rows come blank whatever the colours (vt100's scroll).
                    self.attrs(Attrs::default());
                    self.text("\r\n");
                    self.col = 0;
                }
            }
            self.row(row, cols, previous_wrapped == Some(true))?;
            previous_wrapped = Some(row.wrapped);
        }
        if previous_wrapped == Some(true) {
            return Err("the last row wraps".into());
        }
        Ok(())
    }

    /// One row's cells, from its first column (`self.col` is 0, or `cols` for a
    /// wrap still to come).
    fn row(&mut self, row: &Row, cols: u16, wrapping: bool) -> Result<(), String> {
        let mut col: u16 = 0;
        let cells = &row.cells;
        let mut i = 0;
        while i < cells.len() {
            let cell = &cells[i];
            if cell.flags & IS_WIDE_CONTINUATION != 0 {
                i += 1;
                col += 1;
                continue;
            }
            if !cell.text.is_empty() {
                self.move_to(col, wrapping && col == 0)?;
                self.attrs(cell.attrs);
                self.text(&cell.text);
                let width = if cell.flags & IS_WIDE != 0 { 2 } else { 1 };
                self.col = col + width;
                i += 1;
                col += 1;
                continue;
            }
            // Blank cells: a run of them with the same colours, erased in those
            // colours (`ECH`), unless they are as new (left alone).
            let run = cells[i..]
                .iter()
                .take_while(|c| c.text.is_empty() && c.flags == 0 && c.attrs == cell.attrs)
                .count()
                .max(1);
            if cell.flags != 0 {
                return Err("a blank cell marked wide".into());
            }
            if !cell.is_default() || (wrapping && col == 0) {
                self.move_to(col, false)?;
                self.attrs(cell.attrs);
                let _ = write!(self.bytes, "\x1b[{run}X");
            }
            i += run;
            col += u16::try_from(run).map_err(|_| "a row wider than a terminal")?;
        }
        // Rows kept above the screen lose their trailing blank cells (vt100 trims
        // them as they scroll off; so does drawing them).
        if cells.len() > usize::from(cols) {
            return Err("a row wider than its grid".into());
        }
        Ok(())
    }

    /// Moves along the current row to `col` (the cursor never goes back in a row:
    /// cells are drawn left to right). `wrap`: the first character of a wrapped row,
    /// which the cursor reaches by drawing it.
    fn move_to(&mut self, col: u16, wrap: bool) -> Result<(), String> {
        if wrap || col == self.col {
            return Ok(());
        }
        if col < self.col {
            return Err("a cell drawn over the one before".into());
        }
        let _ = write!(self.bytes, "\x1b[{}C", col - self.col);
        self.col = col;
        Ok(())
    }

    /// Draws `c` again over a cell of `grid` that shows it in the same colours, so
    /// vt100's last character (what `REP` repeats) is `c`.
    fn draw_again(&mut self, grid: &Grid, c: char) -> Result<(), String> {
        let mut buf = [0; 4];
        let wanted: &str = c.encode_utf8(&mut buf);
        for (r, row) in grid.rows.iter().enumerate().rev() {
            for (col, cell) in row.cells.iter().enumerate() {
                if cell.text == wanted {
                    let _ = write!(self.bytes, "\x1b[{};{}H", r + 1, col + 1);
                    self.attrs(cell.attrs);
                    self.text(wanted);
                    return Ok(());
                }
            }
        }
        Err("the last character drawn shows nowhere".into())
    }

    /// A grid's scroll region, saved cursor (with `saved_attrs`, which both grids
    /// share), origin mode and cursor; the grid is the one shown.
    fn grid_state(&mut self, grid: &Grid, saved_attrs: Attrs) -> Result<(), String> {
        let last_row = grid.rows_count.saturating_sub(1);
        if (grid.scroll_top, grid.scroll_bottom) != (0, last_row) {
            let _ = write!(self.bytes, "\x1b[{};{}r", grid.scroll_top + 1, grid.scroll_bottom + 1);
        }
        // The saved cursor: placed, then saved, with its colours and origin mode.
        self.place(grid, grid.saved_pos, grid.saved_origin_mode)?;
        self.attrs(saved_attrs);
        self.text("\x1b7");
        self.place(grid, grid.pos, grid.origin_mode)
    }

    /// Puts the cursor at `pos` (absolute) with origin mode `origin`. A cursor past
    /// the last column (a wrap still to come) is made by drawing the row's last
    /// character again.
    fn place(&mut self, grid: &Grid, pos: Pos, origin: bool) -> Result<(), String> {
        self.text(if origin { "\x1b[?6h" } else { "\x1b[?6l" });
        let top = if origin { grid.scroll_top } else { 0 };
        let row = pos.row.checked_sub(top).ok_or("a cursor above its origin")?;
        if pos.col < grid.cols {
            let _ = write!(self.bytes, "\x1b[{};{}H", row + 1, pos.col + 1);
            return Ok(());
        }
        let cells = &grid
            .rows
            .get(usize::from(pos.row))
            .ok_or("a cursor below the grid")?
            .cells;
        let last = cells
            .iter()
            .enumerate()
            .rev()
            .find(|(_, c)| c.flags & IS_WIDE_CONTINUATION == 0)
            .filter(|(_, c)| !c.text.is_empty())
            .ok_or("a wrap to come after a blank cell")?;
        let _ = write!(self.bytes, "\x1b[{};{}H", row + 1, last.0 + 1);
        let saved = self.attrs;
        self.attrs(last.1.attrs);
        self.text(&last.1.text.clone());
        self.attrs(saved);
        Ok(())
    }

    fn modes(&mut self, state: &ScreenState) -> Result<(), String> {
        let flags = [
            (MODE_APPLICATION_CURSOR, "\x1b[?1h"),
            (MODE_APPLICATION_KEYPAD, "\x1b="),
            (MODE_HIDE_CURSOR, "\x1b[?25l"),
            (MODE_BRACKETED_PASTE, "\x1b[?2004h"),
        ];
        for (bit, set) in flags {
            if state.modes & bit != 0 {
                self.text(set);
            }
        }
        let mouse = match state.mouse_mode.as_str() {
            "None" => "",
            "Press" => "\x1b[?9h",
            "PressRelease" => "\x1b[?1000h",
            "ButtonMotion" => "\x1b[?1002h",
            "AnyMotion" => "\x1b[?1003h",
            other => return Err(format!("a mouse mode vt100 did not have: {other}")),
        };
        self.text(mouse);
        let encoding = match state.mouse_encoding.as_str() {
            "Default" => "",
            "Utf8" => "\x1b[?1005h",
            "Sgr" => "\x1b[?1006h",
            other => return Err(format!("a mouse encoding vt100 did not have: {other}")),
        };
        self.text(encoding);
        let style = [
            "Default",
            "BlinkBlock",
            "SteadyBlock",
            "BlinkUnderline",
            "SteadyUnderline",
            "BlinkVerticalBar",
            "SteadyVerticalBar",
        ]
        .iter()
        .position(|s| *s == state.cursor_style)
        .ok_or_else(|| format!("a cursor style vt100 did not have: {}", state.cursor_style))?;
        if style > 0 {
            let _ = write!(self.bytes, "\x1b[{style} q");
        }
        Ok(())
    }
}
