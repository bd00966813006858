//! Feeds a synthetic PTY stream through `JobOutput::ingest` in fixed-size chunks and
//! reports the time per MiB for each configuration, so each stage's cost is visible
//! and a profiler (`perf record`, `valgrind --tool=callgrind`) sees only the pipeline.
//!
//! Usage: nss-bench-profile [--mib N] [--chunk BYTES] [--only text|screen|pipes|stages]

use std::time::Instant;

use native_shell_service::output::bounded::HeadTail;
use native_shell_service::output::decode::Decoder;
use native_shell_service::output::line::LineAssembler;
use native_shell_service::output::persist::{JobFiles, Stream};
use native_shell_service::output::screen::{Screen, ScreenSize};
use native_shell_service::output::{JobOutput, OutputLimits};

const MIB: usize = 1024 * 1024;

/// What `cat` of the benchmark's text file looks like from a PTY master: 64-byte
/// lines, `\n` turned into `\r\n`.
fn cat_stream(mib: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(mib * MIB * 65 / 64);
    let mut i = 0u64;
    while out.len() < mib * MIB {
        let head = format!("{i:08} ");
        let body = "the quick brown fox jumps over the lazy dog 0123456789";
        let mut line = format!("{head}{body}");
        while line.len() < 63 {
            line.push('.');
        }
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(b"\r\n");
        i += 1;
    }
    out
}

/// `seq` from a PTY: short numeric lines.
fn seq_stream(lines: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 1..=lines {
        out.extend_from_slice(i.to_string().as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Coloured compiler-like output with progress redraws: the escape-heavy case.
fn ansi_stream(mib: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0u64;
    while out.len() < mib * MIB {
        out.extend_from_slice(
            format!("\x1b[1m\x1b[32m   Compiling\x1b[0m crate-{i} v0.1.{i}\r\n\x1b[2K[{:>3}%] building\r", i % 100).as_bytes(),
        );
        i += 1;
    }
    out
}

/// CPU time of this thread: on a shared machine, wall time measures the neighbours.
fn thread_cpu() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: an out-pointer to a live timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn time<F: FnMut(&[u8])>(name: &str, data: &[u8], chunk: usize, mut f: F) {
    let start = Instant::now();
    let cpu = thread_cpu();
    for c in data.chunks(chunk) {
        f(c);
    }
    let cpu = thread_cpu() - cpu;
    let wall = start.elapsed().as_secs_f64();
    let mib = data.len() as f64 / MIB as f64;
    println!("{name:<34} {:>8.2} ms/MiB CPU {:>9.1} MiB/s CPU ({:.2} ms/MiB wall)", cpu * 1e3 / mib, mib / cpu, wall * 1e3 / mib);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let mib: usize = arg("--mib").and_then(|v| v.parse().ok()).unwrap_or(64);
    let chunk: usize = arg("--chunk").and_then(|v| v.parse().ok()).unwrap_or(4096);
    let only = arg("--only");
    let dir = std::env::temp_dir().join(format!("nss-profile-{}", std::process::id()));
    let inputs = [
        ("cat", cat_stream(mib)),
        ("seq", seq_stream((mib * MIB / 8) as u64)),
        ("ansi", ansi_stream(mib / 4)),
    ];
    for (name, data) in &inputs {
        println!("-- {name}: {:.1} MiB in {chunk}-byte reads", data.len() as f64 / MIB as f64);
        let want = |what: &str| only.as_deref().is_none_or(|o| o == what);
        if want("text") {
            let mut o = JobOutput::new(OutputLimits::default(), false, Some(ScreenSize::new(80, 24)));
            o.set_files(JobFiles::create(&dir.join(format!("{name}-text")), 1, false, 1 << 40).ok().map(Ok));
            time("JobOutput PTY (screen+text+disk)", data, chunk, |c| {
                o.ingest(Stream::Stdout, c);
            });
            let mut o = JobOutput::new(OutputLimits::default(), false, None);
            time("JobOutput, no screen, no disk", data, chunk, |c| {
                o.ingest(Stream::Stdout, c);
            });
        }
        if want("pipes") {
            let mut o = JobOutput::new(OutputLimits::default(), true, None);
            o.set_files(JobFiles::create(&dir.join(format!("{name}-pipes")), 1, true, 1 << 40).ok().map(Ok));
            time("JobOutput pipes (text+disk)", data, chunk, |c| {
                o.ingest(Stream::Stdout, c);
            });
        }
        if want("stages") {
            let mut s = Screen::new(80, 24, 0);
            time("  screen (vt100)", data, chunk, |c| s.process(c));
            let mut d = Decoder::new();
            let mut clean = String::new();
            time("  decode (vte)", data, chunk, |c| {
                clean.clear();
                d.decode(c, &mut clean);
            });
            let mut d = Decoder::new();
            let mut a = LineAssembler::default();
            let mut committed = String::new();
            time("  decode + lines", data, chunk, |c| {
                clean.clear();
                committed.clear();
                d.decode(c, &mut clean);
                a.feed(&clean, &mut committed);
            });
            let mut h = HeadTail::new(64 * 1024, 512 * 1024, true);
            time("  head+tail log", data, chunk, |c| h.push(c));
        }
        if want("screen") {
            let mut s = Screen::new(80, 24, 0);
            time("  screen (vt100)", data, chunk, |c| s.process(c));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
