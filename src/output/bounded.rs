//! Bounded memory for an unbounded stream: the first bytes and the last bytes are
//! kept, the middle is only counted. The disk file holds everything; memory holds
//! what a reader needs to see the start, the end and how much lies between.

/// A head + tail byte buffer. With `utf8`, cuts only fall on character boundaries, so
/// each part of a UTF-8 stream stays valid UTF-8.
pub struct HeadTail {
    head: Vec<u8>,
    tail: Vec<u8>,
    head_cap: usize,
    tail_cap: usize,
    head_closed: bool,
    total: u64,
    omitted: u64,
    utf8: bool,
}

impl HeadTail {
    pub fn new(head_cap: usize, tail_cap: usize, utf8: bool) -> Self {
        Self {
            head: Vec::new(),
            tail: Vec::new(),
            head_cap,
            tail_cap: tail_cap.max(1),
            head_closed: false,
            total: 0,
            omitted: 0,
            utf8,
        }
    }

    pub fn push(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        if !self.head_closed {
            let room = self.head_cap - self.head.len();
            if data.len() <= room {
                self.head.extend_from_slice(data);
                return;
            }
            let cut = self.boundary_at_or_before(data, room);
            self.head.extend_from_slice(&data[..cut]);
            data = &data[cut..];
            self.head_closed = true;
        }
        self.tail.extend_from_slice(data);
        // Trim only when the tail doubles, so the memmove is paid once per `tail_cap`
        // bytes: amortised O(1) per byte.
        if self.tail.len() > 2 * self.tail_cap {
            let excess = self.tail.len() - self.tail_cap;
            let drop = self.boundary_at_or_after(&self.tail, excess);
            self.tail.drain(..drop);
            self.omitted += drop as u64;
        }
    }

    pub fn head(&self) -> &[u8] {
        &self.head
    }

    pub fn tail(&self) -> &[u8] {
        &self.tail
    }

    /// Bytes pushed in all.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes dropped between head and tail.
    pub fn omitted(&self) -> u64 {
        self.omitted
    }

    /// Written out for a snapshot (src/output/snapshot.rs).
    pub(super) fn save(&self, w: &mut super::snapshot_bytes::Writer) {
        w.bytes(&self.head);
        w.bytes(&self.tail);
        w.usize(self.head_cap);
        w.usize(self.tail_cap);
        w.bool(self.head_closed);
        w.u64(self.total);
        w.u64(self.omitted);
        w.bool(self.utf8);
    }

    /// What `save` wrote. The caps are checked to hold what was kept, so pushes
    /// after it cannot underflow.
    pub(super) fn load(r: &mut super::snapshot_bytes::Reader<'_>) -> Result<Self, String> {
        let log = Self {
            head: r.bytes()?,
            tail: r.bytes()?,
            head_cap: r.usize()?,
            tail_cap: r.usize()?,
            head_closed: r.bool()?,
            total: r.u64()?,
            omitted: r.u64()?,
            utf8: r.bool()?,
        };
        if log.head.len() > log.head_cap || log.tail_cap == 0 {
            return Err("its snapshot holds a head larger than its cap".into());
        }
        Ok(log)
    }

    fn boundary_at_or_before(&self, data: &[u8], mut at: usize) -> usize {
        if self.utf8 {
            while at > 0 && at < data.len() && is_continuation(data[at]) {
                at -= 1;
            }
        }
        at
    }

    fn boundary_at_or_after(&self, data: &[u8], mut at: usize) -> usize {
        if self.utf8 {
            while at < data.len() && is_continuation(data[at]) {
                at += 1;
            }
        }
        at
    }
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Text shown to a reader with at most `limit` bytes, the marker included: the start
/// and the end, and a marker naming what was left out and where the whole text is.
#[derive(Default)]
pub struct Excerpt {
    pub text: String,
    pub truncated: bool,
}

/// Builds an excerpt of the logical text `head ⟨omitted bytes⟩ tail` (`tail` may
/// include the line still being written). `whole_in` names where everything is. The
/// result never exceeds `limit` bytes: the marker's own bytes come out of the budget
/// (with a limit too small for it, the marker loses the path, then only the end is kept).
pub fn excerpt(head: &str, omitted: u64, tail: &str, limit: usize, whole_in: Option<&str>) -> Excerpt {
    let visible = head.len() + tail.len();
    if omitted == 0 && visible <= limit {
        let mut text = String::with_capacity(visible);
        text.push_str(head);
        text.push_str(tail);
        return Excerpt { text, truncated: false };
    }
    // With nothing omitted, head and tail are one contiguous text: cut it as one.
    let joined;
    let (front_source, back_source) = if omitted == 0 {
        joined = [head, tail].concat();
        (joined.as_str(), joined.as_str())
    } else {
        (head, tail)
    };
    // The marker's size at its largest count (everything dropped), and the newline that
    // may precede it: what is left of the limit is shared by the two ends.
    let most = visible as u64 + omitted;
    let Some((path, reserved)) = [whole_in, None]
        .into_iter()
        .map(|path| (path, marker(most, path).len() + 1))
        .find(|&(_, len)| len <= limit)
    else {
        return Excerpt {
            text: last_bytes(back_source, limit).to_string(),
            truncated: true,
        };
    };
    let budget = limit - reserved;
    let front_budget = budget / 2;
    let back_budget = budget - front_budget;
    let front = &front_source[..front_end(front_source, front_budget)];
    let back = &back_source[back_start(back_source, back_budget)..];
    let dropped = most.saturating_sub((front.len() + back.len()) as u64);
    let mut text = String::with_capacity(limit);
    text.push_str(front);
    if !front.is_empty() && !front.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&marker(dropped, path));
    text.push_str(back);
    Excerpt { text, truncated: true }
}

