//! PTY mode: a pseudoconsole (ConPTY). The job's process is attached to it; we talk to
//! it through two anonymous pipes, its input and its output (VT sequences, UTF-8).
//!
//! Written here with `windows-sys` rather than through portable-pty (the Unix side's
//! PTY crate), because portable-pty's ConPTY spawn cannot do what every job needs:
//! - it cannot create the process suspended, so the process would run, and could start
//!   others, before it is put in its Job Object (the window `super::launch` closes);
//! - it always passes `PSEUDOCONSOLE_INHERIT_CURSOR`, which makes the pseudoconsole
//!   wait for the hosting terminal to answer a cursor-position query that nobody here
//!   answers (and which Wine 8's conhost rejects outright). We pass no flag.
//!
//! The pseudoconsole's output pipe has a writer for as long as the pseudoconsole is
//! open, whatever the job does, so EOF has to be made: once no process is left in the
//! job's Job Object (the job's own process and anything it left running, the
//! counterpart of every slave descriptor closing on Unix), the pseudoconsole is closed
//! (`close_when_empty`) and the reader sees EOF after the last output. Closing can block
//! until the output pipe is drained, so it never runs on the reader's path or the JS
//! thread: on tokio's blocking pool, or a thread of its own when the terminal is dropped.

use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use windows_sys::Win32::Foundation::{ERROR_INVALID_PARAMETER, HANDLE};
use windows_sys::Win32::System::Console::{ClosePseudoConsole, CreatePseudoConsole, ResizePseudoConsole, COORD, HPCON};
use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE};

use super::job_object::JobTree;
use super::launch::{launch, Console};
use super::pipes::{pipe_pair, write_blocking, ChunkReader};
use super::signaled::signaled;
use super::ChildProcess;
use crate::base::sync::lock;
use crate::platform::{InputState, ProcessIo, Read, ReadBuffer, SpawnSpec};

/// How long to wait before looking again at a member of the job that could not be
/// opened (it was ending as we looked).
const RETRY: Duration = Duration::from_millis(20);

/// A pseudoconsole handle, closed once.
struct PseudoConsole {
    handle: Mutex<Option<HPCON>>,
}

impl PseudoConsole {
    fn take(&self) -> Option<HPCON> {
        lock(&self.handle).take()
    }
}

/// Closes a pseudoconsole; may block until its output has been read.
fn close(console: HPCON) {
    // SAFETY: the handle came from CreatePseudoConsole and was taken out of its
    // `PseudoConsole`, so it is closed exactly once.
    unsafe { ClosePseudoConsole(console) };
}

impl Drop for PseudoConsole {
    fn drop(&mut self) {
        if let Some(console) = self.take() {
            // Off this thread: the reader may not be draining the output any more.
            let closer = std::thread::Builder::new()
                .name("nss-conpty-close".into())
                .stack_size(64 * 1024)
                .spawn(move || close(console));
            if closer.is_err() {
                close(console);
            }
        }
    }
}

/// A job's pseudoconsole: read by the job's reader task, written by its writer task.
pub struct Terminal {
    console: Arc<PseudoConsole>,
    output: tokio::sync::Mutex<ChunkReader>,
    input: Arc<OwnedHandle>,
}

impl Terminal {
    /// The next chunk of output, or EOF once the pseudoconsole is closed.
    pub async fn read(&self, buf: &mut ReadBuffer) -> Read {
        let mut output = self.output.lock().await;
        match output.read(buf.space()).await {
            0 => Read::Eof,
            n => Read::Data(n),
        }
    }

    /// A chunk `read` returned is in the job now. Nothing to count here: whether a
    /// program waits for input is not known on Windows (`input_state`).
    pub fn processed(&self) {}

    /// Writes all of `data` (on the blocking pool: a full input pipe blocks). An error
    /// means the pseudoconsole is gone.
    /// `write_all` from `*written` on. Not cancel-safe to the byte (a blocking write
    /// cannot be stopped half way), which only a restart in place needs: Linux only.
    pub async fn write_from(&self, data: &[u8], written: &mut usize) -> io::Result<()> {
        let rest = data.get(*written..).unwrap_or_default();
        self.write_all(rest).await?;
        *written = data.len();
        Ok(())
    }

    pub async fn write_all(&self, data: &[u8]) -> io::Result<()> {
        write_blocking(&self.input, data).await
    }

    /// Writes nothing and returns 0: an anonymous pipe cannot be written without the risk
    /// of blocking (it has no non-blocking mode worth the name), and this runs on the JS
    /// thread. The caller queues the input for the writer task instead.
    pub fn write_some(&self, _data: &[u8]) -> usize {
        0
    }

