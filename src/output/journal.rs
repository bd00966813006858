//! A job's replay steps (src/output/replay.rs) kept on disk, not in memory: an
//! append-only file of records, one per step, in the order they happened.
//!
//! Why a file of its own and not the job's text files: `stdout.txt` and `stderr.txt`
//! hold the decoded text, capped (persist.rs), while the rebuild needs every byte as
//! read, with its stream, and the quiet spells and resizes between them. The raw view
//! in memory keeps only a head and a tail (raw_log.rs).
//!
//! Why a file without a name (`O_TMPFILE`, else made and unlinked at once): nobody can
//! delete, replace or read it through the file system, retention never meets it, and
//! the kernel frees its blocks when the last descriptor closes (a daemon that dies
//! leaves nothing behind). A restart in place carries its descriptor like a job's
//! terminal (src/service/carry.rs). The cost: disk for every byte the job wrote until
//! the job is removed, and one descriptor per job whose steps outgrew `BUFFER`.
//!
//! Why the file is made only once the steps outgrow `BUFFER` (or at the seal): most
//! jobs print little, and an idle job should cost the daemon one descriptor (its
//! terminal) and little memory; until then the steps wait in the buffer a file would
//! have had anyway.
//!
//! Opened to append: every write lands at the end whatever a copy of the descriptor
//! did to the offset.
//!
//! Records: a tag byte, then for a read (or a snapshot) its length (u64, little
//! endian) and bytes.
//!
//! The cap: a journal past its cap is started again from a snapshot of the output
//! (src/output/replay.rs, `Recorder::start_again`), the old file let go, so a job's
//! journal holds a snapshot and the steps since it, not every byte since its start.
//! Writes go through a small buffer (a read costs a copy, a system call per
//! `BUFFER` bytes); `seal` flushes it before the length is handed over.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::persist::Stream;

/// One change to a job's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// One read's bytes, from stderr (`err`) or stdout (or the terminal).
    Read { err: bool, bytes: Vec<u8> },
    /// The quiet spell's commit of the screen window's lines (`JobOutput::commit_screen`).
    CommitScreen,
    /// The terminal's new size.
    Resize { cols: u16, rows: u16 },
    /// The process ended: the lines still being written were committed.
    Finish,
    /// Every view as it stood (src/output/snapshot.rs): the first record of a journal
    /// started again past its cap (src/output/replay.rs, `Recorder::start_again`).
    Snapshot(Vec<u8>),
}

impl Step {
    pub fn read(stream: Stream, bytes: &[u8]) -> Self {
        Self::Read {
            err: stream == Stream::Stderr,
            bytes: bytes.to_vec(),
        }
    }
}

const BUFFER: usize = 16 * 1024;

const TAG_STDOUT: u8 = 0;
const TAG_STDERR: u8 = 1;
const TAG_COMMIT: u8 = 2;
const TAG_RESIZE: u8 = 3;
const TAG_FINISH: u8 = 4;
const TAG_SNAPSHOT: u8 = 5;

/// Where the records go: memory until they outgrow `BUFFER`, then the file.
#[derive(Debug)]
enum Sink {
    /// Not made yet: the records so far, and the directory the file will be made in.
    Waiting {
        records: Vec<u8>,
        dir: PathBuf,
    },
    File(BufWriter<File>),
}

/// The journal being written, and how many bytes it holds (buffered ones included).
#[derive(Debug)]
pub struct Journal {
    sink: Sink,
    len: u64,
}

impl Journal {
    /// A new, empty journal, whose file (without a name: see the module's comment) is
    /// made in `dir` when it is first needed.
    pub fn create(dir: &Path) -> io::Result<Self> {
        Ok(Self {
            sink: Sink::Waiting {
                records: Vec::new(),
                dir: dir.to_path_buf(),
            },
            len: 0,
        })
    }

    /// A journal a previous image wrote `len` bytes of, written on from there.
    pub fn adopt(file: File, len: u64) -> Self {
        Self {
            sink: Sink::File(BufWriter::with_capacity(BUFFER, file)),
            len,
        }
    }

    /// Makes the file now if it is not made yet (see `file`).
    pub fn make_file(&mut self) -> io::Result<()> {
        self.file().map(|_| ())
    }

