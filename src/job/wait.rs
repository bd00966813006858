//! Waiting on a job's output: a regex, a delay, a timeout or the exit, whichever comes
//! first — driven by the reader, never by polling.
//!
//! A waiter sees only text produced after it was registered (its own line
//! assembler starts empty), so a prompt already on screen cannot satisfy a new wait.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use regex::{Regex, RegexBuilder};

use crate::base::error::{ErrorCode, Result, ServiceError};
use crate::base::sync::lock;
use crate::output::bounded::excerpt;
use crate::output::line::LineAssembler;

/// A pattern may match text spanning up to this many bytes before the newest chunk;
/// prompts and "listening on" lines are far shorter. It bounds the work per chunk.
const MATCH_OVERLAP: usize = 64 * 1024;
/// A waiter keeps at most this much text; older text is dropped and counted.
const WAITER_TEXT_CAP: usize = 1024 * 1024;
const WAITER_TEXT_KEEP: usize = 256 * 1024;
/// Compiled-size limit for caller patterns, so a pathological regex is refused
/// instead of eating memory.
const PATTERN_SIZE_LIMIT: usize = 1 << 20;
pub const MAX_PATTERN_LEN: usize = 4096;

/// A compiled caller pattern, shared: clones of a `Regex` each build their search cache
/// anew, while one shared `Regex` keeps its lazily built automaton across waits.
pub type Pattern = Arc<Regex>;

pub fn compile_pattern(pattern: &str) -> Result<Pattern> {
    if pattern.is_empty() {
        return Err(ServiceError::new(ErrorCode::InvalidPattern, "pattern is empty"));
    }
    if pattern.len() > MAX_PATTERN_LEN {
        return Err(ServiceError::new(
            ErrorCode::InvalidPattern,
            format!(
                "pattern is {} bytes; at most {MAX_PATTERN_LEN} are accepted",
                pattern.len()
            ),
        ));
    }
    if let Some(known) = recent_pattern(pattern) {
        return Ok(known);
    }
    let compiled = RegexBuilder::new(pattern)
        .size_limit(PATTERN_SIZE_LIMIT)
        .dfa_size_limit(PATTERN_SIZE_LIMIT)
        .build()
        .map(Arc::new)
        .map_err(|e| ServiceError::new(ErrorCode::InvalidPattern, format!("invalid pattern {pattern:?}: {e}")))?;
    remember_pattern(pattern, &compiled);
    Ok(compiled)
}

/// Patterns compiled lately, newest first. An agent waits for the same few prompts
/// over and over (`>>> $`, `\(gdb\) $`); compiling one costs about 9 µs on the
/// caller's (the JS) thread, which the cache saves on every `sendInput`.
const RECENT_PATTERNS: usize = 16;
static RECENT: Mutex<Vec<(String, Pattern)>> = Mutex::new(Vec::new());

fn recent_pattern(pattern: &str) -> Option<Pattern> {
    let mut recent = lock(&RECENT);
    let at = recent.iter().position(|(p, _)| p == pattern)?;
    let entry = recent.remove(at);
    let regex = entry.1.clone();
    recent.insert(0, entry);
    Some(regex)
}

fn remember_pattern(pattern: &str, regex: &Pattern) {
    let mut recent = lock(&RECENT);
    recent.truncate(RECENT_PATTERNS - 1);
    recent.insert(0, (pattern.to_string(), regex.clone()));
}

#[derive(Clone, Debug, Default)]
pub struct WaitSpec {
    pub pattern: Option<Pattern>,
    pub delay: Option<Duration>,
    pub timeout: Option<Duration>,
    pub max_output: usize,
    /// Also end the wait when the job waits for input at its terminal (PTY jobs).
    pub detect_input: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitStatus {
    Matched,
    Exited,
    DelayElapsed,
    TimedOut,
    /// The job's foreground program is blocked reading its terminal (see `input_wait`).
    AwaitingInput,
}

impl WaitStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Matched => "matched",
            Self::Exited => "exited",
            Self::DelayElapsed => "delay_elapsed",
            Self::TimedOut => "timed_out",
            Self::AwaitingInput => "awaiting_input",
        }
    }
}

#[derive(Clone, Debug)]
pub struct WaitOutcome {
    pub status: WaitStatus,
    /// Text that arrived during the wait, head + tail bounded.
    pub output: String,
    pub matched: Option<String>,
    pub truncated: bool,
}

/// A registered waiter, owned by the job's state and fed by its reader.
pub struct Waiter {
    pub id: u64,
    pattern: Option<Pattern>,
    assembler: LineAssembler,
    text: String,
    dropped: u64,
    scanned: usize,
    pub matched: Option<String>,
    pub exited: bool,
    /// Set when the wait starts: its output limit and who is told how it ended.
    done: Option<(usize, OnWaitDone)>,
}

/// Called once with a started wait's outcome, off the job's lock (see `job/waiting.rs`).
pub type OnWaitDone = Box<dyn FnOnce(WaitOutcome) + Send>;

