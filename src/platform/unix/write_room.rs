//! Waiting for room to write on a descriptor the reactor watches for reading only.
//!
//! A descriptor registered for writing too is woken each time its buffer gains room,
//! whether anybody waits to write or not: a PTY master each time the program reads a
//! byte of its input (Python's line editor reads a line byte by byte: five to seven
//! wake-ups of the reader's thread per `sendInput` round trip, each preempting the
//! program where that thread asks for short turns, src/daemon/latency.rs), a unix
//! socket each time its peer reads a reply. Writes are tried directly and almost always
//! fit; only one that would block waits, on a duplicate of the descriptor registered
//! for writing alone, for the time of that wait. (epoll tells registrations apart by
//! descriptor, so the original's stays as it was; registering a descriptor that is
//! writable already reports it at once, so room that came between the failed write and
//! the registration is not missed.)

use std::io;
use std::os::fd::BorrowedFd;

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// Returns once `fd` has room to write (or an error: the descriptor could not be
/// duplicated or registered). The caller writes again; it may find the room taken by
/// another writer and wait again. Must run inside a tokio runtime.
pub async fn room(fd: BorrowedFd<'_>) -> io::Result<()> {
    let dup = fd.try_clone_to_owned()?;
    // SAFETY: the duplicate moves into the AsyncFd, which owns it (and closes it) for
    // its whole life.
    let watched = unsafe { AsyncFd::register_with_interest(dup, Interest::WRITABLE) }
        .map_err(|e| io::Error::other(e.to_string()))?;
    let _ready = watched.writable().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    #[tokio::test]
    async fn waits_until_the_peer_reads_then_returns() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        // Fill the socket until a write would block.
        let chunk = [0u8; 4096];
        loop {
            match rustix::io::write(ours.as_fd(), &chunk) {
                Ok(_) => {}
                Err(rustix::io::Errno::AGAIN) => break,
                Err(e) => panic!("{e}"),
            }
        }
        let wait = tokio::spawn(async move {
            room(ours.as_fd()).await.unwrap();
            ours
        });
        // Not before the peer reads (a wait that returned at once would be done by now
        // on any machine: the check is only that it is still waiting).
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!wait.is_finished(), "room reported while the socket was full");
        let reader = std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 20];
            let _ = std::io::Read::read(&mut &theirs, &mut buf);
            theirs
        });
        let ours = wait.await.unwrap();
        assert!(rustix::io::write(ours.as_fd(), b"x").is_ok());
        drop(reader.join().unwrap());
    }

    #[tokio::test]
    async fn room_already_there_is_reported_at_once() {
        let (ours, _theirs) = UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        room(ours.as_fd()).await.unwrap();
    }
}
