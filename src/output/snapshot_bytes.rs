//! The bytes of a snapshot (src/output/snapshot.rs): numbers, booleans and byte
//! strings, written and read back with every length checked against what is left, so
//! damage is an error, never a panic or a huge allocation. Apart from the snapshot so
//! the parts it writes (bounded.rs, line.rs, raw_log.rs, raw_stream.rs) depend on this
//! alone, not on the snapshot that depends on them.

/// A snapshot being written.
#[derive(Default)]
pub struct Writer {
    pub bytes: Vec<u8>,
}

impl Writer {
    pub fn u64(&mut self, value: u64) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    pub fn usize(&mut self, value: usize) {
        self.u64(value as u64);
    }

    pub fn bool(&mut self, value: bool) {
        self.bytes.push(u8::from(value));
    }

    pub fn bytes(&mut self, value: &[u8]) {
        self.usize(value.len());
        self.bytes.extend_from_slice(value);
    }
}

/// A snapshot being read. `Err`: what does not fit (checked, never trusted).
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, at: 0 }
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let rest = self.bytes.len() - self.at;
        if n > rest {
            return Err(format!("its snapshot is cut short at byte {}", self.at));
        }
        let taken = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(taken)
    }

    pub fn u64(&mut self) -> Result<u64, String> {
        let mut value = [0u8; 8];
        value.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(value))
    }

    pub fn usize(&mut self) -> Result<usize, String> {
        let at = self.at;
        usize::try_from(self.u64()?).map_err(|_| format!("its snapshot holds a size too large at byte {at}"))
    }

    pub fn bool(&mut self) -> Result<bool, String> {
        match self.take(1)? {
            [0] => Ok(false),
            [1] => Ok(true),
            _ => Err(format!("its snapshot holds no boolean at byte {}", self.at - 1)),
        }
    }

    pub fn bytes(&mut self) -> Result<Vec<u8>, String> {
        let n = self.usize()?;
        Ok(self.take(n)?.to_vec())
    }

    pub fn string(&mut self) -> Result<String, String> {
        let at = self.at;
        String::from_utf8(self.bytes()?).map_err(|_| format!("its snapshot holds text that is not UTF-8 at byte {at}"))
    }

    /// Every byte was read: anything left over is damage.
    pub fn end(&self) -> Result<(), String> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(format!(
                "its snapshot has {} bytes too many",
                self.bytes.len() - self.at
            ))
        }
    }
}
