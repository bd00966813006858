//! Tests of `line.rs`, kept apart so the module itself reads in one sitting.

use super::*;

#[test]
fn commit_window_commits_the_screen_unless_a_redraw_is_under_way() {
    let mut a = LineAssembler::with_window(usize::MAX, 3);
    let mut out = String::new();
    a.feed("one\ntwo\n", &mut out);
    assert_eq!(out, "");
    assert!(a.commit_window(&mut out));
    assert_eq!(out, "one\ntwo\n");
    assert!(!a.commit_window(&mut out), "nothing left to commit");
    // A later cursor-up cannot reach committed lines: the redraw starts afresh.
    a.feed("x\n\u{1d}y\n", &mut out);
    // Mid-redraw (the cursor up in the window), nothing is committed.
    a.feed("\u{1d}", &mut out);
    assert!(!a.commit_window(&mut out));
    a.finish(&mut out);
    assert_eq!(out, "one\ntwo\ny\n");
}
use crate::output::decode::decode_all;

fn text(raw: &[u8]) -> String {
    collapse(&decode_all(raw))
}

#[test]
fn crlf_is_newline() {
    assert_eq!(text(b"a\r\nb\r\n"), "a\nb\n");
}

#[test]
fn progress_bar_collapses_to_final_state() {
    assert_eq!(text(b"10%\r50%\r100%\ndone\n"), "100%\ndone\n");
}

#[test]
fn shorter_redraw_keeps_tail_unless_erased() {
    assert_eq!(text(b"100%\r50%\n"), "50%%\n");
    assert_eq!(text(b"100%\r\x1b[K50%\n"), "50%\n");
    assert_eq!(text(b"100%\x1b[2K\r50%\n"), "50%\n");
}

#[test]
fn backspace_overwrites() {
    assert_eq!(text(b"abc\x08\x08XY\n"), "aXY\n");
    assert_eq!(text(b"ab\x1b[2DZ\n"), "Zb\n");
}

#[test]
fn overwrite_with_wide_and_multibyte_chars() {
    assert_eq!(text("héllo\rwö".as_bytes()), "wöllo");
}

#[test]
fn partial_line_is_visible_and_finished() {
    let mut a = LineAssembler::default();
    let mut out = String::new();
    a.feed(">>> ", &mut out);
    assert_eq!(out, "");
    assert_eq!(a.current_line(), ">>> ");
    a.finish(&mut out);
    assert_eq!(out, ">>> ");
}

#[test]
fn long_line_is_wrapped_at_the_size() {
    let mut a = LineAssembler::new(8);
    let mut out = String::new();
    a.feed("0123456789abc", &mut out);
    assert_eq!(out, "01234567");
    assert_eq!(a.current_line(), "89abc");
    // Cut back to a character boundary; a size below one character still moves on.
    let mut a = LineAssembler::new(5);
    let mut out = String::new();
    a.feed("éééé", &mut out);
    assert_eq!((out.as_str(), a.current_line()), ("éé", "éé"));
    let mut a = LineAssembler::new(1);
    let mut out = String::new();
    a.feed("éa", &mut out);
    assert_eq!((out.as_str(), a.current_line()), ("é", "a"));
}

/// Feeds `clean` cut at every point (one cut at a time), and whole: each must give the
/// same text.
fn same_text_however_cut(clean: &str, max_line_bytes: usize, window: usize) -> String {
    let text_of = |pieces: &[&str]| {
        let mut a = LineAssembler::with_window(max_line_bytes, window);
        let mut out = String::new();
        for piece in pieces {
            a.feed(piece, &mut out);
        }
        a.finish(&mut out);
        out
    };
    let whole = text_of(&[clean]);
    for cut in (0..=clean.len()).filter(|&c| clean.is_char_boundary(c)) {
        assert_eq!(text_of(&[&clean[..cut], &clean[cut..]]), whole, "cut at {cut}");
    }
    whole
}

