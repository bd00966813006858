//! The emulated terminal screen (vt100), for full-screen programs — vim, top, less —
//! whose text log is a jumble of redraws. Only PTY jobs have one.

use std::num::NonZeroU16;

pub struct Screen {
    parser: vt100::Parser,
}

impl Screen {
    pub fn new(cols: u16, rows: u16) -> Self {
        Self {
            parser: vt100::Parser::new(nonzero(rows), nonzero(cols), 0),
        }
    }

    pub fn process(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
    }

    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.parser.set_size(nonzero(rows), nonzero(cols));
    }

    /// The visible screen as text, trailing blank rows removed.
    pub fn contents(&self) -> String {
        let mut text = self.parser.screen().contents();
        let trimmed = text.trim_end_matches('\n').len();
        text.truncate(trimmed);
        text
    }
}

fn nonzero(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redraws_leave_the_final_screen() {
        let mut s = Screen::new(20, 5);
        s.process(b"hello\r\nworld\x1b[H\x1b[2Jtop line\x1b[3;1Hthird");
        assert_eq!(s.contents(), "top line\n\nthird");
    }
}