/// `[... N bytes omitted; the full output is in PATH ...]` and a newline.
fn marker(dropped: u64, whole_in: Option<&str>) -> String {
    match whole_in {
        Some(path) => format!("[... {dropped} bytes omitted; the full output is in {path} ...]\n"),
        None => format!("[... {dropped} bytes omitted ...]\n"),
    }
}

/// Where the front part ends: within `budget` bytes, after the last whole line if
/// the budget holds one (a reader gets lines, not a line cut in two).
fn front_end(text: &str, budget: usize) -> usize {
    let end = floor_boundary(text, budget.min(text.len()));
    if end == text.len() {
        return end;
    }
    text[..end].rfind('\n').map_or(end, |nl| nl + 1)
}

/// Where the back part starts: at most `budget` bytes from the end, at the start of
/// a line if the budget holds one.
fn back_start(text: &str, budget: usize) -> usize {
    let start = ceil_boundary(text, text.len() - budget.min(text.len()));
    if start == 0 || text.as_bytes()[start - 1] == b'\n' {
        return start;
    }
    match text[start..].find('\n') {
        Some(nl) if start + nl + 1 < text.len() => start + nl + 1,
        _ => start,
    }
}

/// The last `max` bytes of `text`, cut on a character boundary.
pub fn last_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    &text[ceil_boundary(text, text.len() - max)..]
}

fn floor_boundary(s: &str, mut at: usize) -> usize {
    while at > 0 && !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(s: &str, mut at: usize) -> usize {
    while at < s.len() && !s.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_everything_while_small() {
        let mut b = HeadTail::new(4, 4, false);
        b.push(b"abc");
        b.push(b"def");
        assert_eq!(b.head(), b"abcd");
        assert_eq!(b.tail(), b"ef");
        assert_eq!(b.omitted(), 0);
        assert_eq!(b.total(), 6);
    }

    #[test]
    fn bounds_memory_and_counts_the_middle() {
        let mut b = HeadTail::new(10, 100, false);
        for _ in 0..10_000 {
            b.push(b"0123456789");
        }
        assert_eq!(b.head(), b"0123456789");
        assert!(b.tail().len() <= 200);
        assert_eq!(b.head().len() as u64 + b.omitted() + b.tail().len() as u64, 100_000);
    }

    #[test]
    fn utf8_cuts_on_boundaries() {
        let mut b = HeadTail::new(5, 3, true);
        for _ in 0..50 {
            b.push("€é".as_bytes());
        }
        assert!(std::str::from_utf8(b.head()).is_ok());
        assert!(std::str::from_utf8(b.tail()).is_ok());
    }

    #[test]
    fn excerpt_whole_when_it_fits() {
        let e = excerpt("ab", 0, "cd", 10, None);
        assert_eq!(e.text, "abcd");
        assert!(!e.truncated);
    }

    #[test]
    fn excerpt_marks_and_names_the_file() {
        let head = "a".repeat(100);
        let e = excerpt(&head, 1000, "zzzz\n", 100, Some("/tmp/x/stdout.txt"));
        assert!(e.truncated);
        // 100 bytes less the marker's 71 (at its longest count) and a newline: 14 + 14.
        assert!(e.text.starts_with(&format!("{}\n[... ", "a".repeat(14))), "{}", e.text);
        assert!(e
            .text
            .contains("1086 bytes omitted; the full output is in /tmp/x/stdout.txt"));
        assert!(e.text.ends_with("zzzz\n"));
        assert!(e.text.len() <= 100);
    }

    #[test]
    fn excerpt_of_contiguous_text() {
        // The marker is 27 bytes and a newline may precede it: 10 are left for the ends.
        let e = excerpt("0123456789abcdefghij", 0, "ABCDEFGHIJklmnopqrst", 38, None);
        assert_eq!(e.text, "01234\n[... 30 bytes omitted ...]\npqrst");
        assert_eq!(e.text.len(), 38);
    }

    #[test]
    fn excerpt_counts_its_marker_in_the_limit() {
        let text: String = (1..=5000).map(|i| format!("{i}\n")).collect();
        for limit in [1, 10, 30, 31, 60, 64, 100, 200, 1000, 16384] {
            for path in [None, Some("/tmp/x/stdout.txt")] {
                let e = excerpt(&text, 0, "", limit, path);
                assert!(e.truncated);
                assert!(e.text.len() <= limit, "{limit}: {} bytes", e.text.len());
            }
            let e = excerpt(&text[..100], 90_000, &text[text.len() - 100..], limit, Some("/x"));
            assert!(e.text.len() <= limit, "{limit}: {} bytes", e.text.len());
        }
        // Too small for the path: the marker without it; too small for any: the end.
        assert_eq!(
            excerpt(&text, 0, "", 40, Some("/a/long/path/stdout.txt"))
                .text
                .matches("omitted")
                .count(),
            1
        );
        assert_eq!(excerpt("abcdef", 0, "", 3, None).text, "def");
    }

    #[test]
    fn excerpt_keeps_a_tail_when_everything_is_in_the_head() {
        let text: String = (1..=5000).map(|i| format!("{i}\n")).collect();
        let e = excerpt(&text, 0, "", 200, None);
        assert!(e.text.starts_with("1\n2\n"));
        assert!(e.text.ends_with("4999\n5000\n"), "{}", e.text);
        // Whole lines on both sides of the marker.
        let after = e.text.split(" ...]\n").nth(1).unwrap();
        assert!(
            after.lines().all(|l| l.parse::<u32>().is_ok_and(|n| n > 4900)),
            "{after}"
        );
        let before = e.text.split("[... ").next().unwrap();
        assert!(
            before.lines().all(|l| l.parse::<u32>().is_ok_and(|n| n < 100)),
            "{before}"
        );
    }
}
