//! The reader's buffer and the outcome of one read: the vocabulary the backends' readers
//! and the shared driver (`crate::job::driver`) speak.

/// The most a reader hands the job in one chunk.
pub const READ_CHUNK: usize = 64 * 1024;

/// A reader's buffer: small until the job floods, so the many jobs that print a few
/// lines do not each allocate and zero `READ_CHUNK` (two of them in pipes mode).
pub struct ReadBuffer(Vec<u8>);

impl Default for ReadBuffer {
    fn default() -> Self {
        Self::new()
    }
}

impl ReadBuffer {
    const FIRST: usize = 4096;

    pub fn new() -> Self {
        Self(vec![0; Self::FIRST])
    }

    pub fn space(&mut self) -> &mut [u8] {
        &mut self.0
    }

    /// Makes the buffer `READ_CHUNK` once `n` bytes filled it: the job is flooding.
    pub fn grow_if_full(&mut self, n: usize) {
        if n == self.0.len() && n < READ_CHUNK {
            self.0.resize(READ_CHUNK, 0);
        }
    }

    /// The `n` bytes just read (a full buffer grows for the next read).
    pub fn filled(&mut self, n: usize) -> &[u8] {
        self.grow_if_full(n);
        &self.0[..n]
    }
}

/// One read from a job's terminal.
pub enum Read {
    /// This many bytes are at the start of the buffer.
    Data(usize),
    /// Every writer is gone.
    Eof,
}
