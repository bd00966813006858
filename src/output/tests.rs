//! Tests of `JobOutput` (`output/mod.rs`), kept apart so the module reads in one sitting.

use super::*;

fn pipes() -> JobOutput {
    JobOutput::new(OutputLimits::default(), true, None)
}

#[test]
fn pipes_keep_streams_apart_and_together() {
    let mut o = pipes();
    o.ingest(Stream::Stdout, b"out1\n");
    o.ingest(Stream::Stderr, b"err1\n");
    o.ingest(Stream::Stdout, b"out2\n");
    assert_eq!(o.excerpt(Which::Stdout, 100).text, "out1\nout2\n");
    assert_eq!(o.excerpt(Which::Stderr, 100).text, "err1\n");
    assert_eq!(o.excerpt(Which::Combined, 100).text, "out1\nerr1\nout2\n");
}

#[test]
fn views() {
    let mut o = JobOutput::new(OutputLimits::default(), false, Some(ScreenSize::new(20, 4)));
    o.ingest(Stream::Stdout, b"\x1b[32mgreen\x1b[0m\r\n50%\r100%");
    assert_eq!(o.view(View::Text, None), "green\n100%");
    assert_eq!(o.view(View::Screen, None), "green\n100%");
    assert_eq!(o.view(View::Raw, None), "\x1b[32mgreen\x1b[0m\r\n50%\r100%");
    assert_eq!(o.view(View::Text, Some(4)), "100%");
    assert_eq!(o.last_line(), "100%");
}

#[test]
fn screen_cells_only_for_a_terminal() {
    assert!(pipes().screen_cells(10).is_none());
    let size = ScreenSize {
        cols: 20,
        rows: 2,
        scrollback: 5,
    };
    let mut o = JobOutput::new(OutputLimits::default(), false, Some(size));
    o.ingest(Stream::Stdout, b"one\r\ntwo\r\nthree\r\nfour");
    let cells = o.screen_cells(10).map(|c| c.lines.len());
    assert_eq!(cells, Some(4));
}

#[test]
fn text_since_returns_only_new_text() {
    let mut o = pipes();
    o.ingest(Stream::Stdout, b"old\n");
    let mark = o.text_len();
    o.ingest(Stream::Stdout, b"new\nprompt> ");
    assert_eq!(o.text_since(mark), "new\nprompt> ");
}

#[test]
fn big_output_is_bounded_in_memory() {
    let limits = OutputLimits {
        text_head: 100,
        text_tail: 1000,
        raw_head: 10,
        raw_tail: 100,
        raw_stream: 100,
    };
    let mut o = JobOutput::new(limits, false, None);
    for i in 0..100_000 {
        o.ingest(Stream::Stdout, format!("line {i}\n").as_bytes());
    }
    let e = o.excerpt(Which::Combined, 200);
    assert!(e.truncated);
    assert!(e.text.starts_with("line 0\n"));
    assert!(e.text.ends_with("line 99999\n"));
    assert!(o.view(View::Text, None).len() < 2500);
}
fn pty(rows: u16) -> JobOutput {
    JobOutput::new(OutputLimits::default(), false, Some(ScreenSize::new(80, rows)))
}

/// What a PTY makes of `printf 'a1\nb1\n\e[2Aa2\n\e[1Bdone\n'` (`\n` → `\r\n`).
const REDRAW_TWO_UP: &[u8] = b"a1\r\nb1\r\n\x1b[2Aa2\r\n\x1b[1Bdone\r\n";

/// Three bars drawn, then redrawn `redraws` times by going up three rows.
fn three_bars(redraws: usize) -> Vec<u8> {
    let mut raw = b"pulling\r\n".to_vec();
    for bar in 0..3 {
        raw.extend_from_slice(format!("layer{bar}: waiting\r\n").as_bytes());
    }
    for step in 1..=redraws {
        raw.extend_from_slice(b"\x1b[3A");
        for bar in 0..3 {
            let state = if step == redraws {
                "done".to_string()
            } else {
                format!("{step}/{redraws}")
            };
            raw.extend_from_slice(format!("\x1b[2K\rlayer{bar}: {state}\r\n").as_bytes());
        }
    }
    raw.extend_from_slice(b"pulled\r\n");
    raw
}