    /// The file, made now if it is not yet, with the records that waited for it.
    fn file(&mut self) -> io::Result<&mut BufWriter<File>> {
        if let Sink::Waiting { records, dir } = &mut self.sink {
            let made = unnamed_file(dir)
                .map_err(|e| io::Error::new(e.kind(), format!("could not be made in {}: {e}", dir.display())))?;
            let mut file = BufWriter::with_capacity(BUFFER, made);
            file.write_all(records)?;
            self.sink = Sink::File(file);
        }
        match &mut self.sink {
            Sink::File(file) => Ok(file),
            Sink::Waiting { .. } => Err(io::Error::other("the journal's file was not made")),
        }
    }

    pub fn append(&mut self, step: &Step) -> io::Result<()> {
        match step {
            Step::Read { err, bytes } => self.append_read(*err, bytes),
            Step::CommitScreen => self.put(&[TAG_COMMIT]),
            Step::Resize { cols, rows } => {
                let mut record = [TAG_RESIZE, 0, 0, 0, 0];
                record[1..3].copy_from_slice(&cols.to_le_bytes());
                record[3..5].copy_from_slice(&rows.to_le_bytes());
                self.put(&record)
            }
            Step::Finish => self.put(&[TAG_FINISH]),
            Step::Snapshot(bytes) => self.append_sized(TAG_SNAPSHOT, bytes),
        }
    }

    /// Bytes in the journal, buffered ones included.
    pub fn bytes_written(&self) -> u64 {
        self.len
    }

    /// One read, without first copying it into a `Step`.
    pub fn append_read(&mut self, err: bool, bytes: &[u8]) -> io::Result<()> {
        self.append_sized(if err { TAG_STDERR } else { TAG_STDOUT }, bytes)
    }

    /// A record of `tag`, its length and `bytes`.
    fn append_sized(&mut self, tag: u8, bytes: &[u8]) -> io::Result<()> {
        let mut head = [tag; 9];
        head[1..].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
        self.put(&head)?;
        self.put(bytes)
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.sink {
            Sink::Waiting { records, .. } if records.len() + bytes.len() <= BUFFER => records.extend_from_slice(bytes),
            _ => self.file()?.write_all(bytes)?,
        }
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// Everything written so far is in the file (made now if it was not): a copy of its
    /// descriptor (close-on-exec, as every copy std makes) and its length.
    pub fn seal(&mut self) -> io::Result<(File, u64)> {
        let file = self.file()?;
        file.flush()?;
        Ok((file.get_ref().try_clone()?, self.len))
    }
}

/// Feeds every step of the first `len` bytes of `file` to `each`, in order, reading it
/// through a buffer (memory: the buffer and the largest read). `Err` names what does
/// not fit (a file shorter than `len`, an unknown tag, a record past `len`).
pub fn replay(file: &File, len: u64, mut each: impl FnMut(Step)) -> Result<(), String> {
    let size = file.metadata().map_err(|e| format!("its journal: {e}"))?.len();
    if size < len {
        return Err(format!("its journal holds {size} bytes, not {len}"));
    }
    // Read by position: the descriptor's offset is shared with its copies (a journal
    // still written, sealed for a restart that did not happen) and stays untouched.
    let mut reader = BufReader::with_capacity(256 * 1024, At { file, at: 0 }.take(len));
    let mut at = 0u64;
    let bad = |at: u64, why: &str| format!("its journal is damaged at byte {at}: {why}");
    let read_exact = |reader: &mut BufReader<_>, buf: &mut [u8], at: u64| -> Result<(), String> {
        reader.read_exact(buf).map_err(|e| bad(at, &e.to_string()))
    };
    while at < len {
        let mut tag = [0u8];
        read_exact(&mut reader, &mut tag, at)?;
        at += 1;
        match tag[0] {
            TAG_STDOUT | TAG_STDERR | TAG_SNAPSHOT => {
                let mut length = [0u8; 8];
                read_exact(&mut reader, &mut length, at)?;
                at += 8;
                let length = u64::from_le_bytes(length);
                if length > len - at {
                    return Err(bad(at, "a read longer than the rest"));
                }
                // Bounded by the file's length, checked just above.
                let mut bytes = vec![0u8; length as usize];
                read_exact(&mut reader, &mut bytes, at)?;
                at += length;
                each(if tag[0] == TAG_SNAPSHOT {
                    Step::Snapshot(bytes)
                } else {
                    Step::Read {
                        err: tag[0] == TAG_STDERR,
                        bytes,
                    }
                });
            }
            TAG_COMMIT => each(Step::CommitScreen),
            TAG_RESIZE => {
                let mut size = [0u8; 4];
                read_exact(&mut reader, &mut size, at)?;
                at += 4;
                each(Step::Resize {
                    cols: u16::from_le_bytes([size[0], size[1]]),
                    rows: u16::from_le_bytes([size[2], size[3]]),
                });
            }
            TAG_FINISH => each(Step::Finish),
            other => return Err(bad(at - 1, &format!("unknown tag {other}"))),
        }
    }
    Ok(())
}

/// Reads `file` from `at` on without moving its offset.
struct At<'a> {
    file: &'a File,
    at: u64,
}

