//! The reader of one job: moves bytes from the PTY master or the pipes into the job,
//! notices the exit, drains what is still in flight, and only then publishes the exit.
//!
//! Each job is a task on the shared tokio reactor (epoll), not a thread: an idle job
//! is a registered descriptor and costs nothing until it has output.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::sync::mpsc;

use crate::handoff::Handoff;
use crate::job::{Input, Job, SCREEN_SETTLE};
use crate::output::persist::Stream;
use crate::process_tree::{background_roots, job_processes};
use crate::spawn::ChildProcess;

const READ_CHUNK: usize = 64 * 1024;
/// After the exit, output still held open by background processes is read until it
/// has been quiet this long...
const DRAIN_QUIET: Duration = Duration::from_millis(25);
/// ...or for at most this long, so a chatty background server cannot delay the result.
const DRAIN_MAX: Duration = Duration::from_millis(250);

pub use crate::job::OnExit;

/// A reader's buffer: small until the job floods, so the many jobs that print a few
/// lines do not each allocate and zero `READ_CHUNK` (two of them in pipes mode).
struct ReadBuffer(Vec<u8>);

impl ReadBuffer {
    const FIRST: usize = 4096;

    fn new() -> Self {
        Self(vec![0; Self::FIRST])
    }

    fn space(&mut self) -> &mut [u8] {
        &mut self.0
    }

    /// Makes the buffer `READ_CHUNK` once `n` bytes filled it: the job is flooding.
    fn grow_if_full(&mut self, n: usize) {
        if n == self.0.len() && n < READ_CHUNK {
            self.0.resize(READ_CHUNK, 0);
        }
    }

    /// The `n` bytes just read (a full buffer grows for the next read).
    fn filled(&mut self, n: usize) -> &[u8] {
        self.grow_if_full(n);
        &self.0[..n]
    }
}

enum Read {
    Data(usize),
    Eof,
}

async fn read_pty(fd: &AsyncFd<OwnedFd>, buf: &mut ReadBuffer) -> Read {
    loop {
        let Ok(mut guard) = fd.readable().await else {
            return Read::Eof;
        };
        match guard.try_io(|inner| read_available(inner.as_raw_fd(), buf)) {
            Ok(Ok(0)) => return Read::Eof,
            Ok(Ok(n)) => return Read::Data(n),
            Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
            // EIO on a PTY master means every slave descriptor is closed: EOF.
            Ok(Err(_)) => return Read::Eof,
            Err(_would_block) => continue,
        }
    }
}

/// Reads what is available now, up to `READ_CHUNK`: a PTY hands over at most 4 KiB
/// per read, so one chunk for the job is gathered from several reads while more is
/// already waiting — fewer ingests, locks and file writes per MiB, and no waiting
/// for data that has not arrived. WouldBlock only if nothing at all was read.
fn read_available(fd: i32, buf: &mut ReadBuffer) -> io::Result<usize> {
    let mut n = raw_read(fd, buf.space())?;
    if n == 0 {
        return Ok(0);
    }
    loop {
        // The first read can fill the small buffer; gathering goes on in the large one.
        buf.grow_if_full(n);
        let space = &mut buf.space()[n..];
        if space.is_empty() {
            break;
        }
        match raw_read(fd, space) {
            Ok(0) => break,
            Ok(more) => n += more,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // WouldBlock, or EIO (EOF): deliver what was read; the next read sees it again.
            Err(_) => break,
        }
    }
    Ok(n)
}

