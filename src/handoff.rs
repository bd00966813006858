//! Processing a flood's output beside the reading of it.
//!
//! A PTY hands over at most 4 KiB per read, each one a round trip with the kernel's
//! tty worker, which refills the line discipline only after a read made room. While
//! the reader processes what it gathered (text, screen, file: ~2.5 ms per MiB), no
//! round trip happens and the writer soon waits on a full terminal. So during a
//! flood, chunks go to a second task and the reader goes straight back to reading.
//!
//! Small chunks (interactive output) are still processed in place when nothing is
//! queued, so a prompt is matched with no extra hop, and order is kept: a chunk is
//! only processed in place once everything handed off before it has been processed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::job::Job;
use crate::output::persist::Stream;

/// Chunks at least this large (the reader found more waiting than one read gives)
/// are handed off.
const HANDOFF_MIN_BYTES: usize = 16 * 1024;
/// Chunks queued at most; then the reader waits, and so, through the full terminal,
/// does the writer. Bounds the memory in flight to this many read buffers.
const QUEUE_CHUNKS: usize = 4;

pub struct Handoff {
    job: Arc<Job>,
    /// Chunks sent and not yet processed.
    in_flight: Arc<AtomicUsize>,
    worker: Option<(mpsc::Sender<Vec<u8>>, JoinHandle<()>)>,
}

impl Handoff {
    pub fn new(job: Arc<Job>) -> Self {
        Self {
            job,
            in_flight: Arc::new(AtomicUsize::new(0)),
            worker: None,
        }
    }

    /// Gives the job a chunk of its terminal output, in order.
    pub async fn push(&mut self, chunk: &[u8]) {
        if chunk.len() < HANDOFF_MIN_BYTES && self.in_flight.load(Ordering::Acquire) == 0 {
            self.job.ingest(Stream::Stdout, chunk);
            return;
        }
        let (tx, _) = self
            .worker
            .get_or_insert_with(|| spawn_worker(self.job.clone(), self.in_flight.clone()));
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        if let Err(returned) = tx.send(chunk.to_vec()).await {
            // The worker is gone (it panicked): nothing else can process the chunk.
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
            self.job.ingest(Stream::Stdout, &returned.0);
        }
    }

    /// Resolves once every chunk pushed so far has been processed.
    pub async fn drain(&mut self) {
        if let Some((tx, worker)) = self.worker.take() {
            drop(tx);
            let _ = worker.await;
        }
    }
}

fn spawn_worker(job: Arc<Job>, in_flight: Arc<AtomicUsize>) -> (mpsc::Sender<Vec<u8>>, JoinHandle<()>) {
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(QUEUE_CHUNKS);
    let worker = tokio::spawn(async move {
        while let Some(chunk) = rx.recv().await {
            job.ingest(Stream::Stdout, &chunk);
            in_flight.fetch_sub(1, Ordering::AcqRel);
        }
    });
    (tx, worker)
}
