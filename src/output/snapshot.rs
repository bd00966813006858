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
//! - the vt100 screen of a terminal job, whose parser is private too: it is written
//!   out as the bytes that draw the same screen on a new emulator, taken only when
//!   the emulator rests and checked to draw the same screen
//!   (src/output/screen_snapshot.rs). A screen that cannot be drawn the same gives no
//!   snapshot; the journal then keeps every step until one can be taken.
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
/// Format 1 is an output without a screen; format 2 adds the screen after the rest.
const FORMAT: u8 = 1;
const FORMAT_WITH_SCREEN: u8 = 2;

/// Why no snapshot was taken.
pub(super) enum NotTaken {
    /// A decoder or the emulator is inside a sequence: tried again at the next read.
    Busy,
    /// The screen cannot be written out the same (see src/output/screen_snapshot.rs):
    /// tried again only after more output, as the check costs a read of every cell.
    Unlike,
}

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
    /// The output written out whole, if it can be now (see the module's comment).
    #[cfg(test)]
    pub(super) fn snapshot(&self) -> Option<Vec<u8>> {
        self.try_snapshot().ok()
    }

    pub(super) fn try_snapshot(&self) -> Result<Vec<u8>, NotTaken> {
        let mut w = self.snapshot_head()?;
        if let Some(screen) = self.screen.as_ref() {
            screen.snapshot(&mut w).map_err(|_| NotTaken::Unlike)?;
        }
        Ok(w.bytes)
    }

    /// Everything but the screen, if both decoders rest.
    fn snapshot_head(&self) -> Result<Writer, NotTaken> {
        if !self.stdout_decoder.at_rest() || !self.stderr_decoder.at_rest() {
            return Err(NotTaken::Busy);
        }
        let mut w = Writer::default();
        w.bytes.push(if self.screen.is_some() {
            FORMAT_WITH_SCREEN
        } else {
            FORMAT
        });
        self.stdout.save(&mut w);
        save_optional(self.stderr.as_ref(), &mut w);
        save_optional(self.combined.as_ref(), &mut w);
        self.raw.save(&mut w);
        Ok(w)
    }

    /// A terminal output's snapshot begun (under the job's lock): its text and raw
    /// parts now, its screen later outside every lock (`PendingSnapshot::write`).
    pub(super) fn begin_snapshot(&mut self, screen: super::Screen) -> Result<(), NotTaken> {
        if self.pending_snapshot.is_none() {
            self.pending_snapshot = Some(PendingSnapshot {
                head: self.snapshot_head()?,
                screen,
                mark: self.replay.written(),
            });
        }
        Ok(())
    }

    /// A terminal output's snapshot begun at a step (`begin_snapshot`), for the reader
    /// to finish once it has let the job's lock go.
    pub fn take_pending_snapshot(&mut self) -> Option<PendingSnapshot> {
        self.pending_snapshot.take()
    }

    /// Starts the journal again from a snapshot written outside the job's lock, if no
    /// step came since its point (a resize or a commit from another thread: it is then
    /// a snapshot of an older output, and tried again a cap later).
    pub fn finish_snapshot(&mut self, written: WrittenSnapshot) {
        self.replay.rest_after(written.took);
        match written.bytes {
            Ok(bytes) if written.mark == self.replay.written() => self.replay.start_again(bytes),
            _ => self.replay.postpone(),
        }
    }

    /// Puts back what `snapshot` wrote: every view as it was then, the decoders new
    /// (they rested). Its files and journal are left as they are.
    pub(super) fn restore(&mut self, snapshot: &[u8]) -> Result<(), String> {
        let mut r = Reader::new(snapshot);
        let with_screen = match r.take(1)? {
            [FORMAT] => false,
            [FORMAT_WITH_SCREEN] => true,
            [other] => {
                return Err(format!(
                    "its snapshot is of format {other}, not {FORMAT} or {FORMAT_WITH_SCREEN}"
                ))
            }
            _ => return Err("its snapshot is empty".into()),
        };
        if with_screen != self.screen.is_some() {
            return Err("its snapshot is of an output of another kind (with or without a screen)".into());
        }
        let stdout = TextLog::load(&mut r)?;
        let stderr = load_optional(&mut r)?;
        let combined = load_optional(&mut r)?;
        let raw = super::raw_log::RawLog::load(&mut r)?;
        if let Some(screen) = self.screen.as_ref() {
            screen.restore(&mut r)?;
        }
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

/// A terminal output's snapshot: its text and raw parts, taken at a step under the
/// job's lock, and a handle to its screen, copied and written out later outside every
/// lock (src/output/screen_snapshot.rs).
pub struct PendingSnapshot {
    head: Writer,
    screen: super::Screen,
    /// The journal's length at the snapshot's point.
    mark: u64,
}

/// A snapshot written, or why not, for `JobOutput::finish_snapshot`.
pub struct WrittenSnapshot {
    bytes: Result<Vec<u8>, String>,
    mark: u64,
    /// How long the screen took to copy and write out.
    took: std::time::Duration,
}

impl PendingSnapshot {
    /// Copies the screen (a brief hold of its lock) and writes it out. The reader
    /// calls it with no lock held, before its next read: the screen then holds exactly
    /// the bytes read up to the snapshot's point.
    pub fn write(self) -> WrittenSnapshot {
        let started = std::time::Instant::now();
        let mut w = self.head;
        let bytes = self
            .screen
            .copy_at_rest()
            .and_then(|copy| copy.write(&mut w))
            .map(|()| w.bytes);
        WrittenSnapshot {
            bytes,
            mark: self.mark,
            took: started.elapsed(),
        }
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
        other[0] = FORMAT_WITH_SCREEN + 1;
        assert!(fresh.restore(&other).unwrap_err().contains("format"));
        let size = Some(super::super::ScreenSize::new(20, 4));
        let mut tty = JobOutput::new(output.shape().limits, false, size);
        assert!(tty.restore(&snapshot).is_err());
        // A terminal output's snapshot: refused by an output without a screen, and
        // cut anywhere, an error.
        tty.ingest(Stream::Stdout, b"\x1b[1;31mred\x1b[0m and \x1b[?1049hfull screen\r\n");
        let tty_snapshot = tty.snapshot().expect("rests");
        assert!(fresh.restore(&tty_snapshot).unwrap_err().contains("kind"));
        for cut in 0..tty_snapshot.len() {
            let mut again = JobOutput::new(output.shape().limits, false, size);
            assert!(again.restore(&tty_snapshot[..cut]).is_err(), "cut at {cut}");
        }
        let mut again = JobOutput::new(output.shape().limits, false, size);
        again.restore(&tty_snapshot).expect("whole");
        assert_eq!(again.screen_cells(10), tty.screen_cells(10));
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
