//! A PTY master in the tokio reactor (epoll or kqueue): read by the job's reader task,
//! written by its writer task and, when nothing is queued, by the caller directly. The
//! reactor watches it for reading only: a write that would block waits for room apart
//! (write_room.rs), so the program reading its input wakes nobody.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

use rustix::io::Errno;
use rustix::termios::{tcsetwinsize, Winsize};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use crate::platform::{InputState, Read, ReadBuffer};

pub struct Terminal {
    /// In the reactor for reading only. Registered for writing too, epoll would report
    /// the new terminal writable at once (its edge-triggered registration says so),
    /// waking a runtime worker at every spawn for an event nobody waits for.
    master: AsyncFd<OwnedFd>,
    /// Chunks read from the terminal and not yet in the job (`processed`), counted
    /// from before the read takes them: between the two, output is neither in the
    /// terminal nor seen by the job's waits, and a look for a program waiting for
    /// input (`input_state`) would miss the prompt it printed before its read.
    in_hand: AtomicU32,
}

impl Terminal {
    /// Takes a non-blocking master descriptor. Must run inside a tokio runtime.
    pub fn new(master: OwnedFd) -> io::Result<Self> {
        // Readable only: see the module's doc.
        // SAFETY: the descriptor moves into the AsyncFd and stays open, unchanged, for
        // its whole life.
        let master = unsafe { AsyncFd::register_with_interest(master, Interest::READABLE) }
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(Self {
            master,
            in_hand: AtomicU32::new(0),
        })
    }

    pub fn raw_fd(&self) -> RawFd {
        self.master.get_ref().as_raw_fd()
    }

    /// The next chunk of output, or EOF once every slave descriptor is closed.
    pub async fn read(&self, buf: &mut ReadBuffer) -> Read {
        loop {
            let Ok(mut guard) = self.master.readable().await else {
                return Read::Eof;
            };
            // Counted before the read takes anything; uncounted below if it took
            // nothing, else by `processed` once the job has the chunk.
            self.in_hand.fetch_add(1, Ordering::SeqCst);
            let read = guard.try_io(|inner| read_available(inner.as_fd(), buf));
            if !matches!(read, Ok(Ok(Gathered { bytes: 1.., .. }))) {
                self.processed();
            }
            match read {
                Ok(Ok(Gathered { bytes: 0, .. })) => return Read::Eof,
                Ok(Ok(Gathered { bytes, drained })) => {
                    // The gathering read already saw EAGAIN: forget the readiness now,
                    // so the next call waits in the reactor instead of paying a read
                    // that can only fail (one syscall per wake-up on chatty prompts).
                    if drained {
                        guard.clear_ready();
                    }
                    return Read::Data(bytes);
                }
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                // EIO on a PTY master means every slave descriptor is closed: EOF.
                Ok(Err(_)) => return Read::Eof,
                Err(_would_block) => continue,
            }
        }
    }

    /// A chunk `read` returned is in the job now (its text, its waits, its files).
    pub fn processed(&self) {
        let _ = self
            .in_hand
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    }

    /// Writes all of `data`, waiting for room when the terminal's input queue is full
    /// (so large pastes are neither dropped nor blocking a thread). An error means the
    /// terminal is gone.
    pub async fn write_all(&self, data: &[u8]) -> io::Result<()> {
        self.write_from(data, &mut 0).await
    }

