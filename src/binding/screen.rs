//! `getScreen`: the emulated terminal as runs of equal attributes, for a client that
//! draws the terminal itself (the Gemini drop-in's `AnsiOutput`).

use napi_derive::napi;

use super::object_arg::ObjectArg;
use super::types::scrollback_arg;
use crate::error::Result;
use crate::output::cells::{CellRun as CoreCellRun, ScreenCells};
use crate::service::Service;

#[napi(object)]
pub struct ScreenOptions {
    /// Lines above the screen to include (at most what the job keeps: `RunOptions.scrollback`).
    pub scrollback: Option<f64>,
}

#[napi(object)]
pub struct ScreenCursor {
    /// Column, from 0.
    pub x: u32,
    /// Row of the screen, from 0 (scrollback lines not counted).
    pub y: u32,
    pub visible: bool,
}

/// Adjacent cells of one line that look the same.
#[napi(object)]
pub struct CellRun {
    pub text: String,
    /// `#rrggbb`, or `''` for the terminal's default colour.
    pub fg: String,
    pub bg: String,
    pub bold: bool,
    pub italic: bool,
    pub underline: bool,
    pub dim: bool,
    pub inverse: bool,
}

#[napi(object)]
pub struct Screen {
    pub cols: u32,
    pub rows: u32,
    pub cursor: ScreenCursor,
    pub alternate_screen: bool,
    /// The scrollback lines asked for (oldest first), then the screen's rows; a line
    /// is its runs, trailing blank cells left out.
    pub lines: Vec<Vec<CellRun>>,
}

impl From<CoreCellRun> for CellRun {
    fn from(r: CoreCellRun) -> Self {
        Self {
            text: r.text,
            fg: r.fg,
            bg: r.bg,
            bold: r.bold,
            italic: r.italic,
            underline: r.underline,
            dim: r.dim,
            inverse: r.inverse,
        }
    }
}

impl From<ScreenCells> for Screen {
    fn from(c: ScreenCells) -> Self {
        Self {
            cols: u32::from(c.cols),
            rows: u32::from(c.rows),
            cursor: ScreenCursor {
                x: u32::from(c.cursor.0),
                y: u32::from(c.cursor.1),
                visible: c.cursor_visible,
            },
            alternate_screen: c.alternate_screen,
            lines: c
                .lines
                .into_iter()
                .map(|line| line.into_iter().map(CellRun::from).collect())
                .collect(),
        }
    }
}

pub fn get_screen(service: &Service, handle: u32, options: Option<ObjectArg<ScreenOptions>>) -> Result<Screen> {
    let scrollback = scrollback_arg(ObjectArg::open(options)?.and_then(|o| o.scrollback))?;
    service.screen(handle, scrollback).map(Screen::from)
}
