//! Properties of the output pipeline (decode → line assembly → head/tail bounds):
//!
//! - the text a reader gets from a byte stream does not depend on how the stream was
//!   cut into reads (a PTY or pipe hands us arbitrary chunks);
//! - whatever arrives, the text is valid UTF-8 with no control left but `\n` and `\t`;
//! - the head/tail bounds hold and account for every byte.
//!
//! Streams are built from pieces that matter to the pipeline (escape sequences cut
//! anywhere, multibyte characters, invalid bytes, `\r`, backspaces, erase-line) rather
//! than uniform random bytes, which almost never form an escape sequence.

use native_shell_service::output::bounded::{excerpt, last_bytes, HeadTail};
use native_shell_service::output::decode::{decode_all, Decoder};
use native_shell_service::output::line::{collapse, collapse_in_window, LineAssembler, DEFAULT_MAX_LINE_BYTES};
use native_shell_service::output::persist::Stream;
use native_shell_service::output::screen::ScreenSize;
use native_shell_service::output::{JobOutput, OutputLimits, View, Which};
use proptest::prelude::*;

/// A piece of terminal output: text, a control, an escape sequence, or junk.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => "[a-z0-9 %>$#.=-]{1,12}".prop_map(String::into_bytes),
        2 => "[é€中😀ÿ]{1,3}".prop_map(String::into_bytes),
        2 => prop::sample::select(vec![
            &b"\n"[..], b"\r\n", b"\r", b"\t", b"\x08", b"\x07", b"\x00", b"\x7f", b"\x0b", b"\x0c",
        ])
        .prop_map(<[u8]>::to_vec),
        3 => prop::sample::select(vec![
            &b"\x1b[K"[..], b"\x1b[0K", b"\x1b[1K", b"\x1b[2K", b"\x1b[D", b"\x1b[3D", b"\x1b[40000D",
            b"\x1b[G", b"\x1b[1G", b"\x1b[5G", b"\x1b[31m", b"\x1b[0m", b"\x1b[1;32;40m", b"\x1b[?25l",
            b"\x1b[?1049h", b"\x1b[H\x1b[2J", b"\x1b[10;5H", b"\x1b]0;title\x07", b"\x1b]8;;http://x\x1b\\",
            b"\x1bP1$r0m\x1b\\", b"\x1b(B", b"\x1b=", b"\x1b7", b"\x1b8", b"\x1bc", b"\x9b31m", b"\x1b[>c",
        ])
        .prop_map(<[u8]>::to_vec),
        // Invalid UTF-8: lone continuation bytes, truncated sequences, overlongs, C1.
        1 => prop::sample::select(vec![
            &b"\x80"[..], b"\xbf", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xc0\xaf", b"\xed\xa0\x80",
            b"\xff", b"\xfe", b"\x85", b"\x9f",
        ])
        .prop_map(<[u8]>::to_vec),
        1 => prop::collection::vec(any::<u8>(), 1..16),
    ]
}

fn stream(max_pieces: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(piece(), 0..max_pieces).prop_map(|pieces| pieces.concat())
}

/// Cut points as fractions of the stream, so they follow the stream's length.
fn cuts() -> impl Strategy<Value = Vec<prop::sample::Index>> {
    prop::collection::vec(any::<prop::sample::Index>(), 0..24)
}

/// Cuts `bytes` at the given points. With `anywhere` false a cut never falls before a
/// UTF-8 continuation byte, i.e. never inside a multibyte character (escape sequences
/// and invalid bytes are still cut anywhere).
fn chunks<'a>(bytes: &'a [u8], cuts: &[prop::sample::Index], anywhere: bool) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|i| {
            let mut p = i.index(bytes.len() + 1);
            while !anywhere && p < bytes.len() && bytes[p] & 0xC0 == 0x80 {
                p += 1;
            }
            p
        })
        .collect();
    points.push(0);
    points.push(bytes.len());
    points.sort_unstable();
    points.dedup();
    points.windows(2).map(|w| &bytes[w[0]..w[1]]).collect()
}

