//! What a job's output went through, step by step, so that a restart in place
//! (src/daemon/upgrade/) rebuilds it exactly in the new image: the same text (head,
//! omitted count, tail, the line still being written and the screen window's lines),
//! the same raw bytes with their streams and offsets, the same screen.
//!
//! Why a replay and not the structures themselves: the text decoder and the terminal
//! emulator (vt100) hold parser states that cannot be written out, and every view is
//! a pure function of the bytes read and of the two other things that change it (a
//! quiet spell committing the screen's lines, a resize). Fed the same steps in the
//! same order, a fresh `JobOutput` ends in the same state; the screen's batching skips
//! only what emulating every byte would show the same (src/output/screen.rs), so the
//! batches need not match.
//!
//! The steps are kept while they hold at most [`REPLAY_CAP`] bytes of output; a job
//! that wrote more cannot be rebuilt exactly, and a restart is refused while the
//! daemon holds it (docs/daemon.md, "Restarting in place").

use std::sync::atomic::{AtomicBool, Ordering};

use base64::Engine;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::persist::Stream;
use super::{JobOutput, Shape};

/// Bytes of output a job's replay keeps. Beyond it the steps are dropped (their memory
/// freed) and the job is marked as one a restart cannot carry.
pub const REPLAY_CAP: usize = 8 * 1024 * 1024;

/// One change to a job's output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "camelCase")]
pub enum Step {
    /// One read's bytes, from stderr (`err`) or stdout (or the terminal).
    Read {
        err: bool,
        #[serde(serialize_with = "to_base64", deserialize_with = "from_base64")]
        bytes: Vec<u8>,
    },
    /// The quiet spell's commit of the screen window's lines (`JobOutput::commit_screen`).
    CommitScreen,
    /// The terminal's new size.
    Resize { cols: u16, rows: u16 },
    /// The process ended: the lines still being written were committed.
    Finish,
}

impl Step {
    pub fn read(stream: Stream, bytes: &[u8]) -> Self {
        Self::Read {
            err: stream == Stream::Stderr,
            bytes: bytes.to_vec(),
        }
    }
}

/// Whether outputs made from now on keep their steps. Only a process that can restart
/// in place with its jobs (the daemon, `keep_steps_for_restart`) pays for them: in
/// process a job's output would otherwise hold a second copy of up to `REPLAY_CAP`
/// bytes, and every read one more allocation, for a restart that never comes.
static KEEP_STEPS: AtomicBool = AtomicBool::new(false);

/// From now on, every job's output keeps what a restart in place needs to rebuild it.
pub fn keep_steps_for_restart() {
    KEEP_STEPS.store(true, Ordering::Relaxed);
}

/// The steps so far, or that they outgrew [`REPLAY_CAP`] (or were never kept).
#[derive(Debug)]
pub struct Recorder {
    steps: Vec<Step>,
    bytes: usize,
    overflowed: bool,
}

impl Default for Recorder {
    /// Keeping steps only where `keep_steps_for_restart` was called.
    fn default() -> Self {
        Self::new(KEEP_STEPS.load(Ordering::Relaxed))
    }
}

impl Recorder {
    /// A recorder that keeps steps (`keep`) or has none to give from the start.
    pub fn new(keep: bool) -> Self {
        Self {
            steps: Vec::new(),
            bytes: 0,
            overflowed: !keep,
        }
    }

    pub fn record(&mut self, step: Step) {
        if self.overflowed {
            return;
        }
        if let Step::Read { bytes, .. } = &step {
            self.bytes = self.bytes.saturating_add(bytes.len());
            if self.bytes > REPLAY_CAP {
                self.overflowed = true;
                self.steps = Vec::new();
                return;
            }
        }
        self.steps.push(step);
    }

    /// One read's bytes: copied only while steps are kept (this runs on every read of
    /// every job; in process, where none are kept, it costs one test).
    pub fn record_read(&mut self, stream: Stream, bytes: &[u8]) {
        if !self.overflowed {
            self.record(Step::read(stream, bytes));
        }
    }

    /// Every step, `None` once they outgrew the cap.
    pub fn steps(&self) -> Option<&[Step]> {
        (!self.overflowed).then_some(self.steps.as_slice())
    }
}

impl JobOutput {
    /// The output a previous image's `steps` made (a restart in place: `replay`),
    /// without files: the caller gives it the previous image's (`set_files`), which
    /// hold the committed text already.
    pub fn rebuilt(shape: Shape, steps: &[Step]) -> Self {
        let mut output = Self::new(shape.limits, shape.separate_stderr, shape.screen);
        for step in steps {
            match step {
                Step::Read { err, bytes } => {
                    let stream = if *err { Stream::Stderr } else { Stream::Stdout };
                    output.ingest(stream, bytes);
                    if let Some(screen) = output.take_screen_due() {
                        screen.flush();
                    }
                }
                Step::CommitScreen => {
                    output.commit_screen();
                }
                Step::Resize { cols, rows } => output.resize(*cols, *rows),
                Step::Finish => output.finish(),
            }
        }
        output
    }
}

pub(crate) fn to_base64<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
}

pub(crate) fn from_base64<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    let text = String::deserialize(d)?;
    base64::engine::general_purpose::STANDARD
        .decode(text.as_bytes())
        .map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_kept_up_to_the_cap_then_dropped() {
        let mut recorder = Recorder::new(true);
        recorder.record(Step::read(Stream::Stdout, b"hello"));
        recorder.record(Step::CommitScreen);
        assert_eq!(recorder.steps().map(<[Step]>::len), Some(2));
        recorder.record(Step::read(Stream::Stderr, &vec![b'x'; REPLAY_CAP]));
        assert_eq!(recorder.steps(), None, "over the cap: not carried");
        recorder.record(Step::Finish);
        assert_eq!(recorder.steps(), None);
    }

    #[test]
    fn a_step_survives_its_json() {
        let step = Step::read(Stream::Stderr, &[0, 255, b'\n', 0x1b]);
        let json = serde_json::to_string(&step).unwrap();
        assert_eq!(serde_json::from_str::<Step>(&json).unwrap(), step);
    }
}
