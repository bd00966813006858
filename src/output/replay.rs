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
//! The steps are kept on disk, in a journal of the job's own (journal.rs), not in
//! memory: a job's output has no size limit, and the daemon's memory per job does not
//! grow with it. A job whose journal could not be made or written (a full disk) is the
//! only one a restart cannot carry (docs/daemon.md, "Restarting in place").
//!
//! The cap: a journal that grows past `JOURNAL_CAP` is started again from a snapshot
//! of the output (src/output/snapshot.rs) when one can be taken, and the old file let
//! go: a job's journal then holds a snapshot and the steps since, and a restart
//! replays that much, not every byte since the job's start. A snapshot can be taken
//! of an output without a screen whose decoders rest (most reads of a pipes job end
//! so); the vt100 screen's state (its modes, its scrollback, a sequence half read)
//! may depend on any byte since the start and cannot be written out, so a terminal
//! job's journal keeps every step. A terminal reset is no safe point for it either:
//! what the text views hold came from before it.

use std::sync::atomic::{AtomicBool, Ordering};

use std::fs::File;
use std::path::{Path, PathBuf};

pub use super::journal::Step;
use super::journal::{self, Journal};
use super::persist::Stream;
use super::{JobOutput, Shape};

/// Whether outputs made from now on keep their steps. Only a process that can restart
/// in place with its jobs (the daemon, `keep_steps_for_restart`) pays for them: in
/// process a job would otherwise write every byte twice, and hold one more descriptor,
/// for a restart that never comes.
static KEEP_STEPS: AtomicBool = AtomicBool::new(false);

/// A journal past this many bytes is started again from a snapshot (see the module's
/// comment). What it bounds: the disk a chatty job holds, and the steps a restart
/// replays for it (about 25 ms a MiB). What it costs: a snapshot written once per
/// cap's worth of output (up to a few MiB, the text logs' tails).
pub const JOURNAL_CAP: u64 = 8 << 20;

/// A snapshot is written again only after this many times its size of steps, so the
/// snapshots of an output with large bounds add at most a third to what the journal
/// writes.
const STEPS_PER_SNAPSHOT_BYTE: u64 = 3;

/// A terminal's snapshot takes at most one part in this many of its reader's time
/// (`Recorder::rest_after`).
const SNAPSHOT_TIME_SHARE: u32 = 20;

/// From now on, every job's output keeps what a restart in place needs to rebuild it.
pub fn keep_steps_for_restart() {
    KEEP_STEPS.store(true, Ordering::Relaxed);
}

