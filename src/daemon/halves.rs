//! A connection's socket in two halves: the reading half in the reactor for reading
//! only, the writing half out of it. tokio's `UnixStream` registers for writing too, so
//! every reply the client read woke the connection's thread once more for room nobody
//! waited for (a wake-up per round trip, each a wait for a core on a busy machine:
//! docs/daemon.md, "Round trips"). Replies are written directly (outbox.rs); one that
//! would block waits for room apart (src/platform/unix/write_room.rs).

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, Interest, ReadBuf};
use tokio::net::UnixStream;

/// Splits a connection (it must be in the runtime's reactor, as tokio's streams are).
pub fn split(stream: UnixStream) -> io::Result<(ReadHalf, WriteHalf)> {
    // Out of tokio's registration (and its write interest); stays non-blocking.
    let std = stream.into_std()?;
    let fd = OwnedFd::from(std);
    let write = fd.try_clone()?;
    // SAFETY: the descriptor moves into the AsyncFd and stays open, unchanged, for its
    // whole life.
    let read = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }
        .map_err(|e| io::Error::other(e.to_string()))?;
    Ok((ReadHalf(read), WriteHalf(write)))
}

/// What the connection reads requests from.
pub struct ReadHalf(AsyncFd<OwnedFd>);

impl AsyncRead for ReadHalf {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.0.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            let asked = unfilled.len();
            match guard.try_io(|fd| Ok(rustix::io::read(fd.get_ref(), &mut *unfilled)?)) {
                Ok(Ok(n)) => {
                    // A read shorter than asked drained the socket: the next read waits
                    // in the reactor instead of paying a call that finds nothing (as
                    // tokio's own streams do; a message that came meanwhile set a newer
                    // readiness, which this does not clear).
                    if n > 0 && n < asked {
                        guard.clear_ready();
                    }
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => {}
            }
        }
    }
}

/// What replies are written to, by whichever thread made them (outbox.rs).
pub struct WriteHalf(OwnedFd);

impl WriteHalf {
    /// Writes what the socket takes now (never waits): `WouldBlock` when it is full.
    pub fn try_write(&self, bytes: &[u8]) -> io::Result<usize> {
        // NOSIGNAL: a client gone is an error here, not a SIGPIPE for the daemon.
        // (libc's `send`: this crate's rustix is built without its sockets.)
        // SAFETY: a valid descriptor of ours and a buffer of `bytes.len()` readable bytes.
        let n = unsafe {
            libc::send(
                self.0.as_raw_fd(),
                bytes.as_ptr().cast(),
                bytes.len(),
                libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n as usize)
    }

    /// Returns once the socket has room (or it failed).
    pub async fn writable(&self) -> io::Result<()> {
        crate::platform::write_room(self.0.as_fd()).await
    }
}

impl AsFd for WriteHalf {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn halves_carry_both_ways_and_end_at_the_peers_close() {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        let (mut read, write) = split(ours).unwrap();
        theirs.write_all(b"request").await.unwrap();
        let mut buf = [0u8; 64];
        let n = read.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"request");
        assert_eq!(write.try_write(b"reply").unwrap(), 5);
        let n = theirs.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"reply");
        drop(theirs);
        assert_eq!(read.read(&mut buf).await.unwrap(), 0);
        assert!(
            write.try_write(b"more").is_err(),
            "a write to a closed peer fails (no SIGPIPE)"
        );
    }
}