/// A line past the size was committed whole where the read that took it past ended, so
/// a redraw after it (`\r`, then text) landed on the part after that read: the text
/// depended on the program's timing. It is now wrapped where its own text says.
#[test]
fn an_overlong_line_is_cut_where_its_text_says_not_where_a_read_ended() {
    let line = "A".repeat(20);
    assert_eq!(
        same_text_however_cut(&format!("{line}\rB"), 16, 0),
        format!("{}BAAA", "A".repeat(16))
    );
    assert_eq!(same_text_however_cut("ééééé\rx\n", 5, 0), "ééééx\n");
    assert_eq!(same_text_however_cut("éa\rb", 1, 0), "éb");
    // With a window: the lines above go first; the wrapped line's last piece is what
    // moves into the window and what a cursor-up comes back to. A whole line written in
    // one read is wrapped the same (it does not take the fast path for whole lines).
    let stream = format!("x\n{}\n\u{1d}B\n", "A".repeat(40));
    assert_eq!(
        same_text_however_cut(&stream, 16, 3),
        format!("x\n{}BAAAAAAA\n", "A".repeat(32))
    );
}

#[test]
fn chunking_does_not_change_the_result() {
    let raw = "x\r\n\x1b[1mbold\x1b[0m 12%\r\x1b[K99%\r\nend €\r\n".as_bytes();
    let whole = text(raw);
    for cut in 0..raw.len() {
        let mut d = crate::output::decode::Decoder::new();
        let mut a = LineAssembler::default();
        let (mut clean, mut out) = (String::new(), String::new());
        d.decode(&raw[..cut], &mut clean);
        a.feed(&clean, &mut out);
        clean.clear();
        d.decode(&raw[cut..], &mut clean);
        a.feed(&clean, &mut out);
        a.finish(&mut out);
        assert_eq!(out, whole, "cut at {cut}");
    }
}

/// What a windowed assembler makes of a whole raw stream — checked to be what it
/// makes of it one character at a time (lines then reach the window one by one
/// and wait there in a batch, instead of arriving as one run).
fn screen_text(raw: &[u8], window: usize) -> String {
    let clean = decode_all(raw);
    let whole = collapse_in_window(&clean, window);
    let mut a = LineAssembler::with_window(usize::MAX, window);
    let mut out = String::new();
    let mut buf = [0u8; 4];
    for c in clean.chars() {
        a.feed(c.encode_utf8(&mut buf), &mut out);
    }
    a.finish(&mut out);
    assert_eq!(out, whole, "fed one character at a time");
    whole
}

#[test]
fn a_redraw_two_rows_up_reads_as_the_screen_shows_it() {
    let raw = b"a1\nb1\n\x1b[2Aa2\n\x1b[1Bdone\n";
    assert_eq!(screen_text(raw, 23), "a2\nb1\ndone\n");
    assert_eq!(screen_text(raw, 2), "a2\nb1\ndone\n");
}

#[test]
fn without_a_window_vertical_moves_are_ignored() {
    let raw = b"a1\nb1\n\x1b[2Aa2\n\x1b[1Bdone\n";
    assert_eq!(screen_text(raw, 0), "a1\nb1\na2\ndone\n");
    assert_eq!(text(raw), "a1\nb1\na2\ndone\n");
}

/// Three progress bars, redrawn in place the way multi-bar tools do it: go up to
/// the first bar, rewrite each on its row, end below the last.
fn three_bars(redraws: usize) -> Vec<u8> {
    let mut raw = b"starting\r\n".to_vec();
    for bar in 0..3 {
        raw.extend_from_slice(format!("bar{bar}   0%\r\n").as_bytes());
    }
    for step in 1..=redraws {
        raw.extend_from_slice(b"\x1b[3A");
        for bar in 0..3 {
            let pct = step * 100 / redraws;
            raw.extend_from_slice(format!("\r\x1b[2Kbar{bar} {pct:3}%\x1b[1B").as_bytes());
        }
        raw.extend_from_slice(b"\r");
    }
    raw.extend_from_slice(b"all done\r\n");
    raw
}

#[test]
fn three_bars_redrawn_fifty_times_read_as_three_lines() {
    let expected = "starting\nbar0 100%\nbar1 100%\nbar2 100%\nall done\n";
    assert_eq!(screen_text(&three_bars(50), 23), expected);
    // Exactly the bars fit: still three lines.
    assert_eq!(screen_text(&three_bars(50), 3), expected);
}

#[test]
fn moving_up_beyond_the_window_stops_at_its_top() {
    // Window of 2: "l1" has scrolled off when the cursor goes up 5 rows; it stays
    // as written and the cursor stops on "l2".
    let raw = b"l1\nl2\nl3\n\x1b[5AX\n";
    assert_eq!(screen_text(raw, 2), "l1\nX2\nl3\n");
    // A redraw of committed lines never reaches them, however many come after.
    let mut raw = Vec::new();
    for i in 0..20 {
        raw.extend_from_slice(format!("line{i}\n").as_bytes());
    }
    raw.extend_from_slice(b"\x1b[100A\rTOP\x1b[100B\rEND\n");
    let out = screen_text(&raw, 3);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(&lines[..17], (0..17).map(|i| format!("line{i}")).collect::<Vec<_>>());
    assert_eq!(&lines[17..], ["TOPe17", "line18", "line19", "END"]);
}