/// Feeds chunks through a decoder and a line assembler, as one job's stream.
fn text_of(chunks: &[&[u8]], max_line: usize) -> (String, String) {
    let mut decoder = Decoder::new();
    let mut lines = LineAssembler::new(max_line);
    let (mut clean_all, mut committed, mut clean) = (String::new(), String::new(), String::new());
    for chunk in chunks {
        clean.clear();
        decoder.decode(chunk, &mut clean);
        clean_all.push_str(&clean);
        lines.feed(&clean, &mut committed);
    }
    lines.finish(&mut committed);
    (clean_all, committed)
}

fn pty_output(limits: OutputLimits) -> JobOutput {
    JobOutput::new(limits, false, Some(ScreenSize::new(80, 24)))
}

/// Only `\n` and `\t` survive below U+0020; no DEL, no C1, no escape.
fn readable(text: &str) -> bool {
    text.chars()
        .all(|c| c == '\n' || c == '\t' || !(c < ' ' || c == '\x7f' || ('\u{80}'..='\u{9f}').contains(&c)))
}

/// Decoding then collapsing chunk by chunk equals doing it over the whole stream.
fn check_text(bytes: &[u8], cuts: &[prop::sample::Index], anywhere: bool) -> Result<(), TestCaseError> {
    let whole = decode_all(bytes);
    let (clean, text) = text_of(&chunks(bytes, cuts, anywhere), DEFAULT_MAX_LINE_BYTES);
    prop_assert_eq!(&clean, &whole);
    prop_assert_eq!(&text, &collapse(&whole));
    prop_assert!(readable(&text), "unreadable control in {:?}", text);
    Ok(())
}

