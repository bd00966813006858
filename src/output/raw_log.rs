//! The bytes a job wrote as they came, in memory: the raw view's head and tail
//! (`View::Raw`) and, for a service that keeps it, the raw stream with each byte's
//! stream (src/output/raw_stream.rs). A job that keeps its stream holds its last bytes
//! there already, more of them than the view's tail: its view takes the tail from the
//! stream and keeps only a head of its own, so those bytes are held once, not twice.

use std::borrow::Cow;

use super::bounded::HeadTail;
use super::persist::Stream;
use super::raw_stream::RawStream;

/// Where the view's bytes are kept.
enum View {
    /// A head and a tail of its own: the stream keeps fewer bytes than the tail needs
    /// (none, unless a service keeps streams).
    Own(HeadTail),
    /// The first `head_cap` bytes; the tail is the stream's last `tail_cap` bytes
    /// after them.
    Head {
        head: Vec<u8>,
        head_cap: usize,
        tail_cap: usize,
    },
}

pub struct RawLog {
    stream: RawStream,
    view: View,
}

impl RawLog {
    /// The view keeps `head_cap` bytes at the start and `tail_cap` at the end; the
    /// stream the last `stream_cap` (0: none).
    pub fn new(head_cap: usize, tail_cap: usize, stream_cap: usize) -> Self {
        let view = if stream_cap >= tail_cap {
            View::Head {
                head: Vec::new(),
                head_cap,
                tail_cap,
            }
        } else {
            View::Own(HeadTail::new(head_cap, tail_cap, false))
        };
        Self {
            stream: RawStream::new(stream_cap),
            view,
        }
    }

    pub fn push(&mut self, stream: Stream, bytes: &[u8]) {
        match &mut self.view {
            View::Own(log) => log.push(bytes),
            View::Head { head, head_cap, .. } => {
                let room = head_cap.saturating_sub(head.len()).min(bytes.len());
                head.extend_from_slice(&bytes[..room]);
            }
        }
        self.stream.push(stream, bytes);
    }

    /// Written out for a snapshot (src/output/snapshot.rs).
    pub(super) fn save(&self, w: &mut super::snapshot_bytes::Writer) {
        self.stream.save(w);
        match &self.view {
            View::Own(log) => {
                w.bool(false);
                log.save(w);
            }
            View::Head {
                head,
                head_cap,
                tail_cap,
            } => {
                w.bool(true);
                w.bytes(head);
                w.usize(*head_cap);
                w.usize(*tail_cap);
            }
        }
    }

    /// What `save` wrote.
    pub(super) fn load(r: &mut super::snapshot_bytes::Reader<'_>) -> Result<Self, String> {
        let stream = RawStream::load(r)?;
        let view = if r.bool()? {
            View::Head {
                head: r.bytes()?,
                head_cap: r.usize()?,
                tail_cap: r.usize()?,
            }
        } else {
            View::Own(HeadTail::load(r)?)
        };
        Ok(Self { stream, view })
    }

    /// The bytes with their stream (`raw_stream`).
    pub fn stream(&self) -> &RawStream {
        &self.stream
    }

    /// Bytes written in all, every stream.
    pub fn total(&self) -> u64 {
        self.stream.total()
    }

    /// The head, how many bytes lie between it and the tail (not kept), and the tail.
    pub fn view(&self) -> (&[u8], u64, Cow<'_, [u8]>) {
        match &self.view {
            View::Own(log) => (log.head(), log.omitted(), Cow::Borrowed(log.tail())),
            View::Head { head, tail_cap, .. } => {
                let after_head = head.len() as u64;
                let from = after_head.max(self.total().saturating_sub(*tail_cap as u64));
                // The stream holds at least its cap's worth of the last bytes, and its
                // cap is at least `tail_cap`: nothing from `from` on has been dropped.
                let read = self.stream.read(from, *tail_cap);
                let tail = read.pieces.into_iter().flat_map(|(_, bytes)| bytes).collect();
                (head, from - after_head + read.omitted, Cow::Owned(tail))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(log: &RawLog) -> (String, u64, String) {
        let (head, omitted, tail) = log.view();
        (
            String::from_utf8(head.to_vec()).unwrap(),
            omitted,
            String::from_utf8(tail.into_owned()).unwrap(),
        )
    }

    #[test]
    fn the_tail_comes_from_the_stream_when_it_keeps_enough() {
        let mut log = RawLog::new(3, 4, 6);
        assert!(matches!(log.view, View::Head { .. }));
        log.push(Stream::Stdout, b"ab");
        assert_eq!(all(&log), ("ab".into(), 0, "".into()));
        log.push(Stream::Stderr, b"cdef");
        assert_eq!(all(&log), ("abc".into(), 0, "def".into()));
        log.push(Stream::Stdout, b"ghijkl");
        assert_eq!(all(&log), ("abc".into(), 5, "ijkl".into()));
        assert_eq!(log.total(), 12);
        // The stream keeps its own, longer tail, streams apart.
        assert_eq!(log.stream().read(0, 100).omitted, 6);
    }

    #[test]
    fn without_a_stream_the_view_keeps_its_own_tail() {
        let mut log = RawLog::new(2, 3, 0);
        assert!(matches!(log.view, View::Own(_)));
        log.push(Stream::Stdout, b"0123456789");
        let (head, omitted, tail) = all(&log);
        assert_eq!(head, "01");
        assert!(tail.len() >= 3 && "0123456789".ends_with(&tail));
        assert_eq!(2 + omitted + tail.len() as u64, 10);
        assert_eq!(log.total(), 10);
        assert!(log.stream().read(0, 100).pieces.is_empty());
    }
}