#[test]
fn moving_down_stops_at_the_last_line_written() {
    assert_eq!(screen_text(b"a\nb\x1b[5Bc\n", 5), "a\nbc\n");
    // The column is kept across rows: "y" lands after a gap, as on the screen.
    assert_eq!(screen_text(b"a\nb\x1b[Ax\x1b[3By\n", 5), "ax\nb y\n");
}

#[test]
fn committed_text_never_changes_and_pending_holds_the_rest() {
    let raw = decode_all(b"a1\nb1\nc1\n\x1b[2Ab2\n\x1b[Bnext");
    let mut a = LineAssembler::with_window(usize::MAX, 2);
    let mut out = String::new();
    a.feed(&raw, &mut out);
    // Three lines in one go through a window of two: "a1" is off screen at once.
    assert_eq!(out, "a1\n");
    assert_eq!(a.pending(), "b2\nc1\nnext");
    assert_eq!(a.pending_len(), a.pending().len());
    assert_eq!(a.current_line(), "next");
    a.feed("\n", &mut out);
    a.feed(&decode_all(b"z\n\x1b[9AA"), &mut out);
    // "b2" and "c1" have scrolled off, but wait for the batch (twice the window);
    // the cursor cannot reach them.
    assert_eq!(out, "a1\n");
    assert_eq!(a.pending(), "b2\nc1\nAext\nz\n");
    a.feed(&decode_all(b"\x1b[9B\ry\n"), &mut out);
    assert_eq!(out, "a1\nb2\nc1\nAext\n");
    assert_eq!(a.pending(), "z\ny\n");
    a.finish(&mut out);
    assert_eq!(out, "a1\nb2\nc1\nAext\nz\ny\n");
    assert_eq!(a.pending(), "");
}

#[test]
fn shrinking_the_window_commits_what_left_it() {
    let mut a = LineAssembler::with_window(usize::MAX, 4);
    let mut out = String::new();
    a.feed(&decode_all(b"l1\nl2\nl3\nl4\n\x1b[4Axx"), &mut out);
    assert_eq!(out, "");
    // The cursor was on "l1": it moves to the new top row, "l3" (column kept), and
    // the two rows above it are committed.
    a.set_window(2, &mut out);
    assert_eq!(out, "xx\nl2\n");
    a.feed(&decode_all(b"YY\x1b[9AZ\n"), &mut out);
    assert_eq!(out, "xx\nl2\n");
    a.finish(&mut out);
    assert_eq!(out, "xx\nl2\nl3YYZ\nl4\n");
    // To no window at all: everything but the bottom line goes.
    let mut a = LineAssembler::with_window(usize::MAX, 4);
    let mut out = String::new();
    a.feed(&decode_all(b"l1\nl2\n\x1b[Aprompt"), &mut out);
    a.set_window(0, &mut out);
    assert_eq!(out, "l1\nprompt\n");
    assert_eq!(a.pending(), "");
    a.feed(&decode_all(b"\x1b[A\rtail"), &mut out);
    assert_eq!(a.pending(), "tail");
}

#[test]
fn growing_the_window_does_not_bring_back_what_scrolled_off() {
    let mut a = LineAssembler::with_window(usize::MAX, 2);
    let mut out = String::new();
    // One line per read: they wait in the window's batch, "l1" and "l2" off screen.
    for line in ["l1\n", "l2\n", "l3\n", "l4\n"] {
        a.feed(line, &mut out);
    }
    assert_eq!(out, "");
    a.set_window(5, &mut out);
    assert_eq!(out, "l1\nl2\n");
    a.feed(&decode_all(b"\x1b[9A\rX\n"), &mut out);
    a.finish(&mut out);
    assert_eq!(out, "l1\nl2\nX3\nl4\n");
}

#[test]
fn a_flood_through_the_window_commits_every_line_in_order() {
    let mut a = LineAssembler::with_window(usize::MAX, 23);
    let mut out = String::new();
    let mut expected = String::new();
    for i in 0..1000 {
        let line = format!("{i}\r\n");
        a.feed(&line, &mut out);
        expected.push_str(&format!("{i}\n"));
        assert!(expected.len() - out.len() <= a.pending_len(), "line {i}");
        assert_eq!([out.as_str(), &a.pending()].concat(), expected);
    }
    a.finish(&mut out);
    assert_eq!(out, expected);
}

