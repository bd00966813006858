//! Processing a flood's output beside the reading of it.
//!
//! A PTY hands over at most 4 KiB per read, each one a round trip with the kernel's
//! tty worker, which refills the line discipline only after a read made room. While
//! the reader processes what it gathered (text, screen, file: ~2.5 ms per MiB), no
//! round trip happens and the writer soon waits on a full terminal. So during a
//! flood, chunks go to another thread and the reader goes straight back to reading.
//!
//! That thread is a thread of its own (`crate::job::flood_threads`, at a lower
//! scheduling weight so the JS thread gets a core first), not a task: a task woken by
//! the reader would run on the reader's own worker thread (tokio runs a task woken from
//! a task next, on the same thread), so the reading would wait for the processing
//! all the same. Measured on 2 cores, `cat` of 64 MiB: a task 59 MiB/s, a thread 64.
//! The thread is held only while chunks are queued, so idle jobs hold none, and at
//! most one per core processes floods at a time: more cannot go faster, so a job that
//! finds them all taken processes in place, as before.
//!
//! Small chunks (interactive output) are still processed in place when nothing is
//! queued, so a prompt is matched with no extra hop, and order is kept: a chunk is
//! only processed in place once everything handed off before it has been processed.

use std::collections::VecDeque;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::job::{flood_threads, Job};
use crate::output::persist::Stream;
use crate::platform::Terminal;

/// Chunks at least this large (the reader found more waiting than one read gives)
/// are handed off.
const HANDOFF_MIN_BYTES: usize = 16 * 1024;
/// Chunks queued or being processed at most; then the reader waits, and so, through
/// the full terminal, does the writer. Bounds the memory in flight to this many read
/// buffers.
const QUEUE_CHUNKS: u32 = 4;

/// Flood threads processing floods at once, over all jobs: one per core.
static PROCESSORS: LazyLock<Arc<Semaphore>> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    Arc::new(Semaphore::new(cores))
});

pub struct Handoff {
    shared: Arc<Shared>,
    /// One permit per chunk queued or being processed: all of them free means
    /// everything handed off has been processed.
    slots: Arc<Semaphore>,
}

struct Shared {
    job: Arc<Job>,
    /// Told of each chunk once it is in the job (`Terminal::processed`).
    terminal: Arc<Terminal>,
    queue: Mutex<Queue>,
}

#[derive(Default)]
struct Queue {
    chunks: VecDeque<(Vec<u8>, OwnedSemaphorePermit)>,
    /// A flood thread is processing the queue; it clears this, under the same lock,
    /// when it finds the queue empty and leaves.
    worker_running: bool,
}

impl Shared {
    fn ingest(&self, chunk: &[u8]) {
        self.job.ingest(Stream::Stdout, chunk);
        self.terminal.processed();
    }

    fn queue(&self) -> MutexGuard<'_, Queue> {
        // The queue holds plain data: a panic elsewhere leaves it consistent.
        self.queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs on a flood thread until the queue is empty.
    fn process_queue(&self) {
        let _unwind = ClearOnUnwind(self);
        loop {
            let next = {
                let mut queue = self.queue();
                let next = queue.chunks.pop_front();
                if next.is_none() {
                    queue.worker_running = false;
                }
                next
            };
            let Some((chunk, slot)) = next else { return };
            self.ingest(&chunk);
            // Freed only once the chunk is in the job, so `drain` and in-place
            // processing see it there.
            drop(slot);
        }
    }
}

/// If processing a chunk panics (a bug), the queue is released, so the next chunk starts
/// a new worker instead of the reader waiting forever for this one.
struct ClearOnUnwind<'a>(&'a Shared);

impl Drop for ClearOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.queue().worker_running = false;
        }
    }
}

impl Handoff {
    pub fn new(job: Arc<Job>, terminal: Arc<Terminal>) -> Self {
        Self {
            shared: Arc::new(Shared {
                job,
                terminal,
                queue: Mutex::new(Queue::default()),
            }),
            slots: Arc::new(Semaphore::new(QUEUE_CHUNKS as usize)),
        }
    }

    fn nothing_in_flight(&self) -> bool {
        self.slots.available_permits() == QUEUE_CHUNKS as usize
    }

    /// Gives the job a chunk of its terminal output, in order.
    pub async fn push(&mut self, chunk: &[u8]) {
        if chunk.len() < HANDOFF_MIN_BYTES && self.nothing_in_flight() {
            self.shared.ingest(chunk);
            return;
        }
        let Ok(slot) = self.slots.clone().acquire_owned().await else {
            // Never closed; if it were, processing in place still keeps every byte.
            self.shared.ingest(chunk);
            return;
        };
        let start_worker = {
            let mut queue = self.shared.queue();
            queue.chunks.push_back((chunk.to_vec(), slot));
            !std::mem::replace(&mut queue.worker_running, true)
        };
        if start_worker && !self.start_worker() {
            // Every core is processing another flood: this one is processed here.
            self.shared.process_queue();
        }
    }

    /// Hands the queue to a flood thread, if a core is free for it.
    fn start_worker(&self) -> bool {
        let Ok(core) = PROCESSORS.clone().try_acquire_owned() else {
            return false;
        };
        let shared = self.shared.clone();
        // The processing runs in the runtime's context, as it does on the reader.
        let runtime = tokio::runtime::Handle::try_current().ok();
        flood_threads::run(Box::new(move || {
            let _context = runtime.as_ref().map(|r| r.enter());
            shared.process_queue();
            drop(core);
        }))
    }

    /// Resolves once every chunk pushed so far has been processed.
    pub async fn drain(&mut self) {
        if let Ok(all) = self.slots.acquire_many(QUEUE_CHUNKS).await {
            drop(all);
        }
    }
}
