//! A screen written out whole and put back (a terminal job's part of its output's
//! snapshot, src/output/snapshot.rs): its size, the bytes that draw vt100's state again
//! (src/output/screen_redraw.rs), and what the skip follows beside the emulator.
//!
//! A snapshot is taken only when it is sure to be the same screen: the emulator rests
//! (no sequence or character half read: vt100's parser is then as a new one is), and
//! the screen drawn from the bytes is read out and compared with the screen they were
//! drawn from, cell by cell and state by state (`ScreenState`). Anything else gives no
//! snapshot, and the journal keeps every step as before.

use std::num::NonZeroU16;

use super::super::screen_redraw::{redraw, Segment};
use super::super::screen_state::ScreenState;
use super::super::snapshot_bytes::{Reader, Writer};
use super::skip::{Scan, State};
use super::{nonzero, Inner, Screen, MAX_SCROLLBACK_LINES};
use crate::base::limits::{MAX_SCROLLBACK_CELLS, MAX_TERMINAL_SIZE};
use crate::base::sync::lock;

/// A screen as it stood at a snapshot's point, copied out of its lock: writing it out
/// reads every cell twice (about 8 ms for 120 × 40, 0.1 ms more per line kept above),
/// which must hold neither the job's lock nor the emulator's (a resize takes the
/// emulator's under the job's).
pub(in crate::output) struct ScreenCopy {
    screen: Option<vt100::Screen>,
    cols: NonZeroU16,
    rows: usize,
    scrollback: usize,
    region: bool,
    alt: bool,
    confused: bool,
    deep: bool,
}

impl Screen {
    /// The screen written out (see the module's comment), or why it cannot be now.
    pub(in crate::output) fn snapshot(&self, w: &mut Writer) -> Result<(), String> {
        self.copy_at_rest()?.write(w)
    }

    /// A copy of the screen with everything queued emulated, if it rests.
    pub(in crate::output) fn copy_at_rest(&self) -> Result<ScreenCopy, String> {
        let inner = self.flushed();
        if inner.scan.state != State::Ground || !inner.scan.after_ascii {
            return Err("the screen is inside a sequence or a character".into());
        }
        Ok(ScreenCopy {
            screen: inner.parser.as_ref().map(|p| p.screen().clone()),
            cols: inner.cols,
            rows: inner.rows,
            scrollback: inner.scrollback,
            region: inner.scan.region,
            alt: inner.scan.alt,
            confused: inner.scan.confused,
            deep: inner.deep,
        })
    }

    /// Puts back what `snapshot` wrote. Sizes past a terminal's limits (those a job
    /// is admitted with: src/service/admission.rs) are refused before anything is made
    /// of them.
    pub(in crate::output) fn restore(&self, r: &mut Reader<'_>) -> Result<(), String> {
        let cols = r.u64()?;
        let rows = r.usize()?;
        let scrollback = r.usize()?;
        let small = |n: u64| (1..=u64::from(MAX_TERMINAL_SIZE)).contains(&n);
        let cells = (cols as usize).saturating_mul(scrollback);
        if !small(cols) || !small(rows as u64) || scrollback > MAX_SCROLLBACK_LINES || cells > MAX_SCROLLBACK_CELLS {
            return Err(format!(
                "its screen's size is out of bounds ({cols} × {rows}, {scrollback} kept)"
            ));
        }
        let (cols, rows16) = (nonzero(cols as u16), nonzero(rows as u16));
        let has_parser = r.bool()?;
        let mut segments = Vec::new();
        for _ in 0..r.usize()? {
            let cols = r.u64()?;
            if !small(cols) || (cols as usize).saturating_mul(scrollback) > MAX_SCROLLBACK_CELLS {
                return Err(format!("its screen was drawn {cols} columns wide"));
            }
            segments.push(Segment {
                cols: cols as u16,
                bytes: r.bytes()?,
            });
        }
        if segments.last().is_some_and(|last| last.cols != cols.get()) {
            return Err("its screen's drawing ends at another width".into());
        }
        let parser = has_parser.then(|| drawn(&segments, rows16, scrollback));
        let scan = Scan {
            region: r.bool()?,
            alt: r.bool()?,
            confused: r.bool()?,
            ..Scan::default()
        };
        let deep = r.bool()?;
        lock(&self.shared.queue).bytes.clear();
        *lock(&self.shared.emulator) = Inner {
            parser,
            cols,
            rows,
            scrollback,
            scan,
            skipped: 0,
            deep,
        };
        Ok(())
    }
}

impl ScreenCopy {
    /// Writes the copy out, checked to draw the same screen (no lock held).
    pub(in crate::output) fn write(self, w: &mut Writer) -> Result<(), String> {
        let drawn = match self.screen.as_ref() {
            None => None,
            Some(screen) => Some(same_screen_drawn(screen, self.rows, self.scrollback)?),
        };
        w.u64(u64::from(self.cols.get()));
        w.usize(self.rows);
        w.usize(self.scrollback);
        w.bool(drawn.is_some());
        let segments = drawn.unwrap_or_default();
        w.usize(segments.len());
        for segment in &segments {
            w.u64(u64::from(segment.cols));
            w.bytes(&segment.bytes);
        }
        w.bool(self.region);
        w.bool(self.alt);
        w.bool(self.confused);
        w.bool(self.deep);
        Ok(())
    }
}

/// A new emulator `rows` high given `segments`, each at its width.
fn drawn(segments: &[Segment], rows: NonZeroU16, scrollback: usize) -> vt100::Parser {
    let first = segments.first().map_or(1, |s| s.cols);
    let mut parser = vt100::Parser::new(rows, nonzero(first), scrollback);
    for segment in segments {
        parser.set_size(rows, nonzero(segment.cols));
        parser.process(&segment.bytes);
    }
    parser
}

/// The bytes that draw `screen` again on a new emulator of its size, checked to do so.
fn same_screen_drawn(screen: &vt100::Screen, rows: usize, scrollback: usize) -> Result<Vec<Segment>, String> {
    let state = ScreenState::read(screen)?;
    let segments = redraw(&state)?;
    let rows = NonZeroU16::new(rows as u16).ok_or("a screen without rows")?;
    let again = drawn(&segments, rows, scrollback);
    if ScreenState::read(again.screen())? != state {
        return Err("the screen drawn again is not the same".into());
    }
    Ok(segments)
}