/// The job's text, screen and raw views and its cursor do not depend on the chunking
/// while nothing is dropped by the bounds.
fn check_job_views(bytes: &[u8], cuts: &[prop::sample::Index], anywhere: bool) -> Result<(), TestCaseError> {
    let mut one = pty_output(OutputLimits::default());
    one.ingest(Stream::Stdout, bytes);
    let mut many = pty_output(OutputLimits::default());
    let mut seen = String::new();
    for chunk in chunks(bytes, cuts, anywhere) {
        seen.push_str(many.ingest(Stream::Stdout, chunk));
    }
    // What waiters see, concatenated, is what one read would have shown them.
    prop_assert_eq!(&seen, &decode_all(bytes));
    for view in [View::Text, View::Screen, View::Raw] {
        prop_assert_eq!(one.view(view, None), many.view(view, None), "{:?}", view);
    }
    prop_assert_eq!(one.text_len(), many.text_len());
    prop_assert_eq!(one.last_line(), many.last_line());
    prop_assert_eq!(one.total_bytes(), bytes.len() as u64);
    one.finish();
    many.finish();
    let text = many.view(View::Text, None);
    prop_assert_eq!(&one.view(View::Text, None), &text);
    // A PTY job's text applies redraws within the screen (24 rows: 23 lines above the cursor).
    prop_assert_eq!(&text, &collapse_in_window(&decode_all(bytes), 23));
    prop_assert!(readable(&text));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn text_is_independent_of_chunking_between_characters(bytes in stream(120), cuts in cuts()) {
        check_text(&bytes, &cuts, false)?;
    }

    #[test]
    fn job_views_are_independent_of_chunking_between_characters(bytes in stream(120), cuts in cuts()) {
        check_job_views(&bytes, &cuts, false)?;
    }

    /// Cut anywhere, inside characters too (see `split_character_then_space_then_split_character`:
    /// this failed until the decoder stopped letting vte 0.15 complete split characters).
    #[test]
    fn text_is_independent_of_chunking_anywhere(bytes in stream(120), cuts in cuts()) {
        check_text(&bytes, &cuts, true)?;
    }

    #[test]
    fn job_views_are_independent_of_chunking_anywhere(bytes in stream(120), cuts in cuts()) {
        check_job_views(&bytes, &cuts, true)?;
    }

    /// Pipes mode: each stream's text depends only on that stream's bytes, however the
    /// two were interleaved and cut.
    #[test]
    fn pipe_streams_are_kept_apart(out in stream(60), err in stream(60), cuts_out in cuts(), cuts_err in cuts(), order in any::<u64>()) {
        let mut o = JobOutput::new(OutputLimits::default(), true, None);
        let (mut a, mut b) = (chunks(&out, &cuts_out, false).into_iter(), chunks(&err, &cuts_err, false).into_iter());
        let mut bits = order;
        loop {
            let pick_out = bits & 1 == 1;
            bits = bits.rotate_right(1);
            let next = if pick_out { a.next().map(|c| (Stream::Stdout, c)).or_else(|| b.next().map(|c| (Stream::Stderr, c))) }
                       else { b.next().map(|c| (Stream::Stderr, c)).or_else(|| a.next().map(|c| (Stream::Stdout, c))) };
            let Some((s, chunk)) = next else { break };
            o.ingest(s, chunk);
        }
        o.finish();
        prop_assert_eq!(o.excerpt(Which::Stdout, usize::MAX / 4).text, collapse(&decode_all(&out)));
        prop_assert_eq!(o.excerpt(Which::Stderr, usize::MAX / 4).text, collapse(&decode_all(&err)));
        prop_assert!(readable(&o.view(View::Text, None)));
    }

    /// Bounded logs: every part valid UTF-8, the head a prefix and the tail a suffix of
    /// the whole text, the middle counted exactly, memory within the caps.
    #[test]
    fn small_bounds_hold(bytes in stream(200), cuts in cuts(), head in 0usize..64, tail in 1usize..96, limit in 0usize..200) {
        let limits = OutputLimits { text_head: head, text_tail: tail, raw_head: head, raw_tail: tail, raw_stream: tail };
        let mut o = pty_output(limits);
        for chunk in chunks(&bytes, &cuts, false) {
            o.ingest(Stream::Stdout, chunk);
        }
        o.finish();
        // A PTY job's text applies redraws within the screen, as in `check_job_views`
        // (a reverse index, `ESC M`, moves a later character above an earlier newline).
        let full = collapse_in_window(&decode_all(&bytes), 23);
        let text = o.view(View::Text, None);
        prop_assert!(readable(&text));
        // Rendered memory: head + marker + tail, the tail at most twice its cap (+ a char).
        prop_assert!(text.len() <= head + 2 * tail + 4 + 64, "{} bytes for caps {}/{}", text.len(), head, tail);
        let e = o.excerpt(Which::Combined, limit);
        if full.len() > limit {
            prop_assert!(e.truncated);
        }
        if !e.truncated {
            prop_assert_eq!(&e.text, &full);
        } else {
            // The marker counts in the limit; a limit too small for it keeps the end alone.
            prop_assert!(e.text.len() <= limit, "{} > {}", e.text.len(), limit);
            prop_assert!(e.text.contains(" bytes omitted") || full.ends_with(&e.text));
        }
        let raw = o.view(View::Raw, None);
        prop_assert!(raw.len() <= 3 * (head + 2 * tail) + 64);
        let cut = o.view(View::Text, Some(limit));
        prop_assert!(cut.len() <= limit && text.ends_with(&cut));
    }

    #[test]
    fn head_tail_accounts_for_every_byte(pushes in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 0..40), head in 0usize..100, tail in 0usize..100) {
        let mut b = HeadTail::new(head, tail, false);
        let all: Vec<u8> = pushes.concat();
        for p in &pushes {
            b.push(p);
        }
        prop_assert_eq!(b.total(), all.len() as u64);
        prop_assert_eq!(b.head().len() as u64 + b.omitted() + b.tail().len() as u64, all.len() as u64);
        prop_assert!(b.head().len() <= head);
        prop_assert!(b.tail().len() <= 2 * tail.max(1));
        prop_assert!(all.starts_with(b.head()));
        prop_assert!(all.ends_with(b.tail()));
    }

    #[test]
    fn head_tail_utf8_parts_stay_valid(pushes in prop::collection::vec("\\PC{0,40}", 0..60), head in 0usize..50, tail in 0usize..50) {
        let mut b = HeadTail::new(head, tail, true);
        let all: String = pushes.concat();
        for p in &pushes {
            b.push(p.as_bytes());
        }
        let h = std::str::from_utf8(b.head());
        let t = std::str::from_utf8(b.tail());
        prop_assert!(h.is_ok() && t.is_ok());
        prop_assert!(all.starts_with(h.unwrap()) && all.ends_with(t.unwrap()));
        prop_assert_eq!(b.head().len() as u64 + b.omitted() + b.tail().len() as u64, all.len() as u64);
        // A cut falls back to a boundary: never more than one character short of the cap.
        prop_assert!(b.head().len() <= head);
        prop_assert!(b.tail().len() <= 2 * tail.max(1) + 3);
    }

    #[test]
    fn excerpts_and_last_bytes_cut_on_boundaries(head in "\\PC{0,30}", tail in "\\PC{0,30}", omitted in 0u64..5, limit in 0usize..80) {
        let e = excerpt(&head, omitted, &tail, limit, Some("/x/stdout.txt"));
        let whole = format!("{head}{tail}");
        prop_assert_eq!(e.truncated, omitted > 0 || whole.len() > limit);
        if !e.truncated {
            prop_assert_eq!(&e.text, &whole);
        } else {
            // Budget: at most `limit` bytes, the marker line included; a limit too small
            // for the marker keeps the end of the text alone.
            prop_assert!(e.text.len() <= limit, "{} > {}", e.text.len(), limit);
            match e.text.find("[... ") {
                Some(marker) => {
                    let after = e.text[marker..].find(" ...]\n").unwrap() + marker + " ...]\n".len();
                    prop_assert!(whole.ends_with(&e.text[after..]));
                    prop_assert!(whole.starts_with(e.text[..marker].trim_end_matches('\n')));
                }
                None => prop_assert!(whole.ends_with(&e.text)),
            }
        }
        let l = last_bytes(&whole, limit);
        prop_assert!(l.len() <= limit && whole.ends_with(l));
    }
}

