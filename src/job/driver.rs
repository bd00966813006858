//! The reader of one job: moves bytes from the PTY master or the pipes into the job,
//! notices the exit, drains what is still in flight, and only then publishes the exit.
//!
//! Each job is a task on the shared tokio runtime, reading through the platform's
//! `Terminal` or `PipeReader`; on Unix that is a descriptor in the reactor (epoll,
//! kqueue), not a thread, so an idle job costs nothing until it has output.

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::job::handoff::Handoff;
use crate::job::{Job, SCREEN_SETTLE};
use crate::output::persist::Stream;
use crate::platform::{
    background_roots, job_processes, ChildProcess, Exit, PipeReader, PipeWriter, ProcessIo, Read, ReadBuffer, Terminal,
};

/// After the exit, output still held open by background processes is read until it
/// has been quiet this long...
const DRAIN_QUIET: Duration = Duration::from_millis(25);
/// ...or for at most this long, so a chatty background server cannot delay the result.
const DRAIN_MAX: Duration = Duration::from_millis(250);

pub use crate::job::OnExit;

/// The end of a job's I/O its reader task reads.
pub enum Reader {
    Pty(Arc<Terminal>),
    Pipes { stdout: PipeReader, stderr: PipeReader },
}

/// The end of a job's I/O its writer task writes caller input to.
pub enum Writer {
    Pty(Arc<Terminal>),
    Pipe(PipeWriter),
}

/// Splits a started process's I/O: the terminal the job keeps (for resizing, direct
/// writes and input detection; PTY mode only), the writer's end and the reader's.
pub fn split(io: ProcessIo) -> (Option<Arc<Terminal>>, Writer, Reader) {
    match io {
        ProcessIo::Pty(terminal) => {
            let terminal = Arc::new(terminal);
            (
                Some(terminal.clone()),
                Writer::Pty(terminal.clone()),
                Reader::Pty(terminal),
            )
        }
        ProcessIo::Pipes { stdin, stdout, stderr } => (None, Writer::Pipe(stdin), Reader::Pipes { stdout, stderr }),
    }
}

/// Reads the job's output until its exit is published and its output closed (or the
/// job is closed).
pub async fn drive(job: Arc<Job>, child: ChildProcess, reader: Reader, on_exit: OnExit) {
    let reader = match reader {
        Reader::Pty(terminal) => Reader::Pty(drive_pty(job.clone(), child, terminal, on_exit).await),
        Reader::Pipes { stdout, stderr } => {
            let pipes = drive_pipes(job.clone(), child, stdout, stderr, on_exit).await;
            Reader::Pipes {
                stdout: pipes.stdout,
                stderr: pipes.stderr,
            }
        }
    };
    // Closed with the job's descriptor slots emptied first (`freeze`): a restart never
    // takes a number closed here for the job's.
    job.freeze.reader_ended(move || drop(reader));
}

/// The descriptors of a job's reader, as `Freeze` lists them.
#[cfg(unix)]
pub fn reader_fds(reader: &Reader) -> (Option<i32>, Option<i32>, Option<i32>) {
    use std::os::fd::AsRawFd;
    match reader {
        Reader::Pty(terminal) => (Some(terminal.raw_fd()), None, None),
        Reader::Pipes { stdout, stderr } => (None, Some(stdout.as_raw_fd()), Some(stderr.as_raw_fd())),
    }
}

/// Windows: no restart in place, nothing listed.
#[cfg(not(unix))]
pub fn reader_fds(_reader: &Reader) -> (Option<i32>, Option<i32>, Option<i32>) {
    (None, None, None)
}

/// Windows: see `reader_fds`.
#[cfg(not(unix))]
pub fn writer_fd(_writer: &Writer) -> Option<i32> {
    None
}

/// The descriptor of a pipes job's stdin (a PTY job's is its terminal).
#[cfg(unix)]
pub fn writer_fd(writer: &Writer) -> Option<i32> {
    use std::os::fd::AsRawFd;
    match writer {
        Writer::Pty(_) => None,
        Writer::Pipe(stdin) => Some(stdin.as_raw_fd()),
    }
}

