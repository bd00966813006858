//! Everything a job writes, in the three views a reader asks for:
//! - `text`: what a person reads (ANSI removed, redraws collapsed), head + tail bounded;
//! - `screen`: the emulated terminal (PTY jobs only);
//! - `raw`: the bytes as written, head + tail bounded (`raw_log`).
//!
//! Each read of the job goes through [`JobOutput::ingest`] exactly once; the clean
//! text it returns is what pattern waiters see.

pub mod bounded;
pub mod cells;
pub mod decode;
mod job_dir;
pub mod journal;
pub mod line;
pub mod persist;
mod private_files;
mod raw_log;
pub mod raw_stream;
pub mod read;
pub mod replay;
pub mod retention;
mod scan;
pub mod screen;
mod screen_redraw;
mod screen_state;
mod snapshot;
mod snapshot_bytes;
pub mod spare_dir;
#[cfg(test)]
mod test_rng;
mod text_log;

use bounded::{last_bytes, Excerpt};
use cells::ScreenCells;
use decode::Decoder;
use persist::{JobFiles, Stream};
use raw_log::RawLog;
use raw_stream::RawStream;
use read::Committed;
use replay::{Recorder, Step};
use screen::{Screen, ScreenSize};
pub use snapshot::{PendingSnapshot, WrittenSnapshot};
use text_log::{as_str, window_of, TextLog};

/// Memory bounds of one job's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OutputLimits {
    pub text_head: usize,
    pub text_tail: usize,
    pub raw_head: usize,
    pub raw_tail: usize,
    /// Bytes kept with their stream (`raw_stream`); 0: none (the default). When it is
    /// at least `raw_tail`, the raw view's tail is read from them (`raw_log`).
    pub raw_stream: usize,
}

impl Default for OutputLimits {
    fn default() -> Self {
        Self {
            text_head: 64 * 1024,
            text_tail: 512 * 1024,
            raw_head: 16 * 1024,
            raw_tail: 256 * 1024,
            raw_stream: 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    Text,
    Screen,
    Raw,
}

/// Which text log an excerpt is taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    Stdout,
    Stderr,
    Combined,
}

/// All output of one job.
pub struct JobOutput {
    stdout_decoder: Decoder,
    stderr_decoder: Decoder,
    stdout: TextLog,
    /// Present in pipes mode: stderr kept apart, and the two interleaved as they came.
    stderr: Option<TextLog>,
    combined: Option<TextLog>,
    /// The raw view, and the bytes with their stream for readers that pass them on.
    raw: RawLog,
    screen: Option<Screen>,
    /// A batch of the screen's queued bytes is due (see `take_screen_due`).
    screen_due: bool,
    files: Option<JobFiles>,
    /// Why the job has no files though it should (its folder could not be made).
    files_error: Option<String>,
    clean: String,
    /// Every change so far, for a restart in place to rebuild this output (`replay`).
    replay: Recorder,
    /// A terminal's snapshot begun at a step, for the reader to finish outside the
    /// job's lock (src/output/snapshot.rs).
    pending_snapshot: Option<PendingSnapshot>,
    /// What it was made with (`new`'s arguments), for the rebuild.
    shape: Shape,
}

/// What a job's output was made with: its bounds, whether stderr is kept apart, the
/// screen's first size (PTY jobs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shape {
    pub limits: OutputLimits,
    pub separate_stderr: bool,
    pub screen: Option<ScreenSize>,
}

impl JobOutput {
    /// `screen` is the emulated terminal's size for a PTY job. Files come later
    /// (`set_files`). A PTY job's text reads multi-line redraws as its screen shows
    /// them: the log of stdout keeps the screen's rows above the cursor line editable.
    pub fn new(limits: OutputLimits, separate_stderr: bool, screen: Option<ScreenSize>) -> Self {
        let window = match screen {
            Some(size) if !separate_stderr => window_of(size.rows),
            _ => 0,
        };
        Self {
            stdout_decoder: Decoder::new(),
            stderr_decoder: Decoder::new(),
            stdout: TextLog::new(&limits, window),
            stderr: separate_stderr.then(|| TextLog::new(&limits, 0)),
            combined: separate_stderr.then(|| TextLog::new(&limits, 0)),
            raw: RawLog::new(limits.raw_head, limits.raw_tail, limits.raw_stream),
            screen: screen.map(|size| Screen::new(size.cols, size.rows, size.scrollback)),
            screen_due: false,
            files: None,
            files_error: None,
            clean: String::new(),
            replay: Recorder::default(),
            pending_snapshot: None,
            shape: Shape {
                limits,
                separate_stderr,
                screen,
            },
        }
    }

    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Takes one read's bytes; returns the clean text they carried (for waiters).
    pub fn ingest(&mut self, stream: Stream, bytes: &[u8]) -> &str {
        self.replay.record_read(stream, bytes);
        self.raw.push(stream, bytes);
        if let Some(screen) = self.screen.as_ref() {
            if screen.queue(bytes) {
                self.screen_due = true;
            }
        }
        self.clean.clear();
        let (decoder, log) = match (stream, self.stderr.as_mut()) {
            (Stream::Stderr, Some(err)) => (&mut self.stderr_decoder, err),
            _ => (&mut self.stdout_decoder, &mut self.stdout),
        };
        decoder.decode(bytes, &mut self.clean);
        let lines = log.feed(&self.clean);
        if let Some(files) = self.files.as_mut() {
            files.write(stream, lines);
        }
        if let Some(combined) = self.combined.as_mut() {
            combined.feed(&self.clean);
        }
        self.keep_journal_capped();
        &self.clean
    }

