//! Everything a job writes, in the three views a reader asks for:
//! - `text`: what a person reads (ANSI removed, redraws collapsed), head + tail bounded;
//! - `screen`: the emulated terminal (PTY jobs only);
//! - `raw`: the bytes as written, head + tail bounded.
//!
//! Each read of the job goes through [`JobOutput::ingest`] exactly once; the clean
//! text it returns is what pattern waiters see.

pub mod bounded;
pub mod decode;
pub mod line;
pub mod persist;
pub mod screen;
#[cfg(test)]
mod test_rng;

use std::borrow::Cow;

use bounded::{excerpt, last_bytes, Excerpt, HeadTail};
use decode::Decoder;
use line::LineAssembler;
use persist::{JobFiles, Stream};
use screen::Screen;

/// Memory bounds of one job's output.
#[derive(Clone, Copy, Debug)]
pub struct OutputLimits {
    pub text_head: usize,
    pub text_tail: usize,
    pub raw_head: usize,
    pub raw_tail: usize,
}

impl Default for OutputLimits {
    fn default() -> Self {
        Self {
            text_head: 64 * 1024,
            text_tail: 512 * 1024,
            raw_head: 16 * 1024,
            raw_tail: 256 * 1024,
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

/// One stream's readable text: the line being written and the bounded log of lines.
struct TextLog {
    assembler: LineAssembler,
    log: HeadTail,
    committed: String,
}

impl TextLog {
    fn new(limits: &OutputLimits) -> Self {
        Self {
            assembler: LineAssembler::default(),
            log: HeadTail::new(limits.text_head, limits.text_tail, true),
            committed: String::new(),
        }
    }

    /// Feeds clean text; returns the lines it completed (valid until the next call).
    fn feed(&mut self, clean: &str) -> &str {
        self.committed.clear();
        self.assembler.feed(clean, &mut self.committed);
        self.log.push(self.committed.as_bytes());
        &self.committed
    }

    fn finish(&mut self) -> &str {
        self.committed.clear();
        self.assembler.finish(&mut self.committed);
        self.log.push(self.committed.as_bytes());
        &self.committed
    }

    /// Head, bytes omitted, and tail with the line being written. The tail (up to a
    /// MiB) is copied only when a line is being written; results read at the exit
    /// usually have none.
    fn parts(&self) -> (&str, u64, Cow<'_, str>) {
        let head = as_str(self.log.head());
        let tail = as_str(self.log.tail());
        let line = self.assembler.current_line();
        let tail = if line.is_empty() {
            Cow::Borrowed(tail)
        } else {
            Cow::Owned([tail, line].concat())
        };
        (head, self.log.omitted(), tail)
    }

    fn excerpt(&self, limit: usize, whole_in: Option<&str>) -> Excerpt {
        let (head, omitted, tail) = self.parts();
        excerpt(head, omitted, &tail, limit, whole_in)
    }

    fn render(&self) -> String {
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

    /// Bytes of text so far, counting the line being written.
    fn len(&self) -> u64 {
        self.log.total() + self.assembler.current_line().len() as u64
    }

    /// The text from byte `offset` of the stream on, as far as memory still holds it.
    fn since(&self, offset: u64) -> String {
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

    fn last_line(&self) -> String {
        let current = self.assembler.current_line().trim_end();
        if !current.is_empty() {
            return current.to_string();
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

fn floor(s: &str, mut at: usize) -> usize {
    while at > 0 && !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The logs only ever hold whole characters (see `HeadTail`'s `utf8` mode).
fn as_str(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or_default()
}

/// All output of one job.
pub struct JobOutput {
    stdout_decoder: Decoder,
    stderr_decoder: Decoder,
    stdout: TextLog,
    /// Present in pipes mode: stderr kept apart, and the two interleaved as they came.
    stderr: Option<TextLog>,
    combined: Option<TextLog>,
    raw: HeadTail,
    screen: Option<Screen>,
    files: Option<JobFiles>,
    clean: String,
}

impl JobOutput {
    /// `screen` is `Some((cols, rows))` for a PTY job. Files come later (`set_files`).
    pub fn new(limits: OutputLimits, separate_stderr: bool, screen: Option<(u16, u16)>) -> Self {
        Self {
            stdout_decoder: Decoder::new(),
            stderr_decoder: Decoder::new(),
            stdout: TextLog::new(&limits),
            stderr: separate_stderr.then(|| TextLog::new(&limits)),
            combined: separate_stderr.then(|| TextLog::new(&limits)),
            raw: HeadTail::new(limits.raw_head, limits.raw_tail, false),
            screen: screen.map(|(cols, rows)| Screen::new(cols, rows)),
            files: None,
            clean: String::new(),
        }
    }

    /// Takes one read's bytes; returns the clean text they carried (for waiters).
    pub fn ingest(&mut self, stream: Stream, bytes: &[u8]) -> &str {
        self.raw.push(bytes);
        if let Some(screen) = self.screen.as_mut() {
            screen.process(bytes);
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
        &self.clean
    }

    /// Commits the lines still being written (the process has ended).
    pub fn finish(&mut self) {
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
    pub fn set_files(&mut self, files: Option<JobFiles>) {
        self.files = files;
    }

    /// The output has ended for good: let go of the file descriptors.
    pub fn close_files(&mut self) {
        if let Some(files) = self.files.as_mut() {
            files.close();
        }
    }

    pub fn files(&self) -> Option<&JobFiles> {
        self.files.as_ref()
    }

    pub fn files_mut(&mut self) -> Option<&mut JobFiles> {
        self.files.as_mut()
    }

    pub fn resize(&mut self, cols: u16, rows: u16) {
        if let Some(screen) = self.screen.as_mut() {
            screen.resize(cols, rows);
        }
    }

    fn log(&self, which: Which) -> Option<&TextLog> {
        match which {
            Which::Stdout => Some(&self.stdout),
            Which::Stderr => self.stderr.as_ref(),
            Which::Combined => Some(self.combined.as_ref().unwrap_or(&self.stdout)),
        }
    }

    /// At most `limit` bytes of one log, head and tail, with a marker naming the file.
    pub fn excerpt(&self, which: Which, limit: usize) -> Excerpt {
        let path = self.files.as_ref().map(|f| f.stdout_path().display().to_string());
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

    pub fn text_since(&self, offset: u64) -> String {
        self.log(Which::Combined).map(|l| l.since(offset)).unwrap_or_default()
    }

    pub fn last_line(&self) -> String {
        self.log(Which::Combined).map(TextLog::last_line).unwrap_or_default()
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
                let mut bytes = self.raw.head().to_vec();
                if self.raw.omitted() > 0 {
                    bytes.extend_from_slice(format!("\n[... {} bytes omitted ...]\n", self.raw.omitted()).as_bytes());
                }
                bytes.extend_from_slice(self.raw.tail());
                String::from_utf8_lossy(&bytes).into_owned()
            }
        };
        match tail_bytes {
            Some(n) => last_bytes(&full, n).to_string(),
            None => full,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipes() -> JobOutput {
        JobOutput::new(OutputLimits::default(), true, None)
    }

    #[test]
    fn pipes_keep_streams_apart_and_together() {
        let mut o = pipes();
        o.ingest(Stream::Stdout, b"out1\n");
        o.ingest(Stream::Stderr, b"err1\n");
        o.ingest(Stream::Stdout, b"out2\n");
        assert_eq!(o.excerpt(Which::Stdout, 100).text, "out1\nout2\n");
        assert_eq!(o.excerpt(Which::Stderr, 100).text, "err1\n");
        assert_eq!(o.excerpt(Which::Combined, 100).text, "out1\nerr1\nout2\n");
    }

    #[test]
    fn views() {
        let mut o = JobOutput::new(OutputLimits::default(), false, Some((20, 4)));
        o.ingest(Stream::Stdout, b"\x1b[32mgreen\x1b[0m\r\n50%\r100%");
        assert_eq!(o.view(View::Text, None), "green\n100%");
        assert_eq!(o.view(View::Screen, None), "green\n100%");
        assert_eq!(o.view(View::Raw, None), "\x1b[32mgreen\x1b[0m\r\n50%\r100%");
        assert_eq!(o.view(View::Text, Some(4)), "100%");
        assert_eq!(o.last_line(), "100%");
    }

    #[test]
    fn text_since_returns_only_new_text() {
        let mut o = pipes();
        o.ingest(Stream::Stdout, b"old\n");
        let mark = o.text_len();
        o.ingest(Stream::Stdout, b"new\nprompt> ");
        assert_eq!(o.text_since(mark), "new\nprompt> ");
    }

    #[test]
    fn big_output_is_bounded_in_memory() {
        let limits = OutputLimits {
            text_head: 100,
            text_tail: 1000,
            raw_head: 10,
            raw_tail: 100,
        };
        let mut o = JobOutput::new(limits, false, None);
        for i in 0..100_000 {
            o.ingest(Stream::Stdout, format!("line {i}\n").as_bytes());
        }
        let e = o.excerpt(Which::Combined, 200);
        assert!(e.truncated);
        assert!(e.text.starts_with("line 0\n"));
        assert!(e.text.ends_with("line 99999\n"));
        assert!(o.view(View::Text, None).len() < 2500);
    }
    /// Throughput of the text pipeline (decoder + text log) on a `seq`-like flood as
    /// a PTY writes it (`\r\n` line ends), in 64 KiB reads:
    /// `cargo test --release --lib output::tests::bench_text_pipeline -- --ignored --nocapture`
    #[test]
    #[ignore = "measurement, not a check"]
    fn bench_text_pipeline() {
        let mut flood = Vec::new();
        let mut n = 0u64;
        while flood.len() < 64 << 20 {
            n += 1;
            flood.extend_from_slice(format!("{n}\r\n").as_bytes());
        }
        let mut best = f64::MAX;
        for _ in 0..5 {
            let mut decoder = Decoder::new();
            let mut log = TextLog::new(&OutputLimits::default());
            let mut clean = String::new();
            let mut written = 0usize;
            let started = std::time::Instant::now();
            for chunk in flood.chunks(64 * 1024) {
                clean.clear();
                decoder.decode(chunk, &mut clean);
                written += log.feed(&clean).len();
            }
            written += log.finish().len();
            let secs = started.elapsed().as_secs_f64();
            assert_eq!(written as u64, log.len());
            best = best.min(secs);
        }
        let mib = flood.len() as f64 / (1 << 20) as f64;
        println!("text pipeline: {:.0} MiB/s (best of 5, {mib:.0} MiB)", mib / best);
    }
}
