//! Incremental reads of a job's committed text by byte offset (`read_output`).
//!
//! Committed text only grows at its end, so a byte offset into it names the same text
//! forever: a reader that passes back the `next` it was given reads every line exactly
//! once. Memory holds the head and the tail of the text (see `bounded::HeadTail`); the
//! middle that left memory is read back from the job's output file when the file holds
//! it, and only what neither holds is counted in `omitted`.
//!
//! A read is planned under the job's lock (copying at most `max` bytes from memory)
//! and the file, if needed, is read after the lock is let go, so a reader never makes
//! the job's output wait on the disk.
//!
//! The file can hold less than it was given (it was removed or cut under the job):
//! `execute` then says where its text ends, the caller lowers what the file is known
//! to hold (`JobFiles::text_ends_at`) and plans again, and the part neither memory nor
//! the file holds becomes a gap: a read never comes back empty before the end.

use std::fs::File;
use std::io;
#[cfg(unix)]
use std::os::unix::fs::FileExt;
#[cfg(windows)]
use std::os::windows::fs::FileExt;
use std::path::PathBuf;

use crate::base::error::{Result, ServiceError};

/// Bytes a read returns when the caller names no limit.
pub const DEFAULT_READ_BYTES: usize = 1024 * 1024;
/// The most a single read returns.
pub const MAX_READ_BYTES: usize = 16 * 1024 * 1024;

/// What one read returns. Omitted bytes, if any, come first: a chunk is a gap (what
/// is lost) followed by text, never text on both sides of a gap, so a reader knows
/// where the loss was.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputChunk {
    pub text: String,
    /// The offset to pass as `since` next time.
    pub next: u64,
    /// Bytes from `since` on, before `text`, that neither memory nor the file still holds.
    pub omitted: u64,
}

/// The committed text as it stands: memory's head and tail around the omitted middle,
/// and the file that holds the text from offset 0, if there is one.
pub struct Committed<'a> {
    pub head: &'a str,
    pub omitted: u64,
    pub tail: &'a str,
    /// The file and how many bytes of the committed text it holds.
    pub file: Option<(PathBuf, u64)>,
}

enum Piece {
    Text(String),
    /// `len` bytes from `offset`, cut back to a character boundary; up to `3` more are
    /// read so that a character cut by `len` can be seen whole (taken only if nothing
    /// else would be), and `available` bounds them.
    File {
        path: PathBuf,
        offset: u64,
        len: usize,
        available: u64,
    },
    Gap(u64),
}

/// A read decided under the lock; [`ReadPlan::execute`] finishes it.
pub struct ReadPlan {
    since: u64,
    pieces: Vec<Piece>,
}

impl Committed<'_> {
    pub fn len(&self) -> u64 {
        self.head.len() as u64 + self.omitted + self.tail.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Plans the read of at most `max` bytes (at least one whole character) from `since`.
    pub fn plan(&self, since: u64, max: usize) -> Result<ReadPlan> {
        let total = self.len();
        if since > total {
            return Err(ServiceError::invalid(format!(
                "since {since} is past the end of the committed text ({total} bytes)"
            )));
        }
        let head_len = self.head.len() as u64;
        let tail_start = head_len + self.omitted;
        // A `since` inside a character would read nothing and never move on; in the
        // file it would also look like a file cut short (see `execute`). Memory's
        // parts are checked here, the file's where it is read.
        let inside = (since < head_len && !self.head.is_char_boundary(since as usize))
            || (since > tail_start && !self.tail.is_char_boundary((since - tail_start) as usize));
        if inside {
            return Err(not_a_boundary(since));
        }
        let mut pieces = Vec::new();
        let (mut pos, mut budget) = (since, max.max(1));
        if pos < head_len {
            let text = take(self.head, pos as usize, budget);
            pos += text.len() as u64;
            budget = budget.saturating_sub(text.len());
            pieces.push(Piece::Text(text.to_string()));
        }
        if budget > 0 && pos >= head_len && pos < tail_start {
            let in_file = match &self.file {
                Some((_, file_len)) => file_len.saturating_sub(pos).min(tail_start - pos),
                None => 0,
            };
            if in_file > 0 {
                let len = in_file.min(budget as u64) as usize;
                if let Some((path, _)) = &self.file {
                    pieces.push(Piece::File {
                        path: path.clone(),
                        offset: pos,
                        len,
                        available: in_file,
                    });
                }
                pos += len as u64;
                budget -= len;
            }
            if budget > 0 && pos < tail_start {
                if !pieces.is_empty() {
                    // A gap only ever opens a chunk: the text before it is returned
                    // now, and the next read starts at the gap (see `OutputChunk`).
                    return Ok(ReadPlan { since, pieces });
                }
                // The file ends (its cap, or no file) before memory's tail begins.
                pieces.push(Piece::Gap(tail_start - pos));
                pos = tail_start;
            }
        }
        if budget > 0 && pos >= tail_start && pos < total {
            let text = take(self.tail, (pos - tail_start) as usize, budget);
            pieces.push(Piece::Text(text.to_string()));
        }
        Ok(ReadPlan { since, pieces })
    }
}

