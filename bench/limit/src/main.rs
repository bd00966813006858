//! The physical limit the Node peers are measured against: the least work a program
//! can do to run a command behind a PTY (or a pipe) and collect what it writes.
//! Blocking reads of 1 MiB on one thread, no parsing, no event loop, no copies.
//!
//! Usage (every command prints one JSON object on stdout):
//!   limit stream <pty|pipe> <command>       bytes and time until exit and EOF
//!   limit spawn  <pty|pipe> <count>         `bash -c true`, sequentially, spawn to exit
//!   limit rtt    <count>                    `print(k)` to a Python REPL, until `>>> `
//!   limit lost   <pty|pipe> <command> <runs> bytes collected per run

use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

const READ_SIZE: usize = 1 << 20;
/// Bytes of the output's end kept for verification.
const TAIL: usize = 512;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Pty,
    Pipe,
}

fn check(ret: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::new(io::Error::last_os_error().kind(), format!("{what}: {}", io::Error::last_os_error())))
    } else {
        Ok(ret)
    }
}

fn set_cloexec(fd: i32) -> io::Result<()> {
    // SAFETY: plain fcntl on a descriptor we own.
    unsafe {
        let flags = check(libc::fcntl(fd, libc::F_GETFD), "F_GETFD")?;
        check(libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC), "F_SETFD")?;
    }
    Ok(())
}

/// A running command and the descriptor its output arrives on.
struct Job {
    child: Child,
    reader: OwnedFd,
    /// Pipes mode: the write end for stdin (PTY mode writes to `reader`).
    writer: Option<OwnedFd>,
}

fn spawn(kind: Kind, program: &str, args: &[&str]) -> io::Result<Job> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    match kind {
        Kind::Pty => {
            let (mut master, mut slave) = (0, 0);
            let mut size = libc::winsize { ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0 };
            // SAFETY: out-pointers to live integers; name and termios may be null.
            check(
                unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), &mut size) },
                "openpty",
            )?;
            // SAFETY: openpty returned two fresh descriptors that we now own.
            let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
            set_cloexec(master.as_raw_fd())?;
            cmd.stdin(Stdio::from(slave.try_clone()?))
                .stdout(Stdio::from(slave.try_clone()?))
                .stderr(Stdio::from(slave))
                .env("TERM", "xterm-256color");
            // SAFETY: only async-signal-safe calls between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                        return Err(io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            let child = cmd.spawn()?;
            // `cmd` still holds the slave copies: drop it so EOF (EIO) comes at exit.
            drop(cmd);
            Ok(Job { child, reader: master, writer: None })
        }
        Kind::Pipe => {
            let (out_r, out_w) = pipe()?;
            let (in_r, in_w) = pipe()?;
            cmd.stdin(Stdio::from(in_r)).stdout(Stdio::from(out_w.try_clone()?)).stderr(Stdio::from(out_w));
            let child = cmd.spawn()?;
            drop(cmd);
            Ok(Job { child, reader: out_r, writer: Some(in_w) })
        }
    }
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: out-pointer to two integers.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, "pipe2")?;
    // SAFETY: fresh descriptors that we now own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// One blocking read; 0 at EOF (EIO on a PTY master means every slave is closed).
fn read(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: reading into a live buffer of the given length.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EIO) => return Ok(0),
            _ => return Err(e),
        }
    }
}