#[test]
fn a_pty_job_reads_a_multi_line_redraw_as_the_screen_shows_it() {
    let mut o = pty(24);
    o.ingest(Stream::Stdout, REDRAW_TWO_UP);
    assert_eq!(o.view(View::Text, None), "a2\nb1\ndone\n");
    // All still on the screen, so all still pending.
    assert_eq!(o.committed_len(), 0);
    assert_eq!(o.pending_text(), "a2\nb1\ndone\n");
    assert_eq!(o.text_len(), 11);
    assert_eq!(o.last_line(), "done");
    o.finish();
    assert_eq!(o.committed_len(), 11);
    assert_eq!(o.pending_text(), "");
    assert_eq!(o.view(View::Text, None), "a2\nb1\ndone\n");
}

#[test]
fn three_bars_redrawn_fifty_times_read_as_their_final_three_lines() {
    let mut o = pty(24);
    o.ingest(Stream::Stdout, &three_bars(50));
    o.finish();
    assert_eq!(
        o.view(View::Text, None),
        "pulling\nlayer0: done\nlayer1: done\nlayer2: done\npulled\n"
    );
}

#[test]
fn pipes_ignore_vertical_moves() {
    let mut o = pipes();
    o.ingest(Stream::Stdout, REDRAW_TWO_UP);
    o.finish();
    assert_eq!(o.view(View::Text, None), "a1\nb1\na2\ndone\n");
}

#[test]
fn the_text_does_not_depend_on_where_reads_cut_the_stream() {
    let mut raw = three_bars(4);
    raw.extend_from_slice(REDRAW_TWO_UP);
    raw.extend_from_slice("€ \x1b[31mred\x1b[0m 5%\r\x1b[K9%\x1bMup\r\n".as_bytes());
    let mut whole = pty(6);
    whole.ingest(Stream::Stdout, &raw);
    whole.finish();
    let expected = whole.view(View::Text, None);
    for cut in 0..=raw.len() {
        let mut o = pty(6);
        o.ingest(Stream::Stdout, &raw[..cut]);
        o.ingest(Stream::Stdout, &raw[cut..]);
        o.finish();
        assert_eq!(o.view(View::Text, None), expected, "cut at {cut}");
    }
}

#[test]
fn committed_text_only_grows_and_is_what_the_file_gets() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let mut o = pty(5);
    let files = JobFiles::create(&tmp.path().join("s"), 1, false, u64::MAX).expect("job files");
    o.set_files(Some(Ok(files)));
    let mut raw = Vec::new();
    for i in 0..30 {
        raw.extend_from_slice(format!("line {i}\r\n").as_bytes());
        if i % 7 == 6 {
            raw.extend_from_slice(b"\x1b[3A\rredrawn\x1b[3B\r");
        }
    }
    raw.extend_from_slice(&three_bars(5));
    let mut committed = String::new();
    let mut last_len = 0;
    for chunk in raw.chunks(11) {
        o.ingest(Stream::Stdout, chunk);
        let len = o.committed_len();
        assert!(len >= last_len);
        last_len = len;
        let text = o.view(View::Text, None);
        // Committed text is a prefix that never changes; pending is the rest.
        assert_eq!(text, [&text[..len as usize], &o.pending_text()].concat());
        assert!(text.starts_with(&committed));
        committed = text[..len as usize].to_string();
        assert_eq!(o.text_len(), len + o.pending_text().len() as u64);
    }
    o.finish();
    let path = o.files().expect("files").stdout_path();
    let file = std::fs::read_to_string(path).expect("stdout.txt");
    assert_eq!(file, o.view(View::Text, None));
    assert_eq!(file.len() as u64, o.committed_len());
    assert!(file.starts_with("line 0\nline 1\nline 2\nline 3\nredrawn\n"), "{file}");
}

#[test]
fn shrinking_the_terminal_commits_the_lines_that_leave_the_screen() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let mut o = pty(10);
    let files = JobFiles::create(&tmp.path().join("s"), 1, false, u64::MAX).expect("job files");
    o.set_files(Some(Ok(files)));
    o.ingest(Stream::Stdout, b"l1\r\nl2\r\nl3\r\nl4\r\n> ");
    assert_eq!(o.committed_len(), 0);
    // Three rows: two lines above the prompt stay on screen.
    o.resize(80, 3);
    assert_eq!(o.committed_len(), 6);
    assert_eq!(o.pending_text(), "l3\nl4\n> ");
    let path = o.files().expect("files").stdout_path();
    assert_eq!(std::fs::read_to_string(&path).expect("stdout.txt"), "l1\nl2\n");
    // What left the screen cannot be redrawn any more.
    o.ingest(Stream::Stdout, b"\x1b[9A\rL\r\n");
    o.finish();
    assert_eq!(o.view(View::Text, None), "l1\nl2\nL3\nl4\n> ");
    assert_eq!(
        std::fs::read_to_string(&path).expect("stdout.txt"),
        "l1\nl2\nL3\nl4\n> "
    );
}