/// Reads what background processes write after a carried job's exit (a restart in
/// place took it over finished, its output still open), until EOF or the job closes.
pub async fn drive_after_exit(job: Arc<Job>, reader: Reader) {
    let reader = match reader {
        Reader::Pty(terminal) => {
            let mut output = Handoff::new(job.clone(), terminal.clone());
            let mut buf = ReadBuffer::new();
            read_pty_after_exit(&job, &terminal, &mut buf, &mut output, false).await;
            Reader::Pty(terminal)
        }
        Reader::Pipes { stdout, stderr } => {
            let mut pipes = Pipes::new(stdout, stderr);
            read_pipes_after_exit(&job, &mut pipes).await;
            Reader::Pipes {
                stdout: pipes.stdout,
                stderr: pipes.stderr,
            }
        }
    };
    job.freeze.reader_ended(move || drop(reader));
}

async fn background_pids(job: &Arc<Job>) -> Vec<u32> {
    let job = job.clone();
    let scan = tokio::task::spawn_blocking(move || {
        let procs = job_processes(&job.meta.identity());
        background_roots(&procs, job.meta.pid as i32)
    });
    scan.await.unwrap_or_default()
}

async fn publish_exit(job: &Arc<Job>, exit: io::Result<Exit>, output_closed: bool, on_exit: OnExit) {
    // Output still open after the exit means something else holds it: a background job.
    // A daemon that closed its descriptors holds none, but stays in the job's group or
    // cgroup (one signal-0 and one small read to ask).
    // A status is had only by reaping the process (`ChildProcess::wait`, `exited_now`).
    let left = if exit.is_ok() {
        crate::platform::anything_left_after_reap
    } else {
        crate::platform::anything_left
    };
    let nothing_left = output_closed && !left(&job.meta.identity());
    let background = if nothing_left {
        Vec::new()
    } else {
        background_pids(job).await
    };
    // Before the exit is published, so the result names what was put back and no
    // caller that saw the exit can run git first: git's hooks and configuration the
    // job changed (`platform::GitGuard`). The hold is given up once nothing of the job
    // runs, else when the job is forgotten. Here, not on the blocking pool: a few
    // `stat`s when nothing changed, less than the hand-over to another thread.
    if let Some(hold) = &job.meta.git_hold {
        if nothing_left {
            hold.release();
        } else {
            hold.check();
        }
    }
    job.finish(exit, background, output_closed, nothing_left, on_exit);
    if nothing_left {
        // No process of the job can use its TMPDIR any more: handed back now, so a
        // finished job kept in memory does not hold a directory (`JobTmpDir::release`);
        // another job may have it only if no process of this one can be left anywhere.
        if let Some(tmpdir) = &job.meta.tmpdir {
            // A cgroup held all it started: empty, nothing of it is left anywhere.
            let contained = job.meta.containment.mode() == crate::platform::ContainmentMode::Cgroup;
            tmpdir.release(contained);
        }
    }
}

/// The exit, if the job's process is a zombie already when its terminal hangs up (or
/// its output pipes close): a process closes them as it exits, a little before it
/// becomes a zombie, so a short job's exit is taken here with one `waitpid` and no
/// other thread's wake-up. If it is still exiting (or runs on with its output closed),
/// the ring is asked at once rather than at `RING_AFTER` (src/platform/linux/child.rs).
fn exit_at_hang_up(child: &mut ChildProcess) -> Option<io::Result<Exit>> {
    if let Some(exit) = child.exited_now() {
        return Some(exit);
    }
    child.arm_now();
    None
}

