//! Tests of `screen.rs`, kept apart so the module itself reads in one sitting.

use super::*;

#[test]
fn redraws_leave_the_final_screen() {
    let s = Screen::new(20, 5, 0);
    s.process(b"hello\r\nworld\x1b[H\x1b[2Jtop line\x1b[3;1Hthird");
    assert_eq!(s.contents(), "top line\n\nthird");
}

/// A small deterministic generator (xorshift), so failures replay exactly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Pieces of terminal output, plain and not, in the proportions that matter: many
/// plain lines (so that skips happen), and every kind of sequence the scan tracks.
fn piece(rng: &mut Rng, out: &mut Vec<u8>) {
    const OTHER: &[&[u8]] = &[
        b"\x1b[1;32m",
        b"\x1b[0m",
        b"\x1b[00;4m",
        b"\x1b[0:3m",
        b"\x1b[;41m",
        b"\x1b[48;2;1;2;3m",
        b"\x1b[K",
        b"\x1b[2K",
        b"\x1b[5D",
        b"\x1b[G",
        b"\x1b[3C",
        b"\x1b[5;3H",
        b"\x1b[2A",
        b"\x1b[2J",
        b"\x1b[3J",
        b"\x1b[H",
        b"\x1b[3;10r",
        b"\x1b[r",
        b"\x1b[?1049h",
        b"\x1b[?1049l",
        b"\x1b[?47h",
        b"\x1b[?25l",
        b"\x1b]0;title\x07",
        b"\x1b]8;;http://x\x1b\\",
        b"\x1bPqabc\x1b\\",
        b"\x1b_apc",
        b"\x1b]2;unterminated",
        "é€🙂".as_bytes(),
        "漢字".as_bytes(),
        b"\xff",
        b"\xe2\x82",
        b"\x1bc",
        b"\x18",
        b"\x07",
        b"\t",
        b"\x08",
        b"\x1b[3b",
        b"\x1bM",
        b"\x1b7",
        b"\x1b8",
        b"\x1b[2S",
        b"\x1b[4L",
        b"\x1b[?6h",
        b"\x1b[?6l",
        b"\x1b[?7l",
        b"\x1b[?7h",
        b"\x1b",
        b"\x1b[",
        b"\x1b[1;",
        b"\x1b(B",
        b"\x1b[1\n2m",
        b"\x1b\n[m",
        b"\n",
        b"\r",
    ];
    match rng.below(10) {
        0..=5 => {
            let long = rng.below(8) == 0;
            let len = rng.below(if long { 200 } else { 30 }) as usize;
            for _ in 0..len {
                out.push(b'a' + rng.below(26) as u8);
            }
            out.extend_from_slice(if rng.below(10) == 0 { b"\n" } else { b"\r\n" });
        }
        6 => {
            // A flood: enough lines for the first skip on the main screen.
            let lines = 4200 + rng.below(2000);
            let ending: &[u8] = if rng.below(4) == 0 { b"\n" } else { b"\r\n" };
            // Half the floods are coloured, some lines resetting all attributes.
            let colours: &[&str] = if rng.below(2) == 0 {
                &[
                    "\x1b[31m",
                    "\x1b[0;44m",
                    "\x1b[1m",
                    "",
                    "\x1b[m",
                    "\x1b[38;5;208m",
                    "\x1b[22;7m",
                ]
            } else {
                &[""]
            };
            let every = 1 + rng.below(500) as usize;
            for i in 0..lines {
                out.extend_from_slice(colours[i as usize / every % colours.len()].as_bytes());
                out.extend_from_slice(format!("{i} flood").as_bytes());
                out.extend_from_slice(ending);
            }
        }
        _ => out.extend_from_slice(OTHER[rng.below(OTHER.len() as u64) as usize]),
    }
}