fn raw_read(fd: i32, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: reading into a live buffer of the given length.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

fn raw_write(fd: i32, data: &[u8]) -> io::Result<usize> {
    // SAFETY: writing from a live buffer of the given length.
    let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

async fn background_pids(job: &Arc<Job>) -> Vec<u32> {
    let job = job.clone();
    let scan = tokio::task::spawn_blocking(move || {
        let procs = job_processes(&job.meta.identity());
        background_roots(&procs, job.meta.pid as i32)
    });
    scan.await.unwrap_or_default()
}

async fn publish_exit(job: &Arc<Job>, exit: io::Result<ExitStatus>, output_closed: bool, on_exit: OnExit) {
    // Output still open after the exit means something else holds it: a background job.
    let background = if output_closed {
        Vec::new()
    } else {
        background_pids(job).await
    };
    job.finish(exit, background, output_closed, on_exit);
}

pub async fn drive_pty(job: Arc<Job>, mut child: ChildProcess, fd: Arc<AsyncFd<OwnedFd>>, on_exit: OnExit) {
    let mut buf = ReadBuffer::new();
    let mut output = Handoff::new(job.clone());
    let mut eof = false;
    let exit = {
        let wait = child.wait();
        tokio::pin!(wait);
        // Armed by output, fired by SCREEN_SETTLE of quiet: the screen's lines are
        // committed. An idle job has no timer armed.
        let settle = tokio::time::sleep(SCREEN_SETTLE);
        tokio::pin!(settle);
        let mut armed = false;
        loop {
            tokio::select! {
                biased;
                read = read_pty(&fd, &mut buf), if !eof => match read {
                    Read::Data(n) => {
                        output.push(buf.filled(n)).await;
                        settle.as_mut().reset(tokio::time::Instant::now() + SCREEN_SETTLE);
                        armed = true;
                    }
                    Read::Eof => eof = true,
                },
                status = &mut wait => break status,
                _ = &mut settle, if armed => {
                    armed = false;
                    output.drain().await;
                    job.commit_screen();
                }
            }
        }
    };
    let deadline = Instant::now() + DRAIN_MAX;
    while !eof && Instant::now() < deadline {
        match tokio::time::timeout(DRAIN_QUIET, read_pty(&fd, &mut buf)).await {
            Ok(Read::Data(n)) => output.push(buf.filled(n)).await,
            Ok(Read::Eof) => eof = true,
            Err(_quiet) => break,
        }
    }
    // Every byte read is in the job before the exit is published.
    output.drain().await;
    publish_exit(&job, exit, eof, on_exit).await;
    // Background processes may keep writing to the terminal; keep their output.
    while !eof {
        tokio::select! {
            read = read_pty(&fd, &mut buf) => match read {
                Read::Data(n) => output.push(buf.filled(n)).await,
                Read::Eof => eof = true,
            },
            _ = job.closed() => break,
        }
    }
    output.drain().await;
}

/// A job's stdout and stderr pipes, read as one source.
struct Pipes {
    stdout: pipe::Receiver,
    stderr: pipe::Receiver,
    out_buf: ReadBuffer,
    err_buf: ReadBuffer,
    out_open: bool,
    err_open: bool,
}

impl Pipes {
    fn open(&self) -> bool {
        self.out_open || self.err_open
    }

    /// Reads one chunk from whichever pipe has data and hands it to the job; a pipe
    /// at EOF is marked closed. Cancel-safe: a dropped read loses nothing.
    async fn step(&mut self, job: &Job) {
        tokio::select! {
            read = self.stdout.read(self.out_buf.space()), if self.out_open => match read {
                Ok(n) if n > 0 => job.ingest(Stream::Stdout, self.out_buf.filled(n)),
                _ => self.out_open = false,
            },
            read = self.stderr.read(self.err_buf.space()), if self.err_open => match read {
                Ok(n) if n > 0 => job.ingest(Stream::Stderr, self.err_buf.filled(n)),
                _ => self.err_open = false,
            },
        }
    }
}

pub async fn drive_pipes(
    job: Arc<Job>,
    mut child: ChildProcess,
    stdout: pipe::Receiver,
    stderr: pipe::Receiver,
    on_exit: OnExit,
) {
    let mut pipes = Pipes {
        stdout,
        stderr,
        out_buf: ReadBuffer::new(),
        err_buf: ReadBuffer::new(),
        out_open: true,
        err_open: true,
    };
    let exit = {
        let wait = child.wait();
        tokio::pin!(wait);
        loop {
            tokio::select! {
                biased;
                _ = pipes.step(&job), if pipes.open() => {}
                status = &mut wait => break status,
            }
        }
    };
    let deadline = Instant::now() + DRAIN_MAX;
    while pipes.open() && Instant::now() < deadline {
        if tokio::time::timeout(DRAIN_QUIET, pipes.step(&job)).await.is_err() {
            break;
        }
    }
    publish_exit(&job, exit, !pipes.open(), on_exit).await;
    // Background processes may keep writing to the pipes; keep their output.
    while pipes.open() {
        tokio::select! {
            _ = pipes.step(&job) => {}
            _ = job.closed() => break,
        }
    }
}

/// Writes caller input to the PTY master, waiting for room when the terminal's input
/// queue is full (so large pastes are neither dropped nor blocking a thread).
/// Writes queued input to the terminal in order; `queued` counts what is still to be
/// written (see `Job::write_now`, which writes directly while it is zero).
pub async fn write_pty(fd: Arc<AsyncFd<OwnedFd>>, mut rx: mpsc::UnboundedReceiver<Input>, queued: Arc<AtomicUsize>) {
    while let Some(input) = rx.recv().await {
        // Close: the job is done with its terminal (see `Job::release_io`).
        let Input::Data(data) = input else { return };
        let mut written = 0;
        while written < data.len() {
            let Ok(mut guard) = fd.writable().await else { return };
            match guard.try_io(|inner| raw_write(inner.as_raw_fd(), &data[written..])) {
                Ok(Ok(n)) => written += n,
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                // The terminal is gone: nothing more can be delivered.
                Ok(Err(_)) => return,
                Err(_would_block) => {}
            }
        }
        queued.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Writes queued input to the job's stdin in order; `queued` counts what is still to be
/// written, as for `write_pty`.
pub async fn write_pipe(mut stdin: pipe::Sender, mut rx: mpsc::UnboundedReceiver<Input>, queued: Arc<AtomicUsize>) {
    while let Some(input) = rx.recv().await {
        match input {
            Input::Data(data) => {
                if stdin.write_all(&data).await.is_err() || stdin.flush().await.is_err() {
                    return;
                }
            }
            Input::Close => return,
        }
        queued.fetch_sub(1, Ordering::AcqRel);
    }
}
