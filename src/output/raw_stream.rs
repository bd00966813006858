//! The bytes a job wrote, as they came and on which stream, for a reader that passes
//! them on as they arrive (the daemon's envd face, src/daemon/envd/, streams them as
//! E2B's data events). The text views lose what a terminal program needs (escapes) and
//! the raw view loses which stream a byte came on; this keeps both, for the last
//! [`RAW_STREAM_KEEP`] bytes. Offsets count every byte of every stream from the job's
//! start, so a reader resumes where it left off, or learns how much it missed.

use std::collections::VecDeque;

use super::persist::Stream;

/// Bytes kept for readers that fall behind or replay; older ones are dropped and
/// reported as `omitted`. Memory grows only with output: an idle job holds nothing.
pub const RAW_STREAM_KEEP: usize = 1024 * 1024;
/// Consecutive reads of one stream are merged into chunks up to this size, so a flood
/// of small reads does not cost a chunk each.
const MERGE_UP_TO: usize = 64 * 1024;

struct Chunk {
    offset: u64,
    stream: Stream,
    bytes: Vec<u8>,
}

pub struct RawStream {
    chunks: VecDeque<Chunk>,
    kept: usize,
    cap: usize,
    total: u64,
}

/// What a read returns: pieces in order, each with its stream.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RawRead {
    pub pieces: Vec<(Stream, Vec<u8>)>,
    /// The offset to read from next.
    pub next: u64,
    /// Bytes from the offset asked for that are no longer kept (skipped).
    pub omitted: u64,
}

impl RawStream {
    /// Keeps the last `cap` bytes; 0 keeps none (only the count of bytes goes on).
    pub fn new(cap: usize) -> Self {
        Self {
            chunks: VecDeque::new(),
            kept: 0,
            cap,
            total: 0,
        }
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn push(&mut self, stream: Stream, bytes: &[u8]) {
        if self.cap == 0 {
            self.total += bytes.len() as u64;
            return;
        }
        if bytes.is_empty() {
            return;
        }
        match self.chunks.back_mut() {
            // Never merged past the cap: a chunk goes only whole, so one larger than
            // the cap would keep up to `MERGE_UP_TO` where `cap` was asked.
            Some(last) if last.stream == stream && last.bytes.len() + bytes.len() <= MERGE_UP_TO.min(self.cap) => {
                last.bytes.extend_from_slice(bytes);
            }
            _ => self.chunks.push_back(Chunk {
                offset: self.total,
                stream,
                bytes: bytes.to_vec(),
            }),
        }
        self.total += bytes.len() as u64;
        self.kept += bytes.len();
        // Whole chunks go, oldest first, while the rest still holds `cap`.
        while let Some(front) = self.chunks.front() {
            if self.kept - front.bytes.len() < self.cap {
                break;
            }
            self.kept -= front.bytes.len();
            self.chunks.pop_front();
        }
    }

    /// Written out for a snapshot (src/output/snapshot.rs).
    pub(super) fn save(&self, w: &mut super::snapshot_bytes::Writer) {
        w.usize(self.cap);
        w.u64(self.total);
        w.usize(self.chunks.len());
        for chunk in &self.chunks {
            w.u64(chunk.offset);
            w.bool(chunk.stream == Stream::Stderr);
            w.bytes(&chunk.bytes);
        }
    }

    /// What `save` wrote, its chunks checked to lie in order and end at its total
    /// (`read` relies on both).
    pub(super) fn load(r: &mut super::snapshot_bytes::Reader<'_>) -> Result<Self, String> {
        let mut raw = Self::new(r.usize()?);
        raw.total = r.u64()?;
        let count = r.usize()?;
        let mut end = None;
        for _ in 0..count {
            let offset = r.u64()?;
            let stream = if r.bool()? { Stream::Stderr } else { Stream::Stdout };
            let bytes = r.bytes()?;
            if end.is_some_and(|end| end != offset) {
                return Err("its snapshot's raw stream has a gap".into());
            }
            let after = offset.checked_add(bytes.len() as u64);
            end = Some(after.ok_or("its snapshot's raw stream runs past the largest offset")?);
            raw.kept += bytes.len();
            raw.chunks.push_back(Chunk { offset, stream, bytes });
        }
        if end.is_some_and(|end| end != raw.total) {
            return Err("its snapshot's raw stream does not end at its total".into());
        }
        Ok(raw)
    }

    /// Up to `max` bytes from offset `since` (clamped to what exists).
    pub fn read(&self, since: u64, max: usize) -> RawRead {
        let since = since.min(self.total);
        let oldest = self.chunks.front().map_or(self.total, |c| c.offset);
        let start = since.max(oldest);
        let mut read = RawRead {
            pieces: Vec::new(),
            next: start,
            omitted: start - since,
        };
        let mut room = max;
        for chunk in &self.chunks {
            let end = chunk.offset + chunk.bytes.len() as u64;
            if end <= read.next || room == 0 {
                continue;
            }
            let from = (read.next - chunk.offset) as usize;
            let take = (chunk.bytes.len() - from).min(room);
            read.pieces
                .push((chunk.stream, chunk.bytes[from..from + take].to_vec()));
            read.next += take as u64;
            room -= take;
        }
        read
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_in_order_with_streams_and_resumes() {
        let mut raw = RawStream::new(100);
        raw.push(Stream::Stdout, b"ab");
        raw.push(Stream::Stdout, b"cd");
        raw.push(Stream::Stderr, b"EF");
        let all = raw.read(0, 100);
        assert_eq!(
            all.pieces,
            vec![(Stream::Stdout, b"abcd".to_vec()), (Stream::Stderr, b"EF".to_vec())]
        );
        assert_eq!((all.next, all.omitted), (6, 0));
        let part = raw.read(3, 2);
        assert_eq!(
            part.pieces,
            vec![(Stream::Stdout, b"d".to_vec()), (Stream::Stderr, b"E".to_vec())]
        );
        assert_eq!(part.next, 5);
        assert!(raw.read(6, 10).pieces.is_empty());
        assert_eq!(raw.read(99, 10).next, 6);
    }

    #[test]
    fn drops_the_oldest_and_says_how_much() {
        let mut raw = RawStream::new(4);
        raw.push(Stream::Stdout, b"0123");
        raw.push(Stream::Stderr, b"4567");
        raw.push(Stream::Stdout, b"89");
        let read = raw.read(0, 100);
        assert_eq!(read.omitted, 4);
        assert_eq!(
            read.pieces,
            vec![(Stream::Stderr, b"4567".to_vec()), (Stream::Stdout, b"89".to_vec())]
        );
        assert_eq!(read.next, 10);
    }

    #[test]
    fn a_stream_of_no_size_keeps_nothing_but_counts() {
        let mut raw = RawStream::new(0);
        raw.push(Stream::Stdout, b"abc");
        raw.push(Stream::Stderr, b"de");
        let read = raw.read(0, 100);
        assert!(read.pieces.is_empty());
        assert_eq!((raw.total(), read.next, read.omitted), (5, 5, 5));
    }
}
