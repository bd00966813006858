//! Pipes mode: the job's stdin, stdout and stderr are three anonymous pipes, stdout and
//! stderr kept apart. Also the byte movers that ConPTY's two pipes use (`super::conpty`).
//!
//! Why a thread per read end: anonymous pipes (`CreatePipe`) cannot be opened for
//! overlapped I/O, so they cannot join tokio's completion port the way a Unix
//! descriptor joins epoll; a blocking `ReadFile` is the only way to learn that data
//! arrived. So each read end has a small thread that reads into a bounded channel (the
//! bound is the back-pressure: a job that floods waits for the service to take its
//! output, as it would on a full pipe) and the job's task awaits the channel. The
//! threads end at EOF, which comes when every process holding the write end has gone.
//! Writes are rare and may block on a full pipe, so they run on tokio's blocking pool.

use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::ptr;
use std::sync::Arc;

use tokio::sync::mpsc;
use windows_sys::Win32::Foundation::{SetHandleInformation, HANDLE, HANDLE_FLAG_INHERIT};
use windows_sys::Win32::Storage::FileSystem::{ReadFile, WriteFile};
use windows_sys::Win32::System::Pipes::CreatePipe;

use super::job_object::{succeeded, JobTree};
use super::launch::{launch, Console};
use super::ChildProcess;
use crate::platform::buffer::READ_CHUNK;
use crate::platform::{ProcessIo, SpawnSpec};

/// Chunks a reader thread may hold ahead of the job's task.
const CHUNKS_AHEAD: usize = 4;
/// A reader thread's stack: it only moves bytes.
const READER_STACK: usize = 64 * 1024;

/// The receiving end of a reader thread: the chunks it read, handed out in pieces as
/// large as the caller's buffer.
pub(super) struct ChunkReader {
    chunks: mpsc::Receiver<Vec<u8>>,
    pending: Vec<u8>,
    taken: usize,
}

impl ChunkReader {
    /// Starts a thread that reads `source` until EOF or an error (a broken pipe is how
    /// EOF looks on Windows).
    pub(super) fn start(source: OwnedHandle, name: &str) -> io::Result<Self> {
        let (tx, rx) = mpsc::channel(CHUNKS_AHEAD);
        std::thread::Builder::new()
            .name(name.into())
            .stack_size(READER_STACK)
            .spawn(move || pump(source, tx))?;
        Ok(Self {
            chunks: rx,
            pending: Vec::new(),
            taken: 0,
        })
    }

    /// Copies what is there into `buf`; 0 at EOF. Cancel-safe: a chunk is only taken
    /// from the channel in the same poll that copies it, and what did not fit is kept.
    pub(super) async fn read(&mut self, buf: &mut [u8]) -> usize {
        if self.taken >= self.pending.len() {
            match self.chunks.recv().await {
                Some(chunk) => {
                    self.pending = chunk;
                    self.taken = 0;
                }
                None => return 0,
            }
        }
        let rest = &self.pending[self.taken..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.taken += n;
        n
    }
}

fn pump(source: OwnedHandle, tx: mpsc::Sender<Vec<u8>>) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        let mut got = 0u32;
        // SAFETY: the handle is open (owned here); the pointer and length describe `buf`,
        // `got` outlives the call; no OVERLAPPED: a plain blocking read.
        let ok = unsafe {
            ReadFile(
                source.as_raw_handle(),
                buf.as_mut_ptr(),
                buf.len() as u32,
                &mut got,
                ptr::null_mut(),
            )
        };
        // A failed read is a broken pipe (every writer gone) or worse: either way, EOF.
        if ok == 0 || got == 0 {
            return;
        }
        if tx.blocking_send(buf[..got as usize].to_vec()).is_err() {
            // The job let go of its output: nobody reads any more.
            return;
        }
    }
}

