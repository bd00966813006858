//! Fuzzes the output pipeline: vte-based ANSI removal and UTF-8 reassembly
//! (`output::decode`), carriage-return collapse (`output::line`), head/tail bounds
//! (`output::bounded`) and the job views built on them (`output::JobOutput`).
//!
//! Input layout: byte 0 picks the limits and the mode, bytes 1..=8 are read sizes
//! (used in turn), the rest is what the process wrote. Checked, besides "no panic":
//! - cut between characters, the text, screen and raw views equal those of one read;
//! - the text has no control left but `\n` and `\t`;
//! - cut anywhere and bounded tightly, memory stays within the bounds and every
//!   accessor a reader can call answers.
//!
//! The check itself, shared by the fuzz target (fuzz/fuzz_targets/output_pipeline.rs, under
//! libFuzzer and AddressSanitizer) and the replay of its committed corpus in `cargo test`
//! (tests/fuzz_corpus.rs).

use native_shell_service::output::bounded::{excerpt, last_bytes};
use native_shell_service::output::decode::decode_all;
use native_shell_service::output::line::collapse;
use native_shell_service::output::persist::Stream;
use native_shell_service::output::screen::ScreenSize;
use native_shell_service::output::{JobOutput, OutputLimits, View, Which};

const SIZES: usize = 8;

fn reads<'a>(bytes: &'a [u8], sizes: &[u8], between_chars: bool) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let (mut at, mut turn) = (0, 0);
    while at < bytes.len() {
        let size = usize::from(sizes.get(turn % sizes.len().max(1)).copied().unwrap_or(0)) + 1;
        turn += 1;
        let mut end = (at + size).min(bytes.len());
        while between_chars && end < bytes.len() && bytes[end] & 0xC0 == 0x80 {
            end += 1;
        }
        out.push(&bytes[at..end]);
        at = end;
    }
    out
}

fn readable(text: &str) -> bool {
    text.chars()
        .all(|c| c == '\n' || c == '\t' || !(c < ' ' || c == '\x7f' || ('\u{80}'..='\u{9f}').contains(&c)))
}

/// One input: panics (a crash, to either driver) where the code under test fails.
pub fn check(data: &[u8]) {
    if data.len() < 1 + SIZES {
        return;
    }
    let config = data[0];
    let sizes = &data[1..=SIZES];
    let bytes = &data[1 + SIZES..];

    // 1. Chunking between characters changes nothing (default limits: nothing dropped).
    let whole_text = collapse(&decode_all(bytes));
    assert!(readable(&whole_text), "{whole_text:?}");
    let mut one = JobOutput::new(OutputLimits::default(), false, Some(ScreenSize::new(80, 24)));
    one.ingest(Stream::Stdout, bytes);
    let mut many = JobOutput::new(OutputLimits::default(), false, Some(ScreenSize::new(80, 24)));
    for read in reads(bytes, sizes, true) {
        many.ingest(Stream::Stdout, read);
    }
    for view in [View::Text, View::Screen, View::Raw] {
        assert_eq!(one.view(view, None), many.view(view, None), "{view:?}");
    }
    assert_eq!(one.last_line(), many.last_line());
    many.finish();
    assert_eq!(many.view(View::Text, None), whole_text);

    // 2. Cut anywhere, tight bounds, pipes or PTY: bounded and always answering.
    let head = usize::from(config & 0x0f) * 4;
    let tail = usize::from(config >> 4) * 8 + 1;
    let limits = OutputLimits {
        text_head: head,
        text_tail: tail,
        raw_head: head,
        raw_tail: tail,
        raw_stream: 0,
    };
    let pipes = config & 1 == 1;
    let mut o = JobOutput::new(limits, pipes, (!pipes).then_some(ScreenSize::new(20, 5)));
    for (i, read) in reads(bytes, sizes, false).into_iter().enumerate() {
        let stream = if pipes && i % 3 == 2 {
            Stream::Stderr
        } else {
            Stream::Stdout
        };
        let clean = o.ingest(stream, read).len();
        assert!(clean <= 4 * 4096 * read.len() + 16);
        let len = o.text_len();
        let _ = o.text_since(len / 2);
        let _ = o.last_line();
        if i == 3 {
            o.resize(u16::from(sizes[0]), u16::from(sizes[1]));
        }
    }
    o.finish();
    let text = o.view(View::Text, None);
    assert!(
        text.len() <= head + 2 * tail + 4 + 64,
        "{} bytes for {head}/{tail}",
        text.len()
    );
    let raw = o.view(View::Raw, None);
    assert!(raw.len() <= 3 * (head + 2 * tail) + 64);
    let _ = o.view(View::Screen, Some(usize::from(sizes[2])));
    assert_eq!(o.total_bytes(), bytes.len() as u64);
    for which in [Which::Stdout, Which::Stderr, Which::Combined] {
        let limit = usize::from(sizes[3]);
        let e = o.excerpt(which, limit);
        assert!(e.text.len() <= limit + 128, "{} > {limit}", e.text.len());
    }

    // 3. The pieces a reader's excerpt is built from, on arbitrary text.
    let as_text = String::from_utf8_lossy(bytes);
    let cut = as_text.len() / 2;
    let cut = (0..=cut).rev().find(|&c| as_text.is_char_boundary(c)).unwrap_or(0);
    let e = excerpt(
        &as_text[..cut],
        u64::from(sizes[4]),
        &as_text[cut..],
        usize::from(sizes[5]),
        Some("x"),
    );
    assert!(e.truncated || e.text == as_text);
    let last = last_bytes(&as_text, usize::from(sizes[6]));
    assert!(last.len() <= usize::from(sizes[6]) && as_text.ends_with(last));
}
