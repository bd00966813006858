//! One stream's text as a job's output keeps it (src/output/mod.rs): the line
//! assembler's lines still being written, and the bounded log of committed ones.

use std::borrow::Cow;

use super::bounded::{excerpt, Excerpt, HeadTail};
use super::line::{self, LineAssembler};
use super::OutputLimits;

/// One stream's readable text: the text that may still change (the line being
/// written and, for a PTY job, the screen window's lines above it) and the bounded log
/// of committed lines. Committed text only ever grows: it is what the files get.
pub(super) struct TextLog {
    pub(super) assembler: LineAssembler,
    pub(super) log: HeadTail,
    pub(super) committed: String,
}

impl TextLog {
    /// `window`: completed lines kept editable above the line being written (a PTY
    /// job's rows less one), 0 for none.
    pub(super) fn new(limits: &OutputLimits, window: usize) -> Self {
        Self {
            assembler: LineAssembler::with_window(line::DEFAULT_MAX_LINE_BYTES, window),
            log: HeadTail::new(limits.text_head, limits.text_tail, true),
            committed: String::new(),
        }
    }

    /// Feeds clean text; returns the lines it completed (valid until the next call).
    pub(super) fn feed(&mut self, clean: &str) -> &str {
        self.committed.clear();
        self.assembler.feed(clean, &mut self.committed);
        self.log.push(self.committed.as_bytes());
        &self.committed
    }

    pub(super) fn finish(&mut self) -> &str {
        self.committed.clear();
        self.assembler.finish(&mut self.committed);
        self.log.push(self.committed.as_bytes());
        &self.committed
    }

    /// Commits the screen window's lines (see `LineAssembler::commit_window`); returns
    /// them.
    pub(super) fn commit_window(&mut self) -> &str {
        self.committed.clear();
        if self.assembler.commit_window(&mut self.committed) {
            self.log.push(self.committed.as_bytes());
        }
        &self.committed
    }

    /// Changes the screen window; returns the lines that left it (now committed).
    pub(super) fn set_window(&mut self, window: usize) -> &str {
        self.committed.clear();
        self.assembler.set_window(window, &mut self.committed);
        self.log.push(self.committed.as_bytes());
        &self.committed
    }

    /// Head, bytes omitted, and tail with the pending text. The tail (up to a MiB) is
    /// copied only when there is pending text; results read at the exit usually have
    /// none.
    pub(super) fn parts(&self) -> (&str, u64, Cow<'_, str>) {
        let head = as_str(self.log.head());
        let tail = as_str(self.log.tail());
        let pending = self.assembler.pending();
        let tail = if pending.is_empty() {
            Cow::Borrowed(tail)
        } else {
            Cow::Owned([tail, &pending].concat())
        };
        (head, self.log.omitted(), tail)
    }

    pub(super) fn excerpt(&self, limit: usize, whole_in: Option<&str>) -> Excerpt {
        let (head, omitted, tail) = self.parts();
        excerpt(head, omitted, &tail, limit, whole_in)
    }

    pub(super) fn render(&self) -> String {
        let (head, omitted, tail) = self.parts();
        let mut text = String::with_capacity(head.len() + tail.len() + 64);
        text.push_str(head);
        if omitted > 0 {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!("[... {omitted} bytes omitted ...]\n"));
        }
        text.push_str(&tail);
        text
    }

    /// Bytes of text so far, counting the pending text.
    pub(super) fn len(&self) -> u64 {
        self.log.total() + self.assembler.pending_len() as u64
    }

    /// Bytes of text committed: pushed to the log (and handed to the files).
    pub(super) fn committed_len(&self) -> u64 {
        self.log.total()
    }

    /// The text from byte `offset` of the stream on, as far as memory still holds it.
    pub(super) fn since(&self, offset: u64) -> String {
        let (head, omitted, tail) = self.parts();
        let head_len = head.len() as u64;
        if offset < head_len {
            let mut text = head[floor(head, offset as usize)..].to_string();
            if omitted > 0 {
                text.push_str(&format!("\n[... {omitted} bytes omitted ...]\n"));
            }
            text.push_str(&tail);
            return text;
        }
        // An offset inside the omitted middle resumes at the oldest byte still held.
        let skip = offset.saturating_sub(head_len + omitted) as usize;
        tail.get(floor(&tail, skip.min(tail.len()))..).unwrap_or("").to_string()
    }

    pub(super) fn last_line(&self) -> String {
        let pending = self.assembler.pending();
        if let Some(line) = pending.lines().rev().find(|l| !l.trim().is_empty()) {
            return line.trim_end().to_string();
        }
        let tail = as_str(self.log.tail());
        let source = if tail.is_empty() { as_str(self.log.head()) } else { tail };
        source
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim_end()
            .to_string()
    }
}

/// The most lines kept editable for redraws. Multi-line redraws (progress bars, a
/// `docker pull`) span a few dozen lines; a 4096-row terminal would otherwise let the
/// window hold twice 4095 lines of up to 64 KiB each.
const MAX_WINDOW_LINES: usize = 200;

/// Completed lines a terminal of `rows` rows shows above its cursor line.
pub(super) fn window_of(rows: u16) -> usize {
    usize::from(rows.saturating_sub(1)).min(MAX_WINDOW_LINES)
}

fn floor(s: &str, mut at: usize) -> usize {
    while at > 0 && !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The logs only ever hold whole characters (see `HeadTail`'s `utf8` mode).
pub(super) fn as_str(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or_default()
}