/// The steps so far, in a journal on disk made at the first step, or why there are
/// none to give.
#[derive(Debug)]
pub struct Recorder {
    keep: bool,
    /// Where the journal is made (the job's folder, else the temporary directory).
    dir: Option<PathBuf>,
    journal: Option<Journal>,
    /// Why the steps cannot be had: the journal could not be made or written.
    broken: Option<String>,
    /// The journal's length past which it is started again from a snapshot.
    cap_at: u64,
    /// The cap (`JOURNAL_CAP`; smaller in tests).
    cap: u64,
    /// No snapshot before then (`rest_after`).
    not_before: Option<std::time::Instant>,
    /// Whether a snapshot is followed by a rest (not in tests of the cap, which write
    /// faster than any job).
    rests: bool,
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
            keep,
            dir: None,
            journal: None,
            broken: None,
            cap_at: JOURNAL_CAP,
            cap: JOURNAL_CAP,
            not_before: None,
            rests: true,
        }
    }

    /// Writes on the journal a previous image wrote `len` bytes of.
    pub fn adopted(file: File, len: u64) -> Self {
        Self {
            keep: true,
            dir: None,
            journal: Some(Journal::adopt(file, len)),
            broken: None,
            cap_at: len.saturating_add(JOURNAL_CAP),
            cap: JOURNAL_CAP,
            not_before: None,
            rests: true,
        }
    }

    /// Starts the journal again from a snapshot past this many bytes (tests).
    #[cfg(test)]
    pub fn set_cap(&mut self, cap: u64) {
        self.rests = false;
        self.cap = cap;
        self.cap_at = self.written().saturating_add(cap);
    }

    /// Whether the journal has passed its cap: the output should be snapshotted
    /// (`start_again`). One comparison: this runs after every read.
    pub fn past_cap(&self) -> bool {
        self.journal.as_ref().is_some_and(|j| j.bytes_written() > self.cap_at)
            && self.broken.is_none()
            && self.not_before.is_none_or(|t| std::time::Instant::now() >= t)
    }

    /// A snapshot took `took` of the reader's time: the next waits until
    /// `SNAPSHOT_TIME_SHARE` of the time since is no more than that, so a screen with a
    /// large scrollback (about 0.1 ms a kept line to write out) costs a flood at most
    /// that share of its reader, at the price of a longer journal meanwhile.
    pub fn rest_after(&mut self, took: std::time::Duration) {
        if self.rests {
            self.not_before = Some(std::time::Instant::now() + took * (SNAPSHOT_TIME_SHARE - 1));
        }
    }

    /// Replaces the journal with a new one that starts with `snapshot` (every view as
    /// it stands after the last step recorded). The old file is let go (the kernel
    /// frees it once no copy of its descriptor is left). A new journal that cannot be
    /// made or written leaves the old one in place, whole, tried again a cap later:
    /// nothing is lost, the journal only grows on meanwhile.
    pub fn start_again(&mut self, snapshot: Vec<u8>) {
        let dir = self.journal_dir();
        let size = snapshot.len() as u64;
        let made = Journal::create(&dir).and_then(|mut journal| {
            journal.append(&Step::Snapshot(snapshot))?;
            journal.make_file()?;
            Ok(journal)
        });
        let grown = self.written();
        match made {
            Ok(journal) => {
                self.cap_at = journal.bytes_written() + self.cap.max(STEPS_PER_SNAPSHOT_BYTE.saturating_mul(size));
                self.journal = Some(journal);
            }
            Err(_) => self.cap_at = grown.saturating_add(self.cap),
        }
    }

    /// The journal's length so far (0 before it is made): a step recorded since a mark
    /// of it changes it.
    pub fn written(&self) -> u64 {
        self.journal.as_ref().map_or(0, Journal::bytes_written)
    }

    /// No snapshot can be taken of the output as it stands: the next try comes after
    /// another cap's worth of steps (a try reads the whole screen).
    pub fn postpone(&mut self) {
        let grown = self.written();
        self.cap_at = grown.saturating_add(self.cap);
    }

    /// Where a journal is made: the job's folder, else the temporary directory.
    fn journal_dir(&self) -> PathBuf {
        self.dir.clone().unwrap_or_else(std::env::temp_dir)
    }

    /// The journal is made in `dir` (if it is not made yet).
    pub fn place_in(&mut self, dir: &Path) {
        self.dir = Some(dir.to_path_buf());
    }

    fn journal(&mut self) -> Option<&mut Journal> {
        if !self.keep || self.broken.is_some() {
            return None;
        }
        if self.journal.is_none() {
            let dir = self.journal_dir();
            match Journal::create(&dir) {
                Ok(journal) => self.journal = Some(journal),
                Err(e) => {
                    self.broken = Some(format!("its journal could not be made in {}: {e}", dir.display()));
                    return None;
                }
            }
        }
        self.journal.as_mut()
    }

    fn wrote(&mut self, result: std::io::Result<()>) {
        if let Err(e) = result {
            // Its blocks are freed: nothing will read them.
            self.journal = None;
            self.broken = Some(format!("its journal could not be written: {e}"));
        }
    }

    pub fn record(&mut self, step: Step) {
        if let Some(journal) = self.journal() {
            let result = journal.append(&step);
            self.wrote(result);
        }
    }

    /// One read's bytes, appended to the journal's buffer (this runs on every read of
    /// every job; in process, where none are kept, it costs one test).
    pub fn record_read(&mut self, stream: Stream, bytes: &[u8]) {
        if let Some(journal) = self.journal() {
            let result = journal.append_read(stream == Stream::Stderr, bytes);
            self.wrote(result);
        }
    }

    /// Why the steps cannot be had, if they cannot, with the journal's file made now if
    /// it waited (journal.rs): a restart learns that it cannot be made before anything
    /// stops, not when the jobs are already frozen.
    pub fn ready(&mut self) -> Option<String> {
        if let Some(journal) = self.journal() {
            let result = journal.make_file();
            self.wrote(result);
        }
        self.refusal()
    }

    /// Why the steps cannot be had, if they cannot.
    pub fn refusal(&self) -> Option<String> {
        if !self.keep {
            return Some("its output keeps no steps (not a daemon's job)".into());
        }
        self.broken.clone()
    }

    /// Every step so far is in the journal: a copy of its descriptor and its length.
    pub fn seal(&mut self) -> Result<(File, u64), String> {
        if let Some(why) = self.refusal() {
            return Err(why);
        }
        let sealed = match self.journal() {
            Some(journal) => journal.seal(),
            None => return Err(self.refusal().unwrap_or_default()),
        };
        sealed.map_err(|e| {
            self.journal = None;
            let why = format!("its journal could not be written: {e}");
            self.broken = Some(why.clone());
            why
        })
    }
}

impl JobOutput {
    /// Every change so far is in the journal (`replay`): a copy of its descriptor and
    /// its length, for a restart in place. `Err`: why there is none to give.
    pub fn seal_journal(&mut self) -> Result<(std::fs::File, u64), String> {
        self.replay.seal()
    }

