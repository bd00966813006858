//! Fuzzes the output pipeline: vte-based ANSI removal and UTF-8 reassembly
//! (`output::decode`), carriage-return collapse and the screen window (`output::line`),
//! head/tail bounds (`output::bounded`) and the job views built on them
//! (`output::JobOutput`).
//!
//! Input layout: byte 0 picks the limits and the mode, bytes 1..=8 are read sizes
//! (used in turn), the rest is what the process wrote. Checked, besides "no panic":
//! - cut anywhere (between characters, and inside them too), a PTY job's text, screen
//!   and raw views, its last line and the clean text handed to waiters equal those of
//!   one read, and its finished text is the whole stream's, collapsed the way a PTY
//!   job reads it (redraws within the screen's window);
//! - a pipes job's stdout and stderr each read as that stream's bytes alone would;
//! - a line past the wrap size (tiny here, picked by byte 0) reads the same however the
//!   reads cut it, with or without a window;
//! - the text has no control left but `\n` and `\t`;
//! - cut anywhere and bounded tightly, memory stays within the bounds and every
//!   accessor a reader can call answers.
//!
//! The check itself, shared by the fuzz target (fuzz/fuzz_targets/output_pipeline.rs, under
//! libFuzzer and AddressSanitizer) and the replay of its committed corpus in `cargo test`
//! (tests/fuzz_corpus.rs).

use native_shell_service::output::bounded::{excerpt, last_bytes};
use native_shell_service::output::decode::{decode_all, Decoder};
use native_shell_service::output::line::{collapse, collapse_in_window, LineAssembler};
use native_shell_service::output::persist::Stream;
use native_shell_service::output::screen::ScreenSize;
use native_shell_service::output::{JobOutput, OutputLimits, View, Which};

const SIZES: usize = 8;

/// The PTY jobs of part 1 have a terminal of this many rows: their text keeps the rows
/// above the cursor line (`PTY_ROWS - 1`) editable, so a cursor-up (`ESC M`, `CSI A`)
/// after a newline rewrites the line above (src/output/mod.rs, `window_of`). The
/// whole stream's text is therefore `collapse_in_window(…, PTY_ROWS - 1)`, not the
/// window-less `collapse`, which ignores vertical moves (a pipes job's text).
const PTY_ROWS: u16 = 24;

fn pty_job() -> JobOutput {
    JobOutput::new(OutputLimits::default(), false, Some(ScreenSize::new(80, PTY_ROWS)))
}

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

    // 1. How reads cut the stream changes nothing (default limits: nothing dropped).
    let clean = decode_all(bytes);
    let whole_text = collapse_in_window(&clean, usize::from(PTY_ROWS - 1));
    assert!(readable(&whole_text), "{whole_text:?}");
    let mut one = pty_job();
    one.ingest(Stream::Stdout, bytes);
    for between_chars in [true, false] {
        let mut many = pty_job();
        let mut seen = String::new();
        for read in reads(bytes, sizes, between_chars) {
            seen.push_str(many.ingest(Stream::Stdout, read));
        }
        // What waiters are handed, read by read, is what one read hands them.
        assert_eq!(seen, clean);
        for view in [View::Text, View::Screen, View::Raw] {
            assert_eq!(one.view(view, None), many.view(view, None), "{view:?}");
        }
        assert_eq!(one.text_len(), many.text_len());
        assert_eq!(one.last_line(), many.last_line());
        many.finish();
        assert_eq!(many.view(View::Text, None), whole_text);
    }
    one.finish();
    assert_eq!(one.view(View::Text, None), whole_text);

    // A pipes job: each stream's text is that stream's bytes alone, collapsed without a
    // window, however the two were interleaved and cut.
    let mut pipes = JobOutput::new(OutputLimits::default(), true, None);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    for (i, read) in reads(bytes, sizes, false).into_iter().enumerate() {
        let (stream, into) = if i % 3 == 2 {
            (Stream::Stderr, &mut err)
        } else {
            (Stream::Stdout, &mut out)
        };
        pipes.ingest(stream, read);
        into.extend_from_slice(read);
    }
    pipes.finish();
    assert_eq!(
        pipes.excerpt(Which::Stdout, usize::MAX / 4).text,
        collapse(&decode_all(&out))
    );
    assert_eq!(
        pipes.excerpt(Which::Stderr, usize::MAX / 4).text,
        collapse(&decode_all(&err))
    );

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

    // 3. Lines past the wrap size: a job's is 64 KiB, out of these inputs' reach, so the
    //    assembler is run with a size of 1 to 32 bytes and a window of 0 to 3 lines picked
    //    by the input; where the reads end must not change the text either.
    let wrap_size = usize::from(config & 0x1f) + 1;
    let window = usize::from(sizes[7] % 4);
    let wrapped = |reads: &[&[u8]]| {
        let (mut decoder, mut clean) = (Decoder::new(), String::new());
        let mut lines = LineAssembler::with_window(wrap_size, window);
        let mut text = String::new();
        for read in reads {
            clean.clear();
            decoder.decode(read, &mut clean);
            lines.feed(&clean, &mut text);
        }
        lines.finish(&mut text);
        text
    };
    assert_eq!(wrapped(&[bytes]), wrapped(&reads(bytes, sizes, false)));

    // 4. The pieces a reader's excerpt is built from, on arbitrary text.
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