fn write_all(fd: &OwnedFd, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        // SAFETY: writing from a live buffer of the given length.
        let n = unsafe { libc::write(fd.as_raw_fd(), data.as_ptr().cast(), data.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        data = &data[n as usize..];
    }
    Ok(())
}

struct Drained {
    bytes: u64,
    tail: Vec<u8>,
    eof_ms: f64,
    exit_ms: f64,
}

/// Runs `bash -c command` and reads everything it writes, then reaps it.
fn drain(kind: Kind, command: &str, buf: &mut [u8]) -> io::Result<Drained> {
    let start = Instant::now();
    let mut job = spawn(kind, "bash", &["-c", command])?;
    drop(job.writer.take());
    let mut bytes = 0u64;
    let mut tail = Vec::new();
    loop {
        let n = read(&job.reader, buf)?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
        tail.extend_from_slice(&buf[n.saturating_sub(TAIL)..n]);
        if tail.len() > 2 * TAIL {
            tail.drain(..tail.len() - TAIL);
        }
    }
    let eof_ms = ms(start);
    job.child.wait()?;
    Ok(Drained { bytes, tail, eof_ms, exit_ms: ms(start) })
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

fn kind(arg: Option<&String>) -> Kind {
    match arg.map(String::as_str) {
        Some("pty") => Kind::Pty,
        Some("pipe") => Kind::Pipe,
        other => usage(&format!("expected pty or pipe, got {other:?}")),
    }
}

fn usage(msg: &str) -> ! {
    eprintln!("limit: {msg}\nusage: limit stream|spawn|lost <pty|pipe> ... | limit rtt <count>");
    std::process::exit(2)
}

fn number(arg: Option<&String>) -> usize {
    arg.and_then(|a| a.parse().ok()).unwrap_or_else(|| usage("expected a count"))
}

fn json_list(values: &[f64]) -> String {
    let items: Vec<String> = values.iter().map(|v| format!("{v:.4}")).collect();
    format!("[{}]", items.join(","))
}

fn escape(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Round trips to a Python REPL: write `print(k)`, read until the next `>>> `.
fn rtt(count: usize) -> io::Result<Vec<f64>> {
    let mut job = spawn(Kind::Pty, "python3", &["-q", "-i"])?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut seen = Vec::new();
    let read_until = |seen: &mut Vec<u8>, buf: &mut [u8], want: &[u8]| -> io::Result<()> {
        while !seen.ends_with(want) {
            let n = read(&job.reader, buf)?;
            if n == 0 {
                return Err(io::Error::other("the REPL ended"));
            }
            seen.extend_from_slice(&buf[..n]);
        }
        Ok(())
    };
    read_until(&mut seen, &mut buf, b">>> ")?;
    let mut samples = Vec::with_capacity(count);
    for k in 0..count {
        seen.clear();
        let value = 1_000_000 + k;
        let start = Instant::now();
        write_all(&job.reader, format!("print({value})\r").as_bytes())?;
        read_until(&mut seen, &mut buf, format!("\r\n{value}\r\n>>> ").as_bytes())?;
        samples.push(start.elapsed().as_secs_f64() * 1e3);
    }
    write_all(&job.reader, b"\x04")?;
    let _ = job.child.kill();
    job.child.wait()?;
    Ok(samples)
}

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut buf = vec![0u8; READ_SIZE];
    let out = match args.first().map(String::as_str) {
        Some("stream") => {
            let command = args.get(2).unwrap_or_else(|| usage("expected a command"));
            let d = drain(kind(args.get(1)), command, &mut buf)?;
            format!(
                "{{\"bytes\":{},\"eofMs\":{:.3},\"exitMs\":{:.3},\"tail\":\"{}\"}}",
                d.bytes,
                d.eof_ms,
                d.exit_ms,
                escape(&d.tail)
            )
        }
        Some("spawn") => {
            let k = kind(args.get(1));
            let n = number(args.get(2));
            let mut samples = Vec::with_capacity(n);
            for _ in 0..n {
                samples.push(drain(k, "true", &mut buf)?.exit_ms);
            }
            format!("{{\"samples\":{}}}", json_list(&samples))
        }
        Some("lost") => {
            let k = kind(args.get(1));
            let command = args.get(2).unwrap_or_else(|| usage("expected a command"));
            let runs = number(args.get(3));
            let mut counts = Vec::with_capacity(runs);
            for _ in 0..runs {
                counts.push(drain(k, command, &mut buf)?.bytes as f64);
            }
            format!("{{\"bytes\":{}}}", json_list(&counts))
        }
        Some("rtt") => format!("{{\"samples\":{}}}", json_list(&rtt(number(args.get(1)))?)),
        _ => usage("unknown command"),
    };
    writeln!(io::stdout(), "{out}")
}