impl Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(self.file, buf, self.at)?;
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(self.file, buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// A file in `dir` that has no name: `O_TMPFILE` where the file system has it, else a
/// file made under a random name (exclusively, never through a link) and unlinked.
#[cfg(unix)]
fn unnamed_file(dir: &Path) -> io::Result<File> {
    use std::fs::OpenOptions;
    use std::os::unix::fs::OpenOptionsExt;
    #[cfg(target_os = "linux")]
    {
        let made = OpenOptions::new()
            .read(true)
            .append(true)
            .mode(0o600)
            .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
            .open(dir);
        match made {
            Ok(file) => return Ok(file),
            // Not every file system has O_TMPFILE (EOPNOTSUPP, EISDIR on old kernels).
            Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP) | Some(libc::EISDIR)) => {}
            Err(e) => return Err(e),
        }
    }
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).map_err(|e| io::Error::other(format!("no random name: {e}")))?;
    let path = dir.join(format!(".journal-{:016x}", u64::from_le_bytes(random)));
    let file = OpenOptions::new()
        .read(true)
        .append(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

/// No restart in place off Unix: nothing asks for a journal there.
#[cfg(not(unix))]
fn unnamed_file(_dir: &Path) -> io::Result<File> {
    Err(io::Error::other("no restart in place on this platform"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_comes_back_in_order() {
        let steps = vec![
            Step::Read {
                err: false,
                bytes: b"hello\r\n".to_vec(),
            },
            Step::CommitScreen,
            Step::Read {
                err: true,
                bytes: vec![0, 255, 0x1b],
            },
            Step::Resize { cols: 300, rows: 2 },
            Step::Snapshot(vec![1, 2, 3]),
            Step::Read {
                err: false,
                bytes: Vec::new(),
            },
            Step::Finish,
        ];
        let mut journal = Journal::create(&std::env::temp_dir()).unwrap();
        for step in &steps {
            journal.append(step).unwrap();
        }
        let (file, len) = journal.seal().unwrap();
        let mut back = Vec::new();
        replay(&file, len, |s| back.push(s)).unwrap();
        assert_eq!(back, steps);
        // Written on after a seal: the earlier length still reads what it held.
        journal.append(&Step::Finish).unwrap();
        let mut again = Vec::new();
        replay(&file, len, |s| again.push(s)).unwrap();
        assert_eq!(again, steps);
    }

    #[test]
    fn a_damaged_journal_is_an_error_not_a_panic() {
        let mut journal = Journal::create(&std::env::temp_dir()).unwrap();
        journal.append_read(false, b"abc").unwrap();
        let (file, len) = journal.seal().unwrap();
        // Longer than the file.
        assert!(replay(&file, len + 5, |_| {}).is_err());
        // Cut inside the read.
        assert!(replay(&file, len - 1, |_| {}).is_err());
        let mut bad = Journal::create(&std::env::temp_dir()).unwrap();
        bad.put(&[9]).unwrap();
        bad.put(&[TAG_STDOUT, 255, 255, 255, 255, 255, 255, 255, 255]).unwrap();
        let (file, len) = bad.seal().unwrap();
        let why = replay(&file, len, |_| {}).unwrap_err();
        assert!(why.contains("unknown tag 9"), "{why}");
        let (file, _) = {
            let mut big = Journal::create(&std::env::temp_dir()).unwrap();
            big.put(&[TAG_STDOUT, 255, 255, 255, 255, 255, 255, 255, 255]).unwrap();
            big.seal().unwrap()
        };
        assert!(replay(&file, 9, |_| {}).unwrap_err().contains("longer than the rest"));
    }
}