impl ReadPlan {
    /// Whether the plan reads from the job's file (not only from memory).
    pub fn reads_file(&self) -> bool {
        self.pieces.iter().any(|piece| matches!(piece, Piece::File { .. }))
    }

    /// Reads what the plan takes from the file and joins the pieces. A file read that
    /// comes back short (or cut inside a character) ends the chunk there: the next
    /// read resumes at the first byte not returned. When the file held less than
    /// planned, the offset where its text ends comes back too.
    ///
    /// A `since` inside a character of the file's part is refused here (`INVALID_ARGUMENT`):
    /// the file is read only now, outside the job's lock.
    pub fn execute(self) -> Result<(OutputChunk, Option<u64>)> {
        let mut chunk = OutputChunk {
            text: String::new(),
            next: self.since,
            omitted: 0,
        };
        for piece in self.pieces {
            match piece {
                Piece::Text(text) => {
                    chunk.next += text.len() as u64;
                    chunk.text.push_str(&text);
                }
                Piece::Gap(bytes) => {
                    chunk.next += bytes;
                    chunk.omitted += bytes;
                }
                Piece::File {
                    path,
                    offset,
                    len,
                    available,
                } => {
                    let wanted = (len as u64 + 3).min(available) as usize;
                    // A file that cannot be opened any more holds nothing.
                    let read = read_text_at(&path, offset, wanted).unwrap_or_default();
                    if offset == self.since && read.starts_inside {
                        return Err(not_a_boundary(offset));
                    }
                    let text = take(&read.text, 0, len);
                    let whole = text.len() >= len;
                    chunk.next += text.len() as u64;
                    chunk.text.push_str(text);
                    if read.bytes < wanted {
                        return Ok((chunk, Some(offset + read.bytes as u64)));
                    }
                    if !whole {
                        break;
                    }
                }
            }
        }
        Ok((chunk, None))
    }
}

fn not_a_boundary(since: u64) -> ServiceError {
    ServiceError::invalid(format!(
        "since {since} is inside a character: pass a `next` or `textLength` seen before"
    ))
}

/// At most `budget` bytes of `text` from `from`, cut on a character boundary; at least
/// one character, so a reader always moves on.
fn take(text: &str, from: usize, budget: usize) -> &str {
    let rest = text.get(from..).unwrap_or("");
    if rest.len() <= budget {
        return rest;
    }
    let mut end = budget;
    while end > 0 && !rest.is_char_boundary(end) {
        end -= 1;
    }
    if end == 0 {
        end = rest.char_indices().nth(1).map_or(rest.len(), |(i, _)| i);
    }
    &rest[..end]
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    file.read_at(buf, offset)
}

/// Windows reads at an offset by moving the file's position, which is fine: the file
/// was opened for this one read.
#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    file.seek_read(buf, offset)
}

/// What [`read_text_at`] found.
#[derive(Default)]
struct FileText {
    /// The whole UTF-8 characters read.
    text: String,
    /// Bytes the file gave (fewer than asked: it ends there).
    bytes: usize,
    /// The first byte continues a character: `offset` was inside one.
    starts_inside: bool,
}