/// The screen matches the reference emulator: text, cursor, and the cells of the
/// screen and of everything kept above it.
fn same(screen: &Screen, reference: &mut vt100::Parser, what: &str) {
    let mut expected = reference.screen().contents();
    expected.truncate(expected.trim_end_matches('\n').len());
    assert_eq!(screen.contents(), expected, "{what}");
    assert_eq!(screen.cursor(), reference.screen().cursor_position(), "{what}: cursor");
    let all = usize::MAX;
    let cells = screen.cells(all);
    let expected = cells::read(reference.screen_mut(), all);
    assert!(cells == expected, "{what}: cells");
}

/// Feeds random streams in random cuts, with random resizes, to a screen keeping
/// `scrollback(rng)` lines and to a plain emulator, and compares them now and then.
/// Returns the bytes skipped.
fn compare_with_a_plain_emulator(seeds: u64, scrollback: impl Fn(&mut Rng) -> usize) -> u64 {
    let mut skipped = 0;
    for seed in 1..=seeds {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let (mut cols, mut rows) = (20 + rng.below(100) as u16, 3 + rng.below(40) as u16);
        let kept = scrollback(&mut rng);
        let screen = Screen::new(cols, rows, kept);
        screen.set_batch(1 + rng.below(64 * 1024) as usize);
        let mut reference = vt100::Parser::new(nonzero(rows), nonzero(cols), kept);
        let mut stream = Vec::new();
        for _ in 0..rng.below(400) {
            piece(&mut rng, &mut stream);
        }
        let mut at = 0;
        let mut step = 0;
        while at < stream.len() {
            let cut = (at + 1 + rng.below(70_000) as usize).min(stream.len());
            screen.process(&stream[at..cut]);
            reference.process(&stream[at..cut]);
            at = cut;
            step += 1;
            match rng.below(12) {
                0 => same(&screen, &mut reference, &format!("seed {seed}, step {step}")),
                1 => {
                    (cols, rows) = (20 + rng.below(100) as u16, 3 + rng.below(60) as u16);
                    screen.resize(cols, rows);
                    reference.set_size(nonzero(rows), nonzero(cols));
                }
                _ => {}
            }
        }
        same(
            &screen,
            &mut reference,
            &format!("seed {seed} (scrollback {kept}), end"),
        );
        skipped += screen.skipped();
    }
    skipped
}

#[test]
fn skipping_never_changes_the_screen() {
    let skipped = compare_with_a_plain_emulator(60, |_| 0);
    assert!(
        skipped > 1_000_000,
        "the streams exercise the skip: {skipped} bytes skipped"
    );
}

#[test]
fn skipping_never_changes_the_screen_or_its_scrollback() {
    // Mostly far fewer lines than a flood has, so that much of floods is skipped.
    let skipped = compare_with_a_plain_emulator(20, |rng| match rng.below(4) {
        0 => 1 + rng.below(30) as usize,
        1 | 2 => 30 + rng.below(1500) as usize,
        _ => 3000,
    });
    assert!(
        skipped > 500_000,
        "the streams exercise the skip: {skipped} bytes skipped"
    );
}

#[test]
fn growing_after_a_flood_brings_back_the_scrolled_rows() {
    let flood: Vec<u8> = (0..6000).flat_map(|i| format!("{i}\r\n").into_bytes()).collect();
    // Erasing the scrollback (CSI 3 J) also erases vt100's count of scrolled rows.
    let erased: Vec<u8> = [&flood[..], b"\x1b[3J", &flood].concat();
    for stream in [&flood, &erased] {
        for (grow_to, kept) in [(10, 0), (60, 0), (300, 0), (60, 20), (300, 100)] {
            let screen = Screen::new(40, 3, kept);
            let mut reference = vt100::Parser::new(nonzero(3), nonzero(40), kept);
            for part in [&b"start\r\n"[..], stream, b"end"] {
                screen.process(part);
                reference.process(part);
            }
            same(&screen, &mut reference, "before growing");
            screen.resize(40, grow_to);
            reference.set_size(nonzero(grow_to), nonzero(40));
            let what = format!("grown to {grow_to} rows, scrollback {kept}");
            same(&screen, &mut reference, &what);
            assert!(screen.skipped() > 0);
        }
    }
}