    /// `write_all` from `*written` on, counting every write in `*written` as it lands:
    /// cancelled at an await, it has written exactly `data[..*written]`, so a writer
    /// that stands still for a restart in place hands over the rest and no byte twice.
    pub async fn write_from(&self, data: &[u8], written: &mut usize) -> io::Result<()> {
        while *written < data.len() {
            match rustix::io::write(self.master.get_ref(), &data[*written..]) {
                Ok(n) if n > 0 => *written += n,
                Err(Errno::INTR) => {}
                // Full (or a write that took nothing): wait for room.
                Ok(_) | Err(Errno::AGAIN) => super::write_room::room(self.master.get_ref().as_fd()).await?,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Writes what the terminal takes at once; returns how many bytes (0 when it is
    /// full or gone: the caller queues the rest).
    pub fn write_some(&self, data: &[u8]) -> usize {
        let mut written = 0;
        while written < data.len() {
            match rustix::io::write(self.master.get_ref(), &data[written..]) {
                Ok(n) if n > 0 => written += n,
                Err(Errno::INTR) => {}
                _ => break,
            }
        }
        written
    }

    /// Who reads the terminal: see `InputState`. `check_awaiting`: look whether a
    /// process of the foreground group (the job's, led by `session_leader`) is blocked
    /// reading it; `name_program`: name the foreground program.
    pub fn input_state(&self, session_leader: i32, check_awaiting: bool, name_program: bool) -> InputState {
        let mut state =
            crate::platform::os::input_wait::input_state(self.raw_fd(), session_leader, check_awaiting, name_program);
        // Read after the terminal was found empty: output taken from it before then
        // is either counted here or already in the job (where its arrival resets the
        // job's quiet time, which the caller checks after this).
        state.awaiting &= self.in_hand.load(Ordering::SeqCst) == 0;
        state
    }

    /// Tells the terminal (and so the program, by SIGWINCH) its new size.
    pub fn resize(&self, cols: u16, rows: u16) -> io::Result<()> {
        let size = Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        Ok(tcsetwinsize(self.master.get_ref(), size)?)
    }
}

/// What one wake-up read: `drained` when the last read found the terminal empty.
struct Gathered {
    bytes: usize,
    drained: bool,
}

/// Reads what is available now, up to a whole chunk: a PTY hands over at most 4 KiB
/// per read, so one chunk for the job is gathered from several reads while more is
/// already waiting — fewer ingests, locks and file writes per MiB, and no waiting
/// for data that has not arrived. WouldBlock only if nothing at all was read.
fn read_available(fd: BorrowedFd<'_>, buf: &mut ReadBuffer) -> io::Result<Gathered> {
    let mut n = rustix::io::read(fd, buf.space())?;
    if n == 0 {
        return Ok(Gathered {
            bytes: 0,
            drained: false,
        });
    }
    loop {
        // The first read can fill the small buffer; gathering goes on in the large one.
        buf.grow_if_full(n);
        let space = &mut buf.space()[n..];
        if space.is_empty() {
            break;
        }
        match rustix::io::read(fd, space) {
            Ok(0) => break,
            Ok(more) => n += more,
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => {
                return Ok(Gathered {
                    bytes: n,
                    drained: true,
                })
            }
            // EIO (EOF): deliver what was read; the next read sees it again.
            Err(_) => break,
        }
    }
    Ok(Gathered {
        bytes: n,
        drained: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::{fcntl_setfl, open, Mode, OFlags};
    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};

    #[tokio::test]
    async fn a_chunk_read_is_in_hand_until_the_job_has_it() {
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("openpt");
        grantpt(&master).expect("grantpt");
        unlockpt(&master).expect("unlockpt");
        let name = ptsname(&master, Vec::new()).expect("ptsname");
        let slave = open(name.as_c_str(), OFlags::RDWR | OFlags::NOCTTY, Mode::empty()).expect("slave");
        fcntl_setfl(&master, OFlags::NONBLOCK).expect("non-blocking");
        let terminal = Terminal::new(master).expect("terminal");
        let mut buf = ReadBuffer::new();
        for _ in 0..3 {
            assert_eq!(rustix::io::write(&slave, b"> ").expect("write"), 2);
            assert!(matches!(terminal.read(&mut buf).await, Read::Data(2)));
            assert_eq!(terminal.in_hand.load(Ordering::SeqCst), 1, "read, not yet in the job");
            terminal.processed();
            assert_eq!(terminal.in_hand.load(Ordering::SeqCst), 0, "in the job");
        }
        // Told twice of one chunk (a bug elsewhere): never below nothing in hand.
        terminal.processed();
        assert_eq!(terminal.in_hand.load(Ordering::SeqCst), 0);
    }
}