async fn drive_pty(job: Arc<Job>, mut child: ChildProcess, terminal: Arc<Terminal>, on_exit: OnExit) -> Arc<Terminal> {
    let mut buf = ReadBuffer::new();
    let mut output = Handoff::new(job.clone(), terminal.clone());
    let mut eof = false;
    let exit = {
        // Armed by output, fired by SCREEN_SETTLE of quiet: the screen's lines are
        // committed. An idle job has no timer armed.
        let settle = tokio::time::sleep(SCREEN_SETTLE);
        tokio::pin!(settle);
        let mut armed = false;
        loop {
            tokio::select! {
                biased;
                // A restart in place: everything read is in the job before it stands
                // still; the exit is not taken (the next image takes it).
                _ = job.freeze.requested() => {
                    output.drain().await;
                    let wait = child.wait();
                    tokio::pin!(wait);
                    if let Some(status) = job.freeze.hold_or_exit(wait.as_mut(), |e| *e).await {
                        break status;
                    }
                }
                read = terminal.read(&mut buf), if !eof => match read {
                    Read::Data(n) => {
                        output.push(buf.filled(n)).await;
                        settle.as_mut().reset(tokio::time::Instant::now() + SCREEN_SETTLE);
                        armed = true;
                    }
                    Read::Eof => {
                        eof = true;
                        if let Some(exit) = exit_at_hang_up(&mut child) {
                            break exit;
                        }
                    }
                },
                status = child.wait() => break status,
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
        match tokio::time::timeout(DRAIN_QUIET, terminal.read(&mut buf)).await {
            Ok(Read::Data(n)) => output.push(buf.filled(n)).await,
            Ok(Read::Eof) => eof = true,
            Err(_quiet) => break,
        }
    }
    // Every byte read is in the job before the exit is published.
    output.drain().await;
    publish_exit(&job, exit, eof, on_exit).await;
    read_pty_after_exit(&job, &terminal, &mut buf, &mut output, eof).await;
    terminal
}

/// Background processes may keep writing to the terminal after the exit; their
/// output is kept until EOF or the job closes.
async fn read_pty_after_exit(
    job: &Arc<Job>,
    terminal: &Terminal,
    buf: &mut ReadBuffer,
    output: &mut Handoff,
    mut eof: bool,
) {
    while !eof {
        tokio::select! {
            biased;
            _ = job.freeze.requested() => {
                output.drain().await;
                job.freeze.hold().await;
            }
            read = terminal.read(buf) => match read {
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
    stdout: PipeReader,
    stderr: PipeReader,
    out_buf: ReadBuffer,
    err_buf: ReadBuffer,
    out_open: bool,
    err_open: bool,
}

impl Pipes {
    fn new(stdout: PipeReader, stderr: PipeReader) -> Self {
        Self {
            stdout,
            stderr,
            out_buf: ReadBuffer::new(),
            err_buf: ReadBuffer::new(),
            out_open: true,
            err_open: true,
        }
    }

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

async fn drive_pipes(
    job: Arc<Job>,
    mut child: ChildProcess,
    stdout: PipeReader,
    stderr: PipeReader,
    on_exit: OnExit,
) -> Pipes {
    let mut pipes = Pipes::new(stdout, stderr);
    let exit = loop {
        tokio::select! {
            biased;
            // A restart in place (see drive_pty): each step ingests what it read.
            _ = job.freeze.requested() => {
                let wait = child.wait();
                tokio::pin!(wait);
                if let Some(status) = job.freeze.hold_or_exit(wait.as_mut(), |e| *e).await {
                    break status;
                }
            }
            _ = pipes.step(&job), if pipes.open() => {
                if !pipes.open() {
                    if let Some(exit) = exit_at_hang_up(&mut child) {
                        break exit;
                    }
                }
            }
            status = child.wait() => break status,
        }
    };
    let deadline = Instant::now() + DRAIN_MAX;
    while pipes.open() && Instant::now() < deadline {
        if tokio::time::timeout(DRAIN_QUIET, pipes.step(&job)).await.is_err() {
            break;
        }
    }
    publish_exit(&job, exit, !pipes.open(), on_exit).await;
    read_pipes_after_exit(&job, &mut pipes).await;
    pipes
}

/// Background processes may keep writing to the pipes; keep their output.
async fn read_pipes_after_exit(job: &Arc<Job>, pipes: &mut Pipes) {
    while pipes.open() {
        tokio::select! {
            biased;
            _ = job.freeze.requested() => job.freeze.hold().await,
            _ = pipes.step(job) => {}
            _ = job.closed() => break,
        }
    }
}
