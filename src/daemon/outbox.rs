//! A connection's outgoing messages. A reply is written to the socket by whoever
//! made it (the dispatch, or the job's thread that finished a `sendInput`), without
//! a hop through another task: on a loaded machine every thread woken to pass a message
//! on waits for a core, and a flood in another connection's job keeps the cores busy
//! (bench `rtt-flood`). Only what the socket cannot take at once (a
//! client that does not read, a big reply) is queued for the connection's writer task,
//! which awaits room; while anything is queued, every message queues behind it, so
//! messages leave in the order they were sent. The socket is not in the reactor for
//! writing (halves.rs): the writer task waits for room only while it has something to
//! write.

use std::io;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use super::halves::WriteHalf;
use crate::base::sync::lock;

/// The connection's way out, shared by everything that answers on it.
pub struct Outbox {
    half: Arc<WriteHalf>,
    queue: mpsc::UnboundedSender<Vec<u8>>,
    /// Messages handed to the writer task and not yet written whole. Held while writing
    /// directly, so no direct write overtakes a queued message.
    queued: Mutex<usize>,
}

impl Outbox {
    /// The outbox and its writer task's future (spawned by the caller), which ends once
    /// every clone of the outbox is gone and the queue is written, or the socket fails.
    pub fn new(half: WriteHalf) -> (Arc<Self>, impl std::future::Future<Output = ()>) {
        let half = Arc::new(half);
        let (queue, incoming) = mpsc::unbounded_channel();
        let outbox = Arc::new(Self {
            half: half.clone(),
            queue,
            queued: Mutex::new(0),
        });
        let writer = write_queued(half, incoming, Arc::downgrade(&outbox));
        (outbox, writer)
    }

    /// Sends one frame; `Err` when the connection is gone (nobody to tell).
    pub fn send(&self, frame: Vec<u8>) -> Result<(), ()> {
        let mut queued = lock(&self.queued);
        let mut written = 0;
        if *queued == 0 {
            while written < frame.len() {
                match self.half.try_write(&frame[written..]) {
                    Ok(n) => written += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    // The writer task meets the same error and ends.
                    Err(_) => break,
                }
            }
            if written == frame.len() {
                return Ok(());
            }
        }
        let rest = if written == 0 { frame } else { frame[written..].to_vec() };
        self.queue.send(rest).map_err(|_| ())?;
        *queued += 1;
        Ok(())
    }
}

/// Writes what `send` queued, in order, awaiting room in the socket.
async fn write_queued(
    half: Arc<WriteHalf>,
    mut incoming: mpsc::UnboundedReceiver<Vec<u8>>,
    outbox: std::sync::Weak<Outbox>,
) {
    while let Some(frame) = incoming.recv().await {
        let mut written = 0;
        while written < frame.len() {
            let full = match half.try_write(&frame[written..]) {
                Ok(n) if n > 0 => {
                    written += n;
                    false
                }
                Ok(_) => true,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => false,
                Err(_) => return,
            };
            // Full: wait for room (halves.rs: only now is the socket watched for it).
            if full && half.writable().await.is_err() {
                return;
            }
        }
        if let Some(outbox) = outbox.upgrade() {
            let mut queued = lock(&outbox.queued);
            *queued = queued.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[tokio::test]
    async fn a_frame_the_socket_cannot_take_is_queued_and_everything_leaves_in_order() {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        let stream = tokio::net::UnixStream::from_std(ours).unwrap();
        let (read, write) = super::super::halves::split(stream).unwrap();
        let (outbox, writer) = Outbox::new(write);
        let writing = tokio::spawn(writer);
        // Far more than a socket's buffer: the rest waits for room in the writer task,
        // and the small frame after it queues behind it.
        let big: Vec<u8> = (0..8 << 20).map(|i| (i % 251) as u8).collect();
        outbox.send(big.clone()).unwrap();
        outbox.send(b"after".to_vec()).unwrap();
        drop(outbox);
        let reader = std::thread::spawn(move || {
            let mut all = Vec::new();
            (&theirs).read_to_end(&mut all).unwrap();
            all
        });
        writing.await.unwrap();
        // Both halves gone: the socket closes and the reader sees its end.
        drop(read);
        let all = reader.join().unwrap();
        assert_eq!(all.len(), big.len() + 5);
        assert!(all[..big.len()] == big[..], "the big frame arrives whole and first");
        assert_eq!(&all[big.len()..], b"after");
    }
}