#[test]
fn a_marker_names_the_files_that_hold_each_log_and_none_once_they_do_not() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let mut o = pipes();
    let files = JobFiles::create(&tmp.path().join("s"), 1, true, u64::MAX).expect("job files");
    let dir = files.dir().to_path_buf();
    o.set_files(Some(Ok(files)));
    o.ingest(Stream::Stdout, "out\n".repeat(2000).as_bytes());
    o.ingest(Stream::Stderr, "err\n".repeat(2000).as_bytes());
    o.finish();
    // Room for the marker with both paths in it: the limit counts the marker too.
    let named = |o: &JobOutput, which| o.excerpt(which, 1024).text;
    let (stdout, stderr) = (dir.join("stdout.txt"), dir.join("stderr.txt"));
    assert!(named(&o, Which::Stdout).contains(&format!("the full output is in {} ...]", stdout.display())));
    assert!(named(&o, Which::Stderr).contains(&format!("the full output is in {} ...]", stderr.display())));
    // Interleaved, the two files together hold it.
    let both = format!(
        "the full output is in {} and {} ...]",
        stdout.display(),
        stderr.display()
    );
    assert!(named(&o, Which::Combined).contains(&both));
    // Its folder gone: no file named, and it is said why.
    std::fs::remove_dir_all(&dir).expect("removed");
    o.check_files();
    for which in [Which::Stdout, Which::Stderr, Which::Combined] {
        let text = named(&o, which);
        assert!(
            text.contains("bytes omitted ...]") && !text.contains("full output"),
            "{text}"
        );
    }
    assert!(o.persist_error().expect("a persist error").contains("was removed"));
}

#[test]
fn a_job_whose_folder_could_not_be_made_says_why() {
    let mut o = pipes();
    o.set_files(Some(Err("the job's folder could not be made".into())));
    assert_eq!(o.persist_error().as_deref(), Some("the job's folder could not be made"));
    // Persistence off: nothing to say.
    let mut off = pipes();
    off.set_files(None);
    assert_eq!(off.persist_error(), None);
}

/// Throughput of the text pipeline (decoder + text log) on a `seq`-like flood as
/// a PTY writes it (`\r\n` line ends), in 64 KiB reads:
/// `cargo test --release --lib output::tests::bench_text_pipeline -- --ignored --nocapture`
#[test]
#[ignore = "measurement, not a check"]
fn bench_text_pipeline() {
    let mut flood = Vec::new();
    let mut n = 0u64;
    while flood.len() < 64 << 20 {
        n += 1;
        flood.extend_from_slice(format!("{n}\r\n").as_bytes());
    }
    let mut best = f64::MAX;
    for _ in 0..5 {
        let mut decoder = Decoder::new();
        let mut log = TextLog::new(&OutputLimits::default(), window_of(24));
        let mut clean = String::new();
        let mut written = 0usize;
        let started = std::time::Instant::now();
        for chunk in flood.chunks(64 * 1024) {
            clean.clear();
            decoder.decode(chunk, &mut clean);
            written += log.feed(&clean).len();
        }
        written += log.finish().len();
        let secs = started.elapsed().as_secs_f64();
        assert_eq!(written as u64, log.len());
        best = best.min(secs);
    }
    let mib = flood.len() as f64 / (1 << 20) as f64;
    println!("text pipeline: {:.0} MiB/s (best of 5, {mib:.0} MiB)", mib / best);
}

/// What a reader can see of an output: every view, offset and length.
fn seen(o: &JobOutput) -> Vec<String> {
    let raw = o.raw_stream().read(0, usize::MAX);
    vec![
        o.view(View::Text, None),
        o.view(View::Raw, None),
        o.view(View::Screen, None),
        format!("{:?}", o.screen_cells(50)),
        o.excerpt(Which::Stdout, 1 << 20).text,
        o.excerpt(Which::Stderr, 1 << 20).text,
        o.excerpt(Which::Combined, 1 << 20).text,
        o.text_since(0),
        format!(
            "{} {} {} {}",
            o.text_len(),
            o.committed_len(),
            o.total_bytes(),
            o.raw_stream().total()
        ),
        format!("{} {} {:?}", raw.next, raw.omitted, raw.pieces),
        o.pending_text(),
        o.last_line(),
    ]
}