    /// Commits the lines still being written (the process has ended).
    pub fn finish(&mut self) {
        self.replay.record(Step::Finish);
        let stdout_rest = self.stdout.finish().to_string();
        let stderr_rest = self.stderr.as_mut().map(|e| e.finish().to_string());
        if let Some(combined) = self.combined.as_mut() {
            combined.finish();
        }
        if let Some(files) = self.files.as_mut() {
            files.write(Stream::Stdout, &stdout_rest);
            if let Some(rest) = stderr_rest {
                files.write(Stream::Stderr, &rest);
            }
            files.finish();
        }
    }

    /// Attaches the files output is persisted to; set before the first byte arrives.
    /// `Err`: they should exist but could not be made (why, for `persist_error`).
    pub fn set_files(&mut self, files: Option<Result<JobFiles, String>>) {
        match files {
            Some(Ok(files)) => {
                // The journal goes where the job's output does (not the temporary
                // directory, often in memory).
                if let Some(dir) = files.kept_dir() {
                    self.replay.place_in(dir);
                }
                self.files = Some(files)
            }
            Some(Err(why)) => self.files_error = Some(why),
            None => {}
        }
    }

    /// Why the files lack part of the output, `None` while they hold it all (or the
    /// job has none by choice); see `JobFiles::persist_error`.
    pub fn persist_error(&self) -> Option<String> {
        match &self.files {
            Some(files) => files.persist_error(),
            None => self.files_error.clone(),
        }
    }

    /// Looks whether the files are still there (`JobFiles::check`): before an answer
    /// names them.
    pub fn check_files(&mut self) {
        if let Some(files) = self.files.as_mut() {
            files.check();
        }
    }

    /// The file or files that hold the whole of a log, if the files hold everything.
    fn whole_in(&self, which: Which) -> Option<String> {
        let files = self.files.as_ref().filter(|f| f.whole())?;
        let stdout = files.stdout_path().display().to_string();
        let stderr = || files.stderr_path().display().to_string();
        let wrote_stderr = self.stderr.as_ref().is_some_and(|e| e.len() > 0);
        Some(match which {
            Which::Stdout => stdout,
            Which::Stderr => stderr(),
            // Pipes mode: the interleaving is in memory only; the two files hold it all.
            Which::Combined if wrote_stderr => format!("{stdout} and {}", stderr()),
            Which::Combined => stdout,
        })
    }

    /// The output has ended for good: let go of the file descriptors.
    pub fn close_files(&mut self) {
        if let Some(files) = self.files.as_mut() {
            files.close();
        }
    }

    /// The job's folder, while it is kept (see `JobFiles::kept_dir`).
    pub fn kept_dir(&self) -> Option<&std::path::Path> {
        self.files().and_then(|f| f.kept_dir())
    }

    pub fn files(&self) -> Option<&JobFiles> {
        self.files.as_ref()
    }

    pub fn files_mut(&mut self) -> Option<&mut JobFiles> {
        self.files.as_mut()
    }

    /// Lines the emulated screen keeps above itself (0 without a screen).
    pub fn scrollback(&self) -> usize {
        self.screen.as_ref().map_or(0, |s| s.scrollback())
    }

    /// The terminal's new size; for a PTY job, lines that leave the smaller screen
    /// window are committed (and written to the files) as they stand.
    pub fn resize(&mut self, cols: u16, rows: u16) {
        let Some(screen) = self.screen.as_ref() else { return };
        self.replay.record(Step::Resize { cols, rows });
        screen.resize(cols, rows);
        if self.stderr.is_some() {
            return;
        }
        let lines = self.stdout.set_window(window_of(rows));
        if let Some(files) = self.files.as_mut() {
            files.write(Stream::Stdout, lines);
        }
    }

    /// The program has been quiet for a while: the lines on its screen are committed
    /// (and written to the file) as they stand, so a server's last lines do not wait
    /// for a screenful more output or its exit. A redraw after this starts afresh
    /// below them. Returns whether anything was committed. The files' descriptors are
    /// let go until the next output (`JobFiles::idle`): a quiet job holds none.
    pub fn commit_screen(&mut self) -> bool {
        self.replay.record(Step::CommitScreen);
        let committed = self.commit_window();
        if let Some(files) = self.files.as_mut() {
            files.idle();
        }
        committed
    }