#[test]
fn a_flood_is_mostly_skipped() {
    let s = Screen::new(80, 24, 0);
    let mut fed = 0;
    for i in 0..200_000 {
        let line = format!("{i:08} the quick brown fox\r\n");
        fed += line.len();
        s.process(line.as_bytes());
    }
    assert!(s.contents().ends_with("00199999 the quick brown fox"));
    let skipped = s.skipped() as usize;
    assert!(skipped > fed * 9 / 10, "{skipped} of {fed} bytes skipped");
}

/// The text of a line of cells.
fn text(line: &[cells::CellRun]) -> String {
    line.iter().map(|run| run.text.as_str()).collect()
}

#[test]
fn scrollback_gives_the_lines_above_the_screen_in_order() {
    let s = Screen::new(20, 10, 100);
    let lines: Vec<String> = (0..150).map(|i| format!("line {i}")).collect();
    s.process(lines.join("\r\n").as_bytes());
    let cells = s.cells(20);
    let got: Vec<String> = cells.lines.iter().map(|l| text(l)).collect();
    assert_eq!(got, lines[120..150]);
    assert_eq!((cells.rows, cells.cols, cells.cursor), (10, 20, (8, 9)));
    // Asking for more than is kept gives what is kept: 100 lines.
    let got: Vec<String> = s.cells(1000).lines.iter().map(|l| text(l)).collect();
    assert_eq!(got, lines[40..150]);
    // Without scrollback, the screen alone.
    assert_eq!(s.cells(0).lines.len(), 10);
    // Reading moved vt100's view and put it back.
    assert_eq!(s.contents(), lines[140..150].join("\n"));
}

#[test]
fn the_alternate_screen_has_no_scrollback() {
    let s = Screen::new(20, 5, 100);
    s.process((0..30).map(|i| format!("{i}\r\n")).collect::<String>().as_bytes());
    s.process(b"\x1b[?1049hfull screen");
    let cells = s.cells(10);
    assert!(cells.alternate_screen);
    assert_eq!(cells.lines.len(), 5);
    assert_eq!(text(&cells.lines[0]), "full screen");
    s.process(b"\x1b[?1049l");
    let cells = s.cells(10);
    assert!(!cells.alternate_screen);
    assert_eq!(cells.lines.len(), 15);
    assert_eq!(text(&cells.lines[0]), "16");
}

#[test]
fn scrollback_is_capped() {
    let s = Screen::new(20, 5, usize::MAX);
    let capacity = s.with_parser(|p| p.screen().scrollback_capacity());
    assert_eq!(capacity, MAX_SCROLLBACK_LINES);
}

#[test]
fn a_flood_with_scrollback_keeps_its_last_lines_and_is_still_skipped() {
    let s = Screen::new(80, 24, 2000);
    let mut fed = 0;
    for i in 0..200_000 {
        let line = format!("{i:08} the quick brown fox\r\n");
        fed += line.len();
        s.process(line.as_bytes());
    }
    let cells = s.cells(2000);
    assert_eq!(cells.lines.len(), 2024);
    for (n, line) in cells.lines[..2023].iter().enumerate() {
        assert_eq!(text(line), format!("{:08} the quick brown fox", 200_000 - 2023 + n));
    }
    assert!(cells.lines[2023].is_empty());
    let skipped = s.skipped() as usize;
    assert!(skipped > fed / 2, "{skipped} of {fed} bytes skipped");
}