/// What a restart in place does: the journal sealed, the output made again from it.
/// From a copy of the journal, as the original here writes on (the previous image
/// does not).
fn rebuild(original: &mut JobOutput) -> JobOutput {
    use std::io::{Read, Seek, Write};
    let (mut file, len) = original.seal_journal().expect("a journal");
    let mut bytes = Vec::new();
    file.rewind().unwrap();
    file.read_to_end(&mut bytes).unwrap();
    let mut copy = tempfile::tempfile().unwrap();
    copy.write_all(&bytes[..len as usize]).unwrap();
    JobOutput::rebuilt(original.shape(), copy, len).expect("rebuilt")
}

/// Pieces of output the random tests cut and join: text, line ends, colours, redraws,
/// cursor moves and a character split across two pieces.
const PIECES: [&[u8]; 7] = [
    b"line ",
    b"\r\n",
    b"\x1b[31mred\x1b[0m",
    b"50%\r",
    b"\x1b[2A\x1b[K",
    b"\xe2\x82",
    b"\xac\n",
];

/// Bounds small enough that the head, the omitted middle and the tail all play a part.
const SMALL: OutputLimits = OutputLimits {
    text_head: 300,
    text_tail: 900,
    raw_head: 200,
    raw_tail: 700,
    raw_stream: 1000,
};

/// `steps` random steps: reads of random pieces (on stderr too for a pipes output),
/// commits and resizes.
fn feed_randomly(output: &mut JobOutput, rng: &mut crate::output::test_rng::TestRng, steps: usize) {
    let screen = output.shape().screen.is_some();
    for _ in 0..steps {
        match rng.below(40) {
            0 => {
                output.commit_screen();
            }
            1 if screen => output.resize(10 + rng.below(30) as u16, 2 + rng.below(6) as u16),
            _ => {
                let stream = if !screen && rng.below(3) == 0 {
                    Stream::Stderr
                } else {
                    Stream::Stdout
                };
                let bytes: Vec<u8> = (0..1 + rng.below(4))
                    .flat_map(|_| PIECES[rng.below(PIECES.len())].to_vec())
                    .collect();
                output.ingest(stream, &bytes);
                // As the job's reader does after each read (src/job/mod.rs).
                if let Some(snapshot) = output.take_pending_snapshot() {
                    let written = snapshot.write();
                    output.finish_snapshot(written);
                }
            }
        }
    }
}

/// A restart in place rebuilds a job's output from its steps (`replay`): the same in
/// every view, with bounds small enough that the head, the omitted middle and the tail
/// all play a part, through random cuts, colours, redraws, commits and resizes.
#[test]
fn an_output_rebuilt_from_its_steps_is_the_same_in_every_view() {
    // As the daemon does at its start; in process outputs keep no steps.
    super::replay::keep_steps_for_restart();
    for (seed, screen) in [
        (1, None),
        (2, Some(ScreenSize::new(30, 5))),
        (
            3,
            Some(ScreenSize {
                cols: 12,
                rows: 3,
                scrollback: 20,
            }),
        ),
    ] {
        let mut rng = crate::output::test_rng::TestRng::new(seed);
        let mut original = JobOutput::new(SMALL, screen.is_none(), screen);
        feed_randomly(&mut original, &mut rng, 2000);
        let rebuilt = rebuild(&mut original);
        assert_eq!(seen(&rebuilt), seen(&original), "seed {seed}");
        // The rebuilt output writes on the same journal: rebuilt again after more
        // steps (a second restart), it is still the same.
        let mut rebuilt = rebuilt;
        for output in [&mut original, &mut rebuilt] {
            output.ingest(Stream::Stdout, b"after \x1b[1mthe\x1b[0m restart\r\n");
            output.commit_screen();
        }
        assert_eq!(seen(&rebuild(&mut rebuilt)), seen(&original), "seed {seed}, twice");
        original.finish();
        let rebuilt = rebuild(&mut original);
        assert_eq!(seen(&rebuilt), seen(&original), "seed {seed}, finished");
    }
}

/// Journals are started again past this (small) cap in the snapshot tests.
const CAP: u64 = 4000;