/// `len` bytes of the file at `offset`, as far as they are whole UTF-8 characters.
fn read_text_at(path: &PathBuf, offset: u64, len: usize) -> io::Result<FileText> {
    let file = File::open(path)?;
    let mut buf = vec![0u8; len];
    let mut filled = 0;
    while filled < len {
        match read_at(&file, &mut buf[filled..], offset + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(filled);
    // 0b10xx_xxxx is only ever the second to fourth byte of a character.
    let starts_inside = buf.first().is_some_and(|b| b & 0xC0 == 0x80);
    let text = match String::from_utf8(buf) {
        Ok(text) => text,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
    };
    Ok(FileText {
        text,
        bytes: filled,
        starts_inside,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(c: &Committed<'_>, since: u64, max: usize) -> OutputChunk {
        match c.plan(since, max).and_then(ReadPlan::execute) {
            Ok((chunk, _)) => chunk,
            Err(e) => panic!("read failed: {e}"),
        }
    }

    /// Reads everything in steps of `step` bytes.
    fn read_all(c: &Committed<'_>, step: usize) -> OutputChunk {
        let mut all = OutputChunk::default();
        loop {
            let chunk = read(c, all.next, step);
            if chunk.next == all.next {
                return all;
            }
            all.text.push_str(&chunk.text);
            all.omitted += chunk.omitted;
            all.next = chunk.next;
        }
    }

    #[test]
    fn a_gap_only_ever_opens_a_chunk() {
        let c = Committed {
            head: "one\n",
            omitted: 100,
            tail: "last\n",
            file: None,
        };
        assert_eq!(
            read(&c, 0, 1000),
            OutputChunk {
                text: "one\n".into(),
                next: 4,
                omitted: 0
            }
        );
        assert_eq!(
            read(&c, 4, 1000),
            OutputChunk {
                text: "last\n".into(),
                next: 109,
                omitted: 100
            }
        );
    }

    #[test]
    fn memory_only_counts_the_middle_as_omitted() {
        let c = Committed {
            head: "one\ntwo\n",
            omitted: 100,
            tail: "last\n",
            file: None,
        };
        for step in [1, 3, 7, 1000] {
            let all = read_all(&c, step);
            assert_eq!(all.text, "one\ntwo\nlast\n", "step {step}");
            assert_eq!(all.omitted, 100);
            assert_eq!(all.next, c.len());
        }
    }

    #[test]
    fn the_file_fills_the_middle() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stdout.txt");
        let whole = "héad\nmiddle ü line\nmore middle\ntail €\n";
        std::fs::write(&path, whole).unwrap();
        let (head, tail) = (&whole[..6], &whole[32..]);
        let c = Committed {
            head,
            omitted: (whole.len() - head.len() - tail.len()) as u64,
            tail,
            file: Some((path.clone(), whole.len() as u64)),
        };
        for step in [1, 2, 5, 64] {
            let all = read_all(&c, step);
            assert_eq!(all.text, whole, "step {step}");
            assert_eq!(all.omitted, 0);
        }
        // A file that stops early (its cap): the rest of the middle is omitted.
        let capped = Committed {
            file: Some((path, 10)),
            ..c
        };
        let all = read_all(&capped, 4);
        assert_eq!(all.text, format!("{}{}", &whole[..10], tail));
        assert_eq!(all.omitted, (whole.len() - 10 - tail.len()) as u64);
    }

    #[test]
    fn a_file_that_holds_less_than_planned_says_where_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stdout.txt");
        let whole = "head\nmiddle one\nmiddle two\ntail\n";
        std::fs::write(&path, &whole[..10]).unwrap();
        let c = Committed {
            head: &whole[..5],
            omitted: (whole.len() - 10) as u64,
            tail: &whole[whole.len() - 5..],
            file: Some((path.clone(), (whole.len() - 5) as u64)),
        };
        // Cut at 10: the text up to there, and where the file ends.
        let (chunk, short) = c.plan(5, 100).unwrap().execute().unwrap();
        assert_eq!((chunk.text.as_str(), chunk.next, short), ("middl", 10, Some(10)));
        // Gone: nothing from it, the same offset (the caller plans again with less).
        std::fs::remove_file(&path).unwrap();
        let (chunk, short) = c.plan(10, 100).unwrap().execute().unwrap();
        assert_eq!((chunk.text.as_str(), chunk.next, short), ("", 10, Some(10)));
        // Told the file holds 10 bytes, the rest of the middle is a gap before the tail.
        let lowered = Committed {
            file: Some((path, 10)),
            ..c
        };
        let chunk = read(&lowered, 10, 100);
        assert_eq!(
            (chunk.text.as_str(), chunk.omitted, chunk.next),
            ("tail\n", 17, lowered.len())
        );
    }

    #[test]
    fn a_small_budget_still_moves_by_a_whole_character() {
        let c = Committed {
            head: "€x",
            omitted: 0,
            tail: "",
            file: None,
        };
        let chunk = read(&c, 0, 1);
        assert_eq!((chunk.text.as_str(), chunk.next), ("€", 3));
    }

    #[test]
    fn since_inside_a_character_is_refused_wherever_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stdout.txt");
        let whole = "é1\nmiddle ü\ntail €\n";
        std::fs::write(&path, whole).unwrap();
        let (head, tail) = (&whole[..4], &whole[14..]);
        let c = Committed {
            head,
            omitted: (whole.len() - head.len() - tail.len()) as u64,
            tail,
            file: Some((path, whole.len() as u64)),
        };
        // In memory's head (é), the file's middle (ü) and memory's tail (€).
        for since in [1, 12, 20] {
            let refused = c.plan(since, 100).and_then(ReadPlan::execute);
            match refused {
                Err(e) => assert_eq!(e.code, crate::base::error::ErrorCode::InvalidArgument, "since {since}"),
                Ok((chunk, short)) => panic!("since {since} read {chunk:?}, short {short:?}"),
            }
        }
        // The boundaries next to them read on.
        for since in [2, 11, 13, 19, 22] {
            let (chunk, short) = c.plan(since, 100).and_then(ReadPlan::execute).unwrap();
            assert!(chunk.next > since && short.is_none(), "since {since}: {chunk:?}");
        }
    }

    #[test]
    fn since_past_the_end_is_refused() {
        let c = Committed {
            head: "abc",
            omitted: 0,
            tail: "",
            file: None,
        };
        assert!(c.plan(4, 10).is_err());
        assert_eq!(
            read(&c, 3, 10),
            OutputChunk {
                text: String::new(),
                next: 3,
                omitted: 0
            }
        );
    }
}