    /// Why the output cannot be rebuilt by a restart in place, if it cannot.
    pub fn journal_refusal(&mut self) -> Option<String> {
        self.replay.ready()
    }

    /// The output a previous image's journal (`len` bytes of `file`) made (a restart
    /// in place), without files: the caller gives it the previous image's (`set_files`),
    /// which hold the committed text already. Its journal is written on from there.
    pub fn rebuilt(shape: Shape, file: File, len: u64) -> Result<Self, String> {
        let mut output = Self::new(shape.limits, shape.separate_stderr, shape.screen);
        // Not recorded again while it is fed.
        output.replay = Recorder::new(false);
        let mut failed = None;
        journal::replay(&file, len, |step| {
            if failed.is_none() {
                failed = output.apply(&step).err();
            }
        })?;
        if let Some(why) = failed {
            return Err(why);
        }
        output.replay = Recorder::adopted(file, len);
        Ok(output)
    }

    /// After a step was recorded and applied: a journal past its cap starts again from
    /// a snapshot, if one can be taken now (else at a later step).
    pub(super) fn keep_journal_capped(&mut self) {
        if !self.replay.past_cap() {
            return;
        }
        // A terminal's screen is written out by the reader outside the job's lock
        // (`take_pending_snapshot`); the rest here, at once.
        let taken = match self.screen.clone() {
            Some(screen) => self.begin_snapshot(screen),
            None => self.try_snapshot().map(|snapshot| self.replay.start_again(snapshot)),
        };
        if let Err(super::snapshot::NotTaken::Unlike) = taken {
            self.replay.postpone();
        }
    }

    /// Starts the journal again from a snapshot past `cap` bytes (tests).
    #[cfg(test)]
    pub fn set_journal_cap(&mut self, cap: u64) {
        self.replay.set_cap(cap);
    }

    /// The output `steps` make (tests: the same as the journal's replay).
    #[cfg(test)]
    pub fn from_steps(shape: Shape, steps: &[Step]) -> Self {
        let mut output = Self::new(shape.limits, shape.separate_stderr, shape.screen);
        output.replay = Recorder::new(false);
        for step in steps {
            output.apply(step).expect("a step that applies");
        }
        output
    }

    fn apply(&mut self, step: &Step) -> Result<(), String> {
        match step {
            Step::Read { err, bytes } => {
                let stream = if *err { Stream::Stderr } else { Stream::Stdout };
                self.ingest(stream, bytes);
                if let Some(screen) = self.take_screen_due() {
                    screen.flush();
                }
            }
            Step::CommitScreen => {
                self.commit_screen();
            }
            Step::Resize { cols, rows } => self.resize(*cols, *rows),
            Step::Finish => self.finish(),
            Step::Snapshot(bytes) => return self.restore(bytes),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_go_to_a_journal_without_a_cap_and_only_where_kept() {
        let mut none = Recorder::new(false);
        none.record(Step::Finish);
        assert!(none.seal().unwrap_err().contains("keeps no steps"));
        let mut recorder = Recorder::new(true);
        recorder.record_read(Stream::Stdout, b"hello");
        recorder.record(Step::CommitScreen);
        let big = vec![b'x'; 9 << 20];
        recorder.record_read(Stream::Stderr, &big);
        let (file, len) = recorder.seal().unwrap();
        let mut steps = Vec::new();
        journal::replay(&file, len, |s| steps.push(s)).unwrap();
        assert_eq!(steps.len(), 3);
        assert_eq!(steps[2], Step::Read { err: true, bytes: big });
    }

    /// A snapshot that took long holds the next one back (a share of the reader's
    /// time), then the cap applies again.
    #[test]
    fn a_long_snapshot_holds_the_next_back_a_while() {
        let mut recorder = Recorder::new(true);
        recorder.record_read(Stream::Stdout, &vec![b'x'; (JOURNAL_CAP + 1) as usize]);
        assert!(recorder.past_cap());
        // A second's snapshot: no other for the next 19 s.
        recorder.rest_after(std::time::Duration::from_secs(1));
        assert!(!recorder.past_cap(), "held back");
        recorder.rest_after(std::time::Duration::ZERO);
        assert!(recorder.past_cap(), "due again");
    }

    #[test]
    fn a_journal_that_cannot_be_made_refuses_with_its_reason() {
        let mut recorder = Recorder::new(true);
        recorder.place_in(Path::new("/nonexistent/of/course"));
        recorder.record_read(Stream::Stdout, b"hello");
        let why = recorder.seal().unwrap_err();
        assert!(why.contains("could not be made in /nonexistent/of/course"), "{why}");
        assert_eq!(recorder.refusal(), Some(why));
    }
}