    fn commit_window(&mut self) -> bool {
        if self.stderr.is_some() {
            return false;
        }
        let lines = self.stdout.commit_window();
        if lines.is_empty() {
            return false;
        }
        if let Some(files) = self.files.as_mut() {
            files.write(Stream::Stdout, lines);
        }
        true
    }

    /// The emulated terminal as cells, with up to `scrollback` lines from above the
    /// screen; `None` for a pipes job.
    pub fn screen_cells(&self, scrollback: usize) -> Option<ScreenCells> {
        self.screen.as_ref().map(|screen| screen.cells(scrollback))
    }

    /// The job's screen (a handle to read it by after letting the job's lock go: see
    /// `screen.rs`); `None` for a pipes job.
    pub fn screen(&self) -> Option<Screen> {
        self.screen.clone()
    }

    /// The screen, if `ingest` queued a batch for it since the last call: the caller
    /// emulates it (`Screen::flush`) once it has let the job's lock go.
    pub fn take_screen_due(&mut self) -> Option<Screen> {
        if std::mem::take(&mut self.screen_due) {
            self.screen.clone()
        } else {
            None
        }
    }

    fn log(&self, which: Which) -> Option<&TextLog> {
        match which {
            Which::Stdout => Some(&self.stdout),
            Which::Stderr => self.stderr.as_ref(),
            Which::Combined => Some(self.combined.as_ref().unwrap_or(&self.stdout)),
        }
    }

    /// At most `limit` bytes of one log, head and tail, with a marker naming the file
    /// that holds all of it, if one does.
    pub fn excerpt(&self, which: Which, limit: usize) -> Excerpt {
        let path = self.whole_in(which);
        match self.log(which) {
            Some(log) => log.excerpt(limit, path.as_deref()),
            None => Excerpt {
                text: String::new(),
                truncated: false,
            },
        }
    }

    /// Bytes of combined text so far (a cursor for "output not yet returned").
    pub fn text_len(&self) -> u64 {
        self.log(Which::Combined).map_or(0, TextLog::len)
    }

    /// Bytes of combined text committed: final, in the log and handed to the files
    /// (for a PTY job, byte for byte what `stdout.txt` gets). It never shrinks.
    pub fn committed_len(&self) -> u64 {
        self.log(Which::Combined).map_or(0, TextLog::committed_len)
    }

    /// The combined text that may still change: the screen window's lines (PTY jobs)
    /// and the line being written. `text_len()` is `committed_len()` plus its length.
    pub fn pending_text(&self) -> String {
        self.log(Which::Combined)
            .map(|l| l.assembler.pending().into_owned())
            .unwrap_or_default()
    }

    /// The committed combined text, for `read::Committed::plan`. The file serves reads
    /// of the middle only where it holds exactly that text: PTY jobs, and pipes jobs
    /// that have written nothing to stderr (their combined text is their stdout).
    pub fn committed(&self) -> Committed<'_> {
        let Some(log) = self.log(Which::Combined) else {
            return Committed {
                head: "",
                omitted: 0,
                tail: "",
                file: None,
            };
        };
        let stdout_only = self.stderr.as_ref().is_none_or(|e| e.len() == 0);
        let file = self
            .files
            .as_ref()
            .filter(|_| stdout_only)
            .map(|f| (f.stdout_path(), f.stdout_text_len()));
        Committed {
            head: as_str(log.log.head()),
            omitted: log.log.omitted(),
            tail: as_str(log.log.tail()),
            file,
        }
    }

    pub fn text_since(&self, offset: u64) -> String {
        self.log(Which::Combined).map(|l| l.since(offset)).unwrap_or_default()
    }

    pub fn last_line(&self) -> String {
        self.log(Which::Combined).map(TextLog::last_line).unwrap_or_default()
    }

    /// The bytes as written, with their stream (`raw_stream`).
    pub fn raw_stream(&self) -> &RawStream {
        self.raw.stream()
    }

    /// Bytes the process wrote, all streams.
    pub fn total_bytes(&self) -> u64 {
        self.raw.total()
    }

    pub fn view(&self, view: View, tail_bytes: Option<usize>) -> String {
        let full = match view {
            View::Text => self.log(Which::Combined).map(TextLog::render).unwrap_or_default(),
            View::Screen => match self.screen.as_ref() {
                Some(screen) => screen.contents(),
                None => self.log(Which::Combined).map(TextLog::render).unwrap_or_default(),
            },
            View::Raw => {
                let (head, omitted, tail) = self.raw.view();
                let mut bytes = head.to_vec();
                if omitted > 0 {
                    bytes.extend_from_slice(format!("\n[... {omitted} bytes omitted ...]\n").as_bytes());
                }
                bytes.extend_from_slice(&tail);
                String::from_utf8_lossy(&bytes).into_owned()
            }
        };
        tail_of(full, tail_bytes)
    }
}

/// A view's last `tail_bytes` (whole characters), or all of it.
pub fn tail_of(full: String, tail_bytes: Option<usize>) -> String {
    match tail_bytes {
        Some(n) => last_bytes(&full, n).to_string(),
        None => full,
    }
}

#[cfg(test)]
mod tests;