/// Writes all of `data` to `sink`, blocking (on the blocking pool).
pub(super) async fn write_blocking(sink: &Arc<OwnedHandle>, data: &[u8]) -> io::Result<()> {
    let sink = sink.clone();
    let data = data.to_vec();
    tokio::task::spawn_blocking(move || {
        let mut written = 0;
        while written < data.len() {
            let rest = &data[written..];
            let mut n = 0u32;
            // SAFETY: the handle is open (the Arc keeps it); the pointer and length
            // describe `rest`; `n` outlives the call.
            let ok = unsafe {
                WriteFile(
                    sink.as_raw_handle(),
                    rest.as_ptr(),
                    rest.len().min(u32::MAX as usize) as u32,
                    &mut n,
                    ptr::null_mut(),
                )
            };
            if ok == 0 {
                return Err(io::Error::last_os_error());
            }
            written += n as usize;
        }
        Ok(())
    })
    .await
    .map_err(io::Error::other)?
}

/// The read end of a job's stdout or stderr.
pub struct PipeReader(ChunkReader);

impl PipeReader {
    /// Reads what is there (0 at EOF). Cancel-safe.
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Ok(self.0.read(buf).await)
    }
}

/// The write end of a job's stdin.
pub struct PipeWriter(Arc<OwnedHandle>);

impl PipeWriter {
    /// `write_all` from `*written` on. Not cancel-safe to the byte (a blocking write
    /// cannot be stopped half way), which only a restart in place needs: Linux only.
    pub async fn write_from(&mut self, data: &[u8], written: &mut usize) -> io::Result<()> {
        let rest = data.get(*written..).unwrap_or_default();
        self.write_all(rest).await?;
        *written = data.len();
        Ok(())
    }

    pub async fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        write_blocking(&self.0, data).await
    }
}

/// An anonymous pipe, neither end inheritable: (read end, write end).
pub(super) fn pipe_pair() -> io::Result<(OwnedHandle, OwnedHandle)> {
    let mut read: HANDLE = ptr::null_mut();
    let mut write: HANDLE = ptr::null_mut();
    // SAFETY: both out-pointers are live locals; no security attributes means the
    // handles are not inheritable; 0 asks for the default buffer size.
    succeeded(unsafe { CreatePipe(&mut read, &mut write, ptr::null(), 0) })?;
    // SAFETY: CreatePipe succeeded, so both handles are open and ours alone.
    Ok(unsafe { (OwnedHandle::from_raw_handle(read), OwnedHandle::from_raw_handle(write)) })
}

/// Lets a child inherit `handle` (only the handles named in its launch are inherited).
pub(super) fn make_inheritable(handle: &OwnedHandle) -> io::Result<()> {
    // SAFETY: the handle is open for the call.
    succeeded(unsafe { SetHandleInformation(handle.as_raw_handle(), HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT) })
}

pub(super) fn spawn(spec: &SpawnSpec<'_>, job: &Arc<JobTree>) -> io::Result<(ChildProcess, u32, ProcessIo)> {
    let (stdin_read, stdin_write) = pipe_pair()?;
    let (stdout_read, stdout_write) = pipe_pair()?;
    let (stderr_read, stderr_write) = pipe_pair()?;
    // Only the child's ends become inheritable, and only for as long as the launch: a
    // process another thread starts meanwhile with inheritance on could take them too
    // (Windows has no close-on-exec), which would only delay this job's EOF.
    for end in [&stdin_read, &stdout_write, &stderr_write] {
        make_inheritable(end)?;
    }
    let launched = launch(spec, Console::Hidden([&stdin_read, &stdout_write, &stderr_write]), job)?;
    // The child's ends close here, so EOF on stdout/stderr means the job's side is gone.
    drop((stdin_read, stdout_write, stderr_write));
    let io = ProcessIo::Pipes {
        stdin: PipeWriter(Arc::new(stdin_write)),
        stdout: PipeReader(ChunkReader::start(stdout_read, "nss-stdout")?),
        stderr: PipeReader(ChunkReader::start(stderr_read, "nss-stderr")?),
    };
    let pid = launched.pid;
    Ok((ChildProcess::new(launched.process), pid, io))
}