    /// Not known on Windows: a console has no foreground process group, and which
    /// process waits in a console read is not exposed. Always the default (not waiting,
    /// no program), so waits end by pattern, exit or delay (docs/windows.md).
    pub fn input_state(&self, _job_pid: i32, _check_awaiting: bool, _name_program: bool) -> InputState {
        InputState::default()
    }

    /// Tells the pseudoconsole its new size; the program sees a console resize event.
    pub fn resize(&self, cols: u16, rows: u16) -> io::Result<()> {
        let guard = lock(&self.console.handle);
        let Some(console) = *guard else {
            return Err(io::Error::other("the terminal is closed"));
        };
        // SAFETY: the handle is open: it is only closed after being taken out under
        // this lock, which is held across the call.
        let result = unsafe { ResizePseudoConsole(console, size(cols, rows)?) };
        if result < 0 {
            return Err(io::Error::other(format!("ResizePseudoConsole failed: {result:#010x}")));
        }
        Ok(())
    }
}

fn size(cols: u16, rows: u16) -> io::Result<COORD> {
    let fit = |n: u16| i16::try_from(n).ok().filter(|&n| n > 0);
    match (fit(cols), fit(rows)) {
        (Some(x), Some(y)) => Ok(COORD { X: x, Y: y }),
        _ => Err(io::Error::from_raw_os_error(ERROR_INVALID_PARAMETER as i32)),
    }
}

pub(super) fn spawn(spec: &SpawnSpec<'_>, job: &Arc<JobTree>) -> io::Result<(ChildProcess, u32, ProcessIo)> {
    let (input_read, input_write) = pipe_pair()?;
    let (output_read, output_write) = pipe_pair()?;
    let mut handle: HPCON = 0;
    // SAFETY: both pipe ends are open for the call (the pseudoconsole duplicates them);
    // `handle` outlives it. Flags 0: see the module comment.
    let created = unsafe {
        CreatePseudoConsole(
            size(spec.cols, spec.rows)?,
            input_read.as_raw_handle(),
            output_write.as_raw_handle(),
            0,
            &mut handle,
        )
    };
    if created < 0 {
        return Err(io::Error::other(format!("CreatePseudoConsole failed: {created:#010x}")));
    }
    let console = Arc::new(PseudoConsole {
        handle: Mutex::new(Some(handle)),
    });
    // Our copies of the pseudoconsole's ends: with them closed, its output reaches EOF
    // once it is closed.
    drop((input_read, output_write));
    let launched = launch(spec, Console::Pseudo(handle), job)?;
    let terminal = Terminal {
        console: console.clone(),
        output: tokio::sync::Mutex::new(ChunkReader::start(output_read, "nss-conpty-out")?),
        input: Arc::new(input_write),
    };
    tokio::spawn(close_when_empty(job.clone(), console));
    Ok((
        ChildProcess::new(launched.process),
        launched.pid,
        ProcessIo::Pty(terminal),
    ))
}

/// Waits until no process is left in the job, then closes the pseudoconsole. Waits on
/// one member at a time (in the system thread pool, `signaled`): when it ends, the job
/// is looked at again.
async fn close_when_empty(job: Arc<JobTree>, console: Arc<PseudoConsole>) {
    // An error listing the job's processes ends the wait too: better an early EOF than
    // a terminal that never closes.
    while let Some(pid) = job.pids().ok().and_then(|pids| pids.first().copied()) {
        match open_member(&job, pid) {
            Some(process) => {
                if signaled(&process).await.is_err() {
                    tokio::time::sleep(RETRY).await;
                }
            }
            None => tokio::time::sleep(RETRY).await,
        }
    }
    if let Some(handle) = console.take() {
        let _ = tokio::task::spawn_blocking(move || close(handle)).await;
    }
}

/// A handle to process `pid` if it is (still) a member of `job`: the pid may have been
/// reused between the listing and the opening.
fn open_member(job: &JobTree, pid: u32) -> Option<OwnedHandle> {
    // SAFETY: plain call with a pid; a null result means it could not be opened.
    let handle: HANDLE = unsafe { OpenProcess(PROCESS_SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if handle.is_null() {
        return None;
    }
    // SAFETY: OpenProcess returned an open handle that nothing else owns.
    let process = unsafe { OwnedHandle::from_raw_handle(handle) };
    job.holds(process.as_raw_handle()).then_some(process)
}