impl Waiter {
    pub fn new(id: u64, pattern: Option<Pattern>) -> Self {
        Self {
            id,
            pattern,
            assembler: LineAssembler::default(),
            text: String::new(),
            dropped: 0,
            scanned: 0,
            matched: None,
            exited: false,
            done: None,
        }
    }

    pub fn on_done(&mut self, max_output: usize, done: OnWaitDone) {
        self.done = Some((max_output, done));
    }

    pub fn started(&self) -> bool {
        self.done.is_some()
    }

    pub fn take_done(&mut self) -> Option<(usize, OnWaitDone)> {
        self.done.take()
    }

    pub fn is_done(&self) -> bool {
        self.matched.is_some() || self.exited
    }

    /// Takes clean text from the reader; wakes the waiting call on a match.
    pub fn feed(&mut self, clean: &str) {
        if self.is_done() || clean.is_empty() {
            return;
        }
        self.assembler.feed(clean, &mut self.text);
        self.compact();
        let Some(pattern) = self.pattern.as_ref() else { return };
        let mut from = self.scanned.saturating_sub(MATCH_OVERLAP);
        while !self.text.is_char_boundary(from) {
            from -= 1;
        }
        // The line being written (a prompt has no newline yet) joins the haystack for
        // this search only.
        let committed = self.text.len();
        self.text.push_str(self.assembler.current_line());
        if let Some(m) = pattern.find_at(&self.text, from) {
            self.matched = Some(m.as_str().to_string());
        }
        self.text.truncate(committed);
        self.scanned = committed;
    }

    pub fn mark_exited(&mut self) {
        self.exited = true;
    }

    fn compact(&mut self) {
        if self.text.len() <= WAITER_TEXT_CAP {
            return;
        }
        let mut cut = self.text.len() - WAITER_TEXT_KEEP;
        while !self.text.is_char_boundary(cut) {
            cut += 1;
        }
        self.text.drain(..cut);
        self.dropped += cut as u64;
        self.scanned = self.scanned.saturating_sub(cut);
    }

    /// The waiter's text as a result: head + tail within `limit` bytes.
    pub fn output(&self, limit: usize) -> (String, bool) {
        let mut tail = String::with_capacity(self.text.len() + 80);
        tail.push_str(&self.text);
        tail.push_str(self.assembler.current_line());
        let e = excerpt("", self.dropped, &tail, limit, None);
        (e.text, e.truncated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_prompt_without_newline() {
        let mut w = Waiter::new(1, Some(compile_pattern(">>> $").unwrap()));
        w.feed("print(1)\n1\n");
        assert!(w.matched.is_none());
        w.feed(">>> ");
        assert_eq!(w.matched.as_deref(), Some(">>> "));
        assert_eq!(w.output(100).0, "print(1)\n1\n>>> ");
    }

    #[test]
    fn match_across_chunks() {
        let mut w = Waiter::new(1, Some(compile_pattern("Serving HTTP on").unwrap()));
        w.feed("Serv");
        w.feed("ing HT");
        assert!(w.matched.is_none());
        w.feed("TP on 0.0.0.0\n");
        assert!(w.matched.is_some());
    }

    #[test]
    fn a_pattern_from_the_cache_matches_as_a_fresh_one() {
        let first = compile_pattern(r"\(gdb\) $").unwrap();
        let again = compile_pattern(r"\(gdb\) $").unwrap();
        assert!(first.is_match("(gdb) ") && again.is_match("(gdb) "));
        assert!(!again.is_match("gdb"));
        // Evicted by newer patterns, it compiles again, the same.
        for i in 0..RECENT_PATTERNS + 2 {
            compile_pattern(&format!("filler{i}")).unwrap();
        }
        assert!(compile_pattern(r"\(gdb\) $").unwrap().is_match("(gdb) "));
        assert!(lock(&RECENT).len() <= RECENT_PATTERNS);
        // A bad pattern is refused every time, never remembered.
        assert!(compile_pattern("(").is_err() && compile_pattern("(").is_err());
    }

    #[test]
    fn rejects_bad_patterns() {
        assert_eq!(compile_pattern("(").unwrap_err().code, ErrorCode::InvalidPattern);
        assert_eq!(compile_pattern("").unwrap_err().code, ErrorCode::InvalidPattern);
        assert_eq!(
            compile_pattern("a{1000}{1000}").unwrap_err().code,
            ErrorCode::InvalidPattern
        );
    }

    #[test]
    fn flood_stays_bounded() {
        let mut w = Waiter::new(1, Some(compile_pattern("NEVER").unwrap()));
        let chunk = "y\n".repeat(32 * 1024);
        for _ in 0..100 {
            w.feed(&chunk);
        }
        assert!(w.text.len() <= WAITER_TEXT_CAP);
        let (out, truncated) = w.output(1000);
        assert!(truncated && out.len() < 1200);
    }
}
