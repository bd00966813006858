//! A job's output written out whole, so its journal (journal.rs) can start again from
//! it: the cap on a journal, and what keeps a restart in place from replaying every
//! byte a job ever wrote (docs/daemon.md, "Restarting in place").
//!
//! What a snapshot holds: every text log (its head, omitted count and tail, and the
//! line assembler's line, cursor and screen window) and the raw view with the raw
//! stream (bytes with their streams and offsets). That is all an output's views read,
//! but for two things that cannot be written out:
//! - the text decoders' parser states (vte). A snapshot is taken only when both are
//!   known to rest (`Decoder::at_rest`: the ground state, no character half read), in
//!   which a decoder is the same as a new one;
//! - the vt100 screen (its modes, scroll region, saved cursor, scrollback with line
//!   wraps, a sequence half read): vt100 writes out only the visible cells and some
//!   modes (`state_formatted`), not enough to go on the same. A job with a screen (a
//!   terminal job) is never snapshotted: its journal keeps every step, as before.
//!
//! Why a compact form rather than rebuilding in the background after the new image
//! serves: a job's output lives under its state lock (src/job/mod.rs, `JobState`),
//! which list, kill and every read take; a rebuild holding it would stall them all,
//! and one not holding it would have to queue the job's new output beside it. A
//! snapshot bounds the replay instead: at most the snapshot and the steps since it.
//!
//! Why written by hand and not with serde: the parts are a few byte buffers and
//! counters; serde_json would write bytes as arrays of numbers (four times their
//! size), and no binary serde format is a dependency. Every length read back is
//! checked against what is left, so a damaged snapshot is an error, never a panic or
//! a huge allocation.

use super::snapshot_bytes::{Reader, Writer};
use super::{JobOutput, TextLog};

/// Bytes that start a snapshot: its format. A snapshot of another format is refused.
const FORMAT: u8 = 1;

impl TextLog {
    fn save(&self, w: &mut Writer) {
        self.assembler.save(w);
        self.log.save(w);
    }

    fn load(r: &mut Reader<'_>) -> Result<Self, String> {
        Ok(Self {
            assembler: super::line::LineAssembler::load(r)?,
            log: super::bounded::HeadTail::load(r)?,
            committed: String::new(),
        })
    }
}

fn save_optional(log: Option<&TextLog>, w: &mut Writer) {
    w.bool(log.is_some());
    if let Some(log) = log {
        log.save(w);
    }
}

fn load_optional(r: &mut Reader<'_>) -> Result<Option<TextLog>, String> {
    Ok(if r.bool()? { Some(TextLog::load(r)?) } else { None })
}

impl JobOutput {
    /// The output written out whole, if it can be (see the module's comment): it has no
    /// screen, and both decoders rest.
    pub(super) fn snapshot(&self) -> Option<Vec<u8>> {
        if self.screen.is_some() || !self.stdout_decoder.at_rest() || !self.stderr_decoder.at_rest() {
            return None;
        }
        let mut w = Writer::default();
        w.bytes.push(FORMAT);
        self.stdout.save(&mut w);
        save_optional(self.stderr.as_ref(), &mut w);
        save_optional(self.combined.as_ref(), &mut w);
        self.raw.save(&mut w);
        Some(w.bytes)
    }

    /// Puts back what `snapshot` wrote: every view as it was then, the decoders new
    /// (they rested). Its files and journal are left as they are.
    pub(super) fn restore(&mut self, snapshot: &[u8]) -> Result<(), String> {
        let mut r = Reader::new(snapshot);
        match r.take(1)? {
            [FORMAT] => {}
            [other] => return Err(format!("its snapshot is of format {other}, not {FORMAT}")),
            _ => return Err("its snapshot is empty".into()),
        }
        if self.screen.is_some() {
            return Err("its snapshot is of an output without a screen".into());
        }
        let stdout = TextLog::load(&mut r)?;
        let stderr = load_optional(&mut r)?;
        let combined = load_optional(&mut r)?;
        let raw = super::raw_log::RawLog::load(&mut r)?;
        r.end()?;
        if stderr.is_some() != self.shape.separate_stderr || combined.is_some() != self.shape.separate_stderr {
            return Err("its snapshot does not fit its output's shape".into());
        }
        self.stdout = stdout;
        self.stderr = stderr;
        self.combined = combined;
        self.raw = raw;
        self.stdout_decoder = super::decode::Decoder::new();
        self.stderr_decoder = super::decode::Decoder::new();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::persist::Stream;
    use super::super::OutputLimits;
    use super::*;

    fn chatty() -> JobOutput {
        let limits = OutputLimits {
            text_head: 20,
            text_tail: 40,
            raw_head: 10,
            raw_tail: 30,
            raw_stream: 50,
        };
        let mut output = JobOutput::new(limits, true, None);
        for i in 0..30 {
            let stream = if i % 3 == 0 { Stream::Stderr } else { Stream::Stdout };
            output.ingest(stream, format!("line {i} \u{20ac}\r\n").as_bytes());
        }
        output.ingest(Stream::Stdout, b"half a line");
        output
    }

    #[test]
    fn a_damaged_snapshot_is_an_error_never_a_panic() {
        let output = chatty();
        let snapshot = output.snapshot().expect("rests");
        // Cut anywhere, or with a byte too many: refused with a reason.
        for cut in 0..snapshot.len() {
            let mut fresh = JobOutput::new(output.shape().limits, true, None);
            assert!(fresh.restore(&snapshot[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = snapshot.clone();
        longer.push(0);
        let mut fresh = JobOutput::new(output.shape().limits, true, None);
        assert!(fresh.restore(&longer).unwrap_err().contains("too many"));
        // A length that claims more than there is allocates nothing.
        let mut huge = vec![FORMAT];
        huge.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(fresh.restore(&huge).is_err());
        // Another format, or a terminal output's shape, is refused.
        let mut other = snapshot.clone();
        other[0] = FORMAT + 1;
        assert!(fresh.restore(&other).unwrap_err().contains("format"));
        let mut tty = JobOutput::new(output.shape().limits, false, Some(super::super::ScreenSize::new(20, 4)));
        assert!(tty.restore(&snapshot).is_err());
        assert!(tty.snapshot().is_none());
        fresh.restore(&snapshot).expect("whole");
        assert_eq!(
            fresh.view(super::super::View::Text, None),
            output.view(super::super::View::Text, None)
        );
    }

    #[test]
    fn no_snapshot_while_a_decoder_is_inside_a_sequence_or_a_character() {
        let mut output = chatty();
        output.ingest(Stream::Stdout, b"\x1b[3");
        assert!(output.snapshot().is_none());
        output.ingest(Stream::Stdout, b"1m\xe2\x82");
        assert!(output.snapshot().is_none());
        output.ingest(Stream::Stdout, b"\xac");
        assert!(output.snapshot().is_some());
    }
}