/// `original` (made with `CAP`) fed 6,000 random steps: its journal stays under
/// `bound`, and the output rebuilt from it (a snapshot, then steps) is the same in
/// every view; a second image goes on from the snapshotted journal, snapshots on its
/// own, and a third rebuilds the same; and again after the end.
fn rebuilt_across_snapshots(mut original: JobOutput, seed: u64, bound: u64) {
    original.set_journal_cap(CAP);
    let mut rng = crate::output::test_rng::TestRng::new(seed);
    feed_randomly(&mut original, &mut rng, 6000);
    let (_, len) = original.seal_journal().expect("a journal");
    assert!(
        original.total_bytes() > 15 * CAP,
        "wrote only {}",
        original.total_bytes()
    );
    assert!(len < bound, "the journal holds {len} bytes: no cap");
    let mut rebuilt = rebuild(&mut original);
    assert_eq!(seen(&rebuilt), seen(&original), "seed {seed}");
    rebuilt.set_journal_cap(CAP);
    let mut twin = crate::output::test_rng::TestRng::new(seed + 100);
    let mut again = crate::output::test_rng::TestRng::new(seed + 100);
    feed_randomly(&mut original, &mut twin, 3000);
    feed_randomly(&mut rebuilt, &mut again, 3000);
    let (_, len) = rebuilt.seal_journal().expect("a journal");
    assert!(len < bound, "the adopted journal holds {len} bytes: no cap");
    assert_eq!(seen(&rebuild(&mut rebuilt)), seen(&original), "seed {seed}, twice");
    original.finish();
    assert_eq!(seen(&rebuild(&mut original)), seen(&original), "seed {seed}, finished");
}

/// The journal's cap (src/output/snapshot.rs): a pipes output's journal past its cap
/// starts again from a snapshot, so it stays near the cap however much is written
/// (about 100 KiB; a snapshot of these bounds is under 8 KiB, and the journal starts
/// again at most three snapshots' worth past it). With and without a raw stream.
#[test]
fn an_output_rebuilt_across_its_journals_snapshots_is_the_same_in_every_view() {
    super::replay::keep_steps_for_restart();
    for (seed, raw_stream) in [(4, 1000), (5, 0), (6, 1000)] {
        let limits = OutputLimits { raw_stream, ..SMALL };
        rebuilt_across_snapshots(JobOutput::new(limits, true, None), seed, 8 * CAP);
    }
}

/// A terminal output's journal is capped too: its snapshot carries the screen
/// (src/output/screen_snapshot.rs), so the views compared include the screen's cells
/// and scrollback, through resizes. A terminal snapshot also draws the rows scrolled
/// off (about 5 bytes per screen height of them: most on these 3- and 5-row screens),
/// so it is larger.
#[test]
fn a_terminal_output_rebuilt_across_its_journals_snapshots_is_the_same_in_every_view() {
    super::replay::keep_steps_for_restart();
    let kept = ScreenSize {
        cols: 12,
        rows: 3,
        scrollback: 20,
    };
    for (seed, size) in [(7, ScreenSize::new(30, 5)), (8, kept), (9, kept)] {
        rebuilt_across_snapshots(JobOutput::new(SMALL, false, Some(size)), seed, 12 * CAP);
    }
}

/// What a pipes output's snapshot costs the reader, under the job's lock, once per
/// journal cap, at the daemon's bounds (the default text and raw bounds, 1 MiB of raw
/// stream): `cargo test --release --lib bench_pipes_snapshot -- --ignored --nocapture`.
#[test]
#[ignore = "measurement, not a check"]
fn bench_pipes_snapshot() {
    let limits = OutputLimits {
        raw_stream: super::raw_stream::RAW_STREAM_KEEP,
        ..OutputLimits::default()
    };
    let mut output = JobOutput::new(limits, true, None);
    for i in 0..200_000 {
        let stream = if i % 5 == 0 { Stream::Stderr } else { Stream::Stdout };
        output.ingest(
            stream,
            format!("line {i} of a build log, with a path/to/some/file.rs:{i}\n").as_bytes(),
        );
    }
    let mut times = Vec::new();
    let mut size = 0;
    for _ in 0..7 {
        let started = std::time::Instant::now();
        size = output.snapshot().expect("rests").len();
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    eprintln!(
        "pipes output at the daemon's bounds: snapshot {size} bytes, {:.2} ms (min {:.2}, max {:.2})",
        times[3], times[0], times[6]
    );
}