/// The screen model in its plainest form: every line ever written, a row and a
/// column; the rows the cursor may reach are the last `window + 1`.
fn naive(chunks: &[&str], window: usize) -> String {
    let (mut lines, mut row, mut cursor) = (vec![Vec::<char>::new()], 0usize, 0usize);
    for c in chunks.iter().flat_map(|c| c.chars()) {
        let last = lines.len() - 1;
        match c {
            '\n' => {
                if row == last {
                    lines.push(Vec::new());
                }
                row += 1;
                cursor = 0;
            }
            '\r' => cursor = 0,
            CURSOR_LEFT => cursor = cursor.saturating_sub(1),
            CURSOR_UP if row > last.saturating_sub(window) => row -= 1,
            CURSOR_DOWN if row < last => row += 1,
            CURSOR_UP | CURSOR_DOWN => {}
            ERASE_TO_END => {
                let keep = cursor.min(lines[row].len());
                lines[row].truncate(keep);
            }
            ERASE_LINE => lines[row].clear(),
            c => {
                let line = &mut lines[row];
                if line.len() < cursor {
                    line.resize(cursor, ' ');
                }
                if cursor < line.len() {
                    line[cursor] = c;
                } else {
                    line.push(c);
                }
                cursor += 1;
            }
        }
    }
    let lines: Vec<String> = lines.into_iter().map(|l| l.into_iter().collect()).collect();
    lines.join("\n")
}

#[test]
fn matches_the_plain_model_on_random_streams_and_cuts() {
    const PIECES: &[&str] = &[
        "abc",
        "hello world",
        "é€",
        "漢字",
        "\t",
        "\n",
        "\r\n",
        "\r\n",
        "\r",
        "\x08",
        "\x1b",
        "\x1c",
        "\x1d",
        "\x1d\x1d",
        "\x1e",
        "12%",
        "  ",
    ];
    let mut rng = crate::output::test_rng::TestRng::new(0x9E37_79B9_7F4A_7C15u64);
    let mut next = |n: usize| rng.below(n);
    for window in [0, 1, 2, 3] {
        for round in 0..5000 {
            let mut stream = String::new();
            for _ in 0..next(30) {
                stream.push_str(PIECES[next(PIECES.len())]);
            }
            let mut cuts: Vec<usize> = (0..next(5)).map(|_| next(stream.len() + 1)).collect();
            cuts.extend([0, stream.len()]);
            cuts.retain(|&c| stream.is_char_boundary(c));
            cuts.sort_unstable();
            let chunks: Vec<&str> = cuts.windows(2).map(|w| &stream[w[0]..w[1]]).collect();
            let mut a = LineAssembler::with_window(usize::MAX, window);
            let mut out = String::new();
            for (k, chunk) in chunks.iter().enumerate() {
                a.feed(chunk, &mut out);
                // Between reads, committed + pending is the screen so far.
                let so_far = [out.as_str(), &a.pending()].concat();
                assert_eq!(
                    so_far,
                    naive(&chunks[..=k], window),
                    "window {window} round {round}: {stream:?}"
                );
                assert_eq!(a.pending_len(), a.pending().len());
            }
            a.finish(&mut out);
            let expected = naive(&chunks, window);
            assert_eq!(
                out, expected,
                "window {window} round {round}: {stream:?} cut at {cuts:?}"
            );
        }
    }
}

#[test]
fn next_control_finds_every_control_and_del() {
    let mut rng = crate::output::test_rng::TestRng::new(0x1234_5678_9ABC_DEF1);
    for _ in 0..20_000 {
        let state = rng.next_u64();
        let len = (state % 40) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|k| 0x20 + ((state >> (k % 56)) as u8 % 0x5f)).collect();
        for k in 0..len {
            if (state >> (k % 61)).is_multiple_of(9) {
                bytes[k] = [0x00, 0x09, 0x0a, 0x1f, 0x7f, 0x80, 0xc2, 0xff, 0x20][k % 9];
            }
        }
        for from in 0..=len {
            let expected = (from..len)
                .find(|&k| bytes[k] < 0x20 || bytes[k] == 0x7f)
                .unwrap_or(len);
            assert_eq!(next_control(&bytes, from), expected, "{bytes:?} from {from}");
        }
    }
}