/// Resident memory of the process, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap_or("");
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// Memory of a screen after 10,000 full 80-column lines, with and without 2000
/// lines of scrollback, and the cost of reading them all as cells. Run alone, in
/// release: `cargo test --release --lib screen_memory -- --ignored --nocapture
/// --test-threads=1`.
#[test]
#[ignore]
fn screen_memory_and_cells_cost() {
    for kept in [0, 2000] {
        let before = rss_kib();
        let s = Screen::new(80, 24, kept);
        for i in 0..10_000 {
            s.process(format!("{i:08} {}\r\n", "x".repeat(71)).as_bytes());
        }
        let _ = s.contents();
        let after = rss_kib();
        let rounds = 50;
        let started = std::time::Instant::now();
        let mut lines = 0;
        for _ in 0..rounds {
            lines += s.cells(kept).lines.len();
        }
        let each = started.elapsed().as_micros() / rounds;
        let kept_rows = s.with_parser(|p| p.screen().scrollback_len());
        eprintln!(
            "scrollback {kept}: RSS +{} KiB; vt100 cells {} KiB; cells({kept}) {each} µs for {} lines",
            after - before,
            (kept_rows + 24) * (80 * 32 + 32) / 1024,
            lines / rounds as usize
        );
        std::hint::black_box(s);
    }
}

/// The reader queues under its job's lock: a read of the screen holding the emulator
/// (a walk of the cells, an emulation) must not make it wait there.
#[test]
fn queueing_never_waits_for_the_emulator() {
    let screen = Screen::new(20, 5, 0);
    let held = screen.hold_emulator();
    let other = screen.clone();
    let (sent, queued) = std::sync::mpsc::channel();
    let writer = std::thread::spawn(move || {
        other.queue(b"queued meanwhile");
        let _ = sent.send(());
    });
    let waited = queued.recv_timeout(std::time::Duration::from_secs(10)).is_err();
    drop(held);
    writer.join().unwrap();
    assert!(!waited, "queue waited for the emulator");
    assert_eq!(screen.contents(), "queued meanwhile");
}

#[test]
fn a_batch_grows_with_the_lines_kept_up_to_a_cap() {
    assert_eq!(batch_for(0), BATCH);
    assert_eq!(batch_for(2000), 2000 * BATCH_PER_KEPT_LINE);
    assert_eq!(batch_for(MAX_SCROLLBACK_LINES), MAX_BATCH);
    assert_eq!(batch_for(usize::MAX), MAX_BATCH);
}

/// A job that prints nothing never pays for an emulator (its grid is 60 KiB at
/// 80 × 24); one made later has the size of that moment, and reads the same.
#[test]
fn the_emulator_is_made_at_its_first_use_at_the_size_of_that_moment() {
    let screen = Screen::new(80, 24, 0);
    assert!(!screen.has_emulator());
    screen.resize(100, 30);
    assert!(!screen.has_emulator());
    screen.process(b"hello");
    screen.flush();
    assert!(screen.has_emulator());
    screen.with_parser(|p| {
        let (rows, cols) = p.screen().size();
        assert_eq!((rows.get(), cols.get()), (30, 100));
    });
    assert_eq!(screen.contents(), "hello");
    // Read before any output: a blank screen.
    assert_eq!(Screen::new(80, 24, 0).contents(), "");
}

/// vt100's whole state (both grids, scrollback, saved cursor, regions, modes).
fn state(screen: &Screen) -> super::super::screen_state::ScreenState {
    screen.flush();
    screen.with_parser(|p| super::super::screen_state::ScreenState::read(p.screen()).expect("reads"))
}