/// A line longer than the wrap size (64 KiB with no newline) is wrapped where its own
/// text says, so a later `\r` redraw lands on the same text however the reads cut it
/// (it used to be committed whole where the read that crossed the size ended).
#[test]
fn an_overlong_line_is_wrapped_the_same_whatever_the_read_boundary() {
    let mut bytes = vec![b'A'; 20];
    bytes.extend_from_slice(b"\rB");
    let (_, whole) = text_of(&[&bytes], 16);
    let (_, split) = text_of(&[&bytes[..17], &bytes[17..]], 16);
    assert_eq!(whole, format!("{}BAAA", "A".repeat(16)));
    assert_eq!(split, whole);
}

fn decode_in(reads: &[&[u8]]) -> String {
    let mut d = Decoder::new();
    let mut out = String::new();
    for r in reads {
        d.decode(r, &mut out);
    }
    out
}

/// Regression (found by the properties above, fixed in `output::decode`): vte 0.15.0
/// `Parser::advance_partial_utf8` completes a character split across reads from a
/// 4-byte window; when the window also holds the next complete character(s) and then the
/// start of another multibyte one, it prints only the first character but consumes up
/// to `valid_up_to`, so the characters in between were lost: "ÿ ÿ" read as
/// `[c3] [bf 20 c3 bf]` became "ÿÿ".
#[test]
fn split_character_then_space_then_split_character() {
    let bytes = "ÿ ÿ".as_bytes();
    assert_eq!(decode_in(&[&bytes[..1], &bytes[1..]]), "ÿ ÿ");
    let bytes = "é, à".as_bytes();
    assert_eq!(decode_in(&[&bytes[..1], &bytes[1..]]), "é, à");
}

/// Regression, same path: a C1 control encoded in UTF-8 (U+0080..U+009F) is replaced by
/// U+FFFD when it arrives in one read, but reached the text as the control itself when
/// the read boundary split it (vte hands a completed character to `print`, not
/// `execute`).
#[test]
fn split_c1_control_is_replaced_like_an_unsplit_one() {
    assert_eq!(decode_all(b"a\xc2\x9bb"), "a\u{fffd}b");
    assert_eq!(decode_in(&[b"a\xc2", b"\x9bb"]), "a\u{fffd}b");
}
