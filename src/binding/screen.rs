//! `getScreen`: the emulated terminal as runs of equal attributes, for a client that
//! draws the terminal itself (the Gemini drop-in's `AnsiOutput`).

use std::collections::HashMap;

use napi::bindgen_prelude::Uint32Array;
use napi_derive::napi;

use super::object_arg::ObjectArg;
use super::types::scrollback_arg;
use native_shell_service::base::error::Result;
use native_shell_service::output::cells::{CellRun as CoreCellRun, ScreenCells};
use native_shell_service::service::Service;

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

impl From<&ScreenCells> for ScreenCursor {
    fn from(c: &ScreenCells) -> Self {
        Self {
            x: u32::from(c.cursor.0),
            y: u32::from(c.cursor.1),
            visible: c.cursor_visible,
        }
    }
}

impl From<ScreenCells> for Screen {
    fn from(c: ScreenCells) -> Self {
        Self {
            cols: u32::from(c.cols),
            rows: u32::from(c.rows),
            cursor: ScreenCursor::from(&c),
            alternate_screen: c.alternate_screen,
            lines: c
                .lines
                .into_iter()
                .map(|line| line.into_iter().map(CellRun::from).collect())
                .collect(),
        }
    }
}

/// The same screen as [`Screen`], packed into a few values instead of one JS object
/// per run: building those objects through N-API costs about as much as reading the
/// cells (the drop-in reads 2000 lines of scrollback per render).
#[napi(object)]
pub struct PackedScreen {
    pub cols: u32,
    pub rows: u32,
    pub cursor: ScreenCursor,
    pub alternate_screen: bool,
    /// Every run's text, line after line, run after run.
    pub text: String,
    /// Per line, how many runs it has.
    pub line_runs: Uint32Array,
    /// Per run, the length of its text in UTF-16 code units (JS string indices).
    pub run_lengths: Uint32Array,
    /// Per run, its attributes: bit 0 bold, 1 italic, 2 underline, 3 dim, 4 inverse.
    pub run_flags: Uint32Array,
    /// Per run, its foreground and background as indices into `colors`.
    pub run_fg: Uint32Array,
    pub run_bg: Uint32Array,
    /// The colours the runs use, `#rrggbb` or `''` for the terminal's default.
    pub colors: Vec<String>,
}

impl From<ScreenCells> for PackedScreen {
    fn from(c: ScreenCells) -> Self {
        let runs: usize = c.lines.iter().map(Vec::len).sum();
        let mut text = String::with_capacity(c.lines.iter().flatten().map(|r| r.text.len()).sum());
        let mut line_runs = Vec::with_capacity(c.lines.len());
        let mut run_lengths = Vec::with_capacity(runs);
        let mut run_flags = Vec::with_capacity(runs);
        let mut run_fg = Vec::with_capacity(runs);
        let mut run_bg = Vec::with_capacity(runs);
        let mut colors: Vec<String> = vec![String::new()];
        let mut seen: HashMap<String, u32> = HashMap::from([(String::new(), 0)]);
        let cursor = ScreenCursor::from(&c);
        let mut index = |colour: String| -> u32 {
            let next = u32::try_from(colors.len()).unwrap_or(0);
            *seen.entry(colour).or_insert_with_key(|colour| {
                colors.push(colour.clone());
                next
            })
        };
        for line in c.lines {
            line_runs.push(u32::try_from(line.len()).unwrap_or(u32::MAX));
            for run in line {
                let units = if run.text.is_ascii() {
                    run.text.len()
                } else {
                    run.text.encode_utf16().count()
                };
                run_lengths.push(u32::try_from(units).unwrap_or(u32::MAX));
                text.push_str(&run.text);
                run_flags.push(
                    u32::from(run.bold)
                        | u32::from(run.italic) << 1
                        | u32::from(run.underline) << 2
                        | u32::from(run.dim) << 3
                        | u32::from(run.inverse) << 4,
                );
                run_fg.push(index(run.fg));
                run_bg.push(index(run.bg));
            }
        }
        Self {
            cols: u32::from(c.cols),
            rows: u32::from(c.rows),
            cursor,
            alternate_screen: c.alternate_screen,
            text,
            line_runs: Uint32Array::new(line_runs),
            run_lengths: Uint32Array::new(run_lengths),
            run_flags: Uint32Array::new(run_flags),
            run_fg: Uint32Array::new(run_fg),
            run_bg: Uint32Array::new(run_bg),
            colors,
        }
    }
}

/// A screen read's handle and scrollback, checked on the JS thread.
pub fn screen_args(handle: f64, options: Option<ObjectArg<ScreenOptions>>) -> Result<(u32, usize)> {
    let handle = super::types::handle_arg(handle)?;
    let scrollback = scrollback_arg(ObjectArg::open(options)?.and_then(|o| o.scrollback))?;
    Ok((handle, scrollback))
}

pub fn get_screen_packed(
    service: &Service,
    handle: u32,
    options: Option<ObjectArg<ScreenOptions>>,
) -> Result<PackedScreen> {
    let scrollback = scrollback_arg(ObjectArg::open(options)?.and_then(|o| o.scrollback))?;
    service.screen(handle, scrollback).map(PackedScreen::from)
}

pub fn get_screen(service: &Service, handle: u32, options: Option<ObjectArg<ScreenOptions>>) -> Result<Screen> {
    let scrollback = scrollback_arg(ObjectArg::open(options)?.and_then(|o| o.scrollback))?;
    service.screen(handle, scrollback).map(Screen::from)
}