/// A screen written out and put back (src/output/screen_snapshot.rs) is the same
/// screen in every part vt100 keeps, and goes on the same: random streams of every
/// kind of sequence the skip knows (alternate screens, scroll regions, saved cursors,
/// origin mode, `REP`, wide characters, floods), cut at random, with resizes.
#[test]
fn a_screen_put_back_from_its_snapshot_is_the_same_and_goes_on_the_same() {
    use super::super::snapshot_bytes::{Reader, Writer};
    let (mut taken, mut busy, mut went_on) = (0, 0, 0);
    let mut unlike = std::collections::BTreeMap::<String, usize>::new();
    for seed in 1..=24u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let (cols, rows) = (10 + rng.below(90) as u16, 2 + rng.below(30) as u16);
        let kept = match rng.below(3) {
            0 => 0,
            1 => 1 + rng.below(30) as usize,
            _ => 30 + rng.below(1500) as usize,
        };
        let screen = Screen::new(cols, rows, kept);
        screen.set_batch(1 + rng.below(64 * 1024) as usize);
        let mut stream = Vec::new();
        for _ in 0..rng.below(300) {
            piece(&mut rng, &mut stream);
        }
        let mut at = 0;
        while at < stream.len() {
            let cut = (at + 1 + rng.below(30_000) as usize).min(stream.len());
            screen.process(&stream[at..cut]);
            at = cut;
            if rng.below(10) == 0 {
                screen.resize(10 + rng.below(90) as u16, 2 + rng.below(40) as u16);
            }
            let mut w = Writer::default();
            match screen.snapshot(&mut w) {
                Ok(()) => taken += 1,
                Err(why) if why.contains("inside") => {
                    busy += 1;
                    continue;
                }
                Err(why) => {
                    *unlike.entry(why).or_default() += 1;
                    continue;
                }
            }
            let back = Screen::new(5, 5, 0);
            let mut r = Reader::new(&w.bytes);
            back.restore(&mut r).expect("puts back");
            r.end().expect("all read");
            let what = format!("seed {seed} at {at}");
            let differ = super::super::screen_state::first_difference(&state(&back), &state(&screen));
            assert!(differ.is_none(), "{what}: {}", differ.unwrap_or_default());
            // Once a seed, at a random snapshot: both go on to the stream's end, in
            // the same cuts and resizes, and are still the same.
            if rng.below(4) == 0 {
                while at < stream.len() {
                    let cut = (at + 1 + rng.below(5_000) as usize).min(stream.len());
                    screen.process(&stream[at..cut]);
                    back.process(&stream[at..cut]);
                    at = cut;
                    if rng.below(20) == 0 {
                        let (cols, rows) = (10 + rng.below(90) as u16, 2 + rng.below(40) as u16);
                        screen.resize(cols, rows);
                        back.resize(cols, rows);
                    }
                }
                let differ = super::super::screen_state::first_difference(&state(&back), &state(&screen));
                assert!(differ.is_none(), "{what}, gone on: {}", differ.unwrap_or_default());
                went_on += 1;
            }
        }
    }
    eprintln!("snapshots: {taken} taken ({went_on} went on), {busy} inside a sequence, refused: {unlike:?}");
    assert!(went_on >= 5, "only {went_on} went on");
    // Most screens at rest can be written out; the few that cannot are named.
    let refused: usize = unlike.values().sum();
    assert!(taken > 4 * refused, "{taken} taken, refused: {unlike:?}");
}

/// What a snapshot of a full screen costs (the reader's stall once per journal cap):
/// `cargo test --release --lib bench_screen_snapshot -- --ignored --nocapture`.
#[test]
#[ignore = "measurement, not a check"]
fn bench_screen_snapshot() {
    use super::super::snapshot_bytes::Writer;
    for kept in [0, 2000, 10_000] {
        let screen = Screen::new(120, 40, kept);
        let mut stream = Vec::new();
        for i in 0..(kept + 100) {
            stream.extend_from_slice(
                format!(
                    "\x1b[3{}mline {i} of a build log, with a path/to/some/file.rs:{i}\x1b[m\r\n",
                    i % 8
                )
                .as_bytes(),
            );
        }
        screen.process(&stream);
        screen.flush();
        let mut times = Vec::new();
        let mut size = 0;
        for _ in 0..5 {
            let mut w = Writer::default();
            let started = std::time::Instant::now();
            screen.snapshot(&mut w).expect("taken");
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            size = w.bytes.len();
        }
        times.sort_by(f64::total_cmp);
        eprintln!(
            "120 × 40, {kept} lines kept: snapshot {size} bytes, {:.1} ms (min {:.1}, max {:.1})",
            times[2], times[0], times[4]
        );
    }
}
