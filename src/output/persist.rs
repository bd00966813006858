//! Output on disk: `<ioDir>/<sessionId>/<handle>/{stdout.txt, stderr.txt, info.json}`.
//!
//! Text is written as each line completes, straight to the file (no user-space
//! buffer), so a crash loses at most the line being written. Files are 0600 and
//! directories 0700: output can hold secrets. A per-job cap keeps a runaway job from
//! filling the disk; what the cap refused is counted and named in a marker.
//!
//! The files are a copy: a full disk, a removed folder or the cap never stop the job
//! or its in-memory views. What the files lack, and why, is kept (`persist_error`,
//! the results' `persistError`), and the files are then never named as holding the
//! whole output, nor read past what they still hold. Which folders may be removed,
//! and by whom, is `retention.rs`.

use std::fs::{self, File};
use std::io::{self, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use super::job_dir::{first_free_name, prime_info_tmp, INFO_FILE, INFO_TMP_FILE, STDERR_FILE, STDOUT_FILE};
use super::private_files::{
    create_private_dir, file_identity, metadata_identity, open_existing_private, open_private, open_private_with,
    private_dir_builder, rename_as, write_counted, FileIdentity, Rename,
};
use super::spare_dir::{claim, SpareDir};

pub const DEFAULT_DISK_CAP_BYTES: u64 = 64 * 1024 * 1024;
#[path = "persist_carry.rs"]
mod carry;
pub use carry::CarriedFiles;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Stream {
    Stdout,
    Stderr,
}

pub struct JobFiles {
    dir: PathBuf,
    /// The files while they are being written: opened again at the first write after
    /// `idle` let them go, so a job that prints nothing, or has gone quiet, holds no
    /// descriptor of them (`open_for_write`). `None` in both after `close`.
    stdout: Option<File>,
    stderr: Option<File>,
    /// Which files the job has (`stderr.txt` in pipes mode only).
    has_stderr: bool,
    /// Nothing more is written (`close`: the output has ended, or the files failed).
    closed: bool,
    /// The most bytes both files together take (`stdout_bytes + stderr_bytes`).
    cap: u64,
    /// Bytes in `stdout.txt` and `stderr.txt` (before any cap marker).
    stdout_bytes: u64,
    stderr_bytes: u64,
    /// The text a reader finds in `stdout.txt` by offset: its bytes up to the last
    /// whole character, lowered to what is left when the file is found cut or gone.
    stdout_text: u64,
    /// What the cap refused.
    refused: u64,
    /// Why the files do not hold all the output given them (the first reason), once
    /// known: a write failed (nothing more is written), or the files were removed,
    /// replaced or cut.
    problem: Option<String>,
    /// Retention removed the folder (the job had finished): not an error, but the
    /// folder is no longer named nor read.
    pruned: bool,
    /// What `stdout.txt` and `stderr.txt` are (device, inode), to tell them from files
    /// put at their names later. Unix only.
    identity: [Option<FileIdentity>; 2],
    /// The temporary file of the next `info.json` rewrite exists already (holding
    /// `INFO_TMP_START` only, then closed, so no descriptor is held per job). Creating
    /// a file is the slow part of a rewrite (an inode: ~0.2 ms here), and the rewrite
    /// at the exit is on the path of every caller waiting for that exit; made with the
    /// first `info.json` of a job that runs on, it costs nothing there.
    spare_info: bool,
    /// `info.json` exists (a later write replaces it).
    info_written: bool,
}

/// The metadata kept current in `info.json`.
#[derive(Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct JobInfo {
    pub handle: u32,
    pub pid: Option<u32>,
    pub command: String,
    pub args: Option<Vec<String>>,
    pub description: Option<String>,
    pub directory: String,
    pub mode: &'static str,
    pub status: &'static str,
    pub start_time: u64,
    pub end_time: Option<u64>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub error: Option<String>,
    /// What the job's files lack, and why (`JobFiles::persist_error`).
    pub persist_error: Option<String>,
}

impl JobFiles {
    /// Creates the job's directory under `session_dir` and its files. The directory is
    /// made with an exclusive `mkdir`, never reused: a name already taken — by an
    /// earlier process with the same session id, another service sharing it, or a
    /// symlink planted there — moves this job to `<handle>-2`, `<handle>-3`, ... so no
    /// output is overwritten and none is written where someone else pointed.
    pub fn create(session_dir: &Path, handle: u32, separate_stderr: bool, cap: u64) -> io::Result<Self> {
        Self::create_reusing(session_dir, handle, separate_stderr, cap, None)
    }

    /// `create`, taking `spare` as the job's folder when it is given and can be taken
    /// (`spare_dir.rs`: renamed to the job's name as exclusively as `mkdir` makes it,
    /// its `stdout.txt` and the first `info.json`'s temporary file already there and
    /// empty); else a new folder is made.
    pub fn create_reusing(
        session_dir: &Path,
        handle: u32,
        separate_stderr: bool,
        cap: u64,
        spare: Option<SpareDir>,
    ) -> io::Result<Self> {
        create_private_dir(session_dir)?;
        if fs::symlink_metadata(session_dir)?.file_type().is_symlink() {
            return Err(io::Error::other("the session directory is a symlink"));
        }
        let reused = spare.and_then(|spare| {
            let dir = claim(&spare, session_dir, handle).ok()?;
            Some((dir, spare.stdout_identity()))
        });
        let from_spare = reused.is_some();
        let (dir, stdout_identity) = match reused {
            Some((dir, identity)) => (dir, Some(identity)),
            None => (
                first_free_name(session_dir, handle, |dir| private_dir_builder().create(dir))?,
                None,
            ),
        };
        let stderr = if separate_stderr {
            Some(open_private(&dir.join(STDERR_FILE))?)
        } else {
            None
        };
        let (stdout, stdout_identity) = match stdout_identity {
            Some(identity) => (None, identity),
            None => {
                let stdout = open_private(&dir.join(STDOUT_FILE))?;
                let identity = file_identity(&stdout);
                (Some(stdout), identity)
            }
        };
        let identity = [stdout_identity, stderr.as_ref().and_then(file_identity)];
        let mut files = Self {
            stdout,
            has_stderr: stderr.is_some(),
            closed: false,
            dir,
            stderr,
            cap,
            stdout_bytes: 0,
            stderr_bytes: 0,
            stdout_text: 0,
            refused: 0,
            problem: None,
            pruned: false,
            identity,
            // A spare's temporary `info.json` is there already.
            spare_info: from_spare,
            info_written: false,
        };
        // Let go now, opened again by the first write (`open_for_write`).
        files.idle();
        Ok(files)
    }

    #[cfg(test)]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The job's folder, while it is kept (retention has not removed it).
    pub fn kept_dir(&self) -> Option<&Path> {
        (!self.pruned).then_some(self.dir.as_path())
    }

    pub fn stdout_path(&self) -> PathBuf {
        self.dir.join(STDOUT_FILE)
    }

    pub fn stderr_path(&self) -> PathBuf {
        self.dir.join(STDERR_FILE)
    }

    /// Bytes of text `stdout.txt` holds from its start (before any cap marker): all it
    /// was given, or what a failed write, a removal or a cut left.
    pub fn stdout_text_len(&self) -> u64 {
        if self.pruned {
            0
        } else {
            self.stdout_text
        }
    }

    /// Whether the files hold every byte of output given them, as far as is known
    /// (see [`Self::check`]): only then is a file named as holding the whole output.
    pub fn whole(&self) -> bool {
        !self.pruned && self.problem.is_none() && self.refused == 0
    }

    /// Why the files lack part of the output, or `None` while they hold it all. A
    /// folder removed by retention is not a fault: `None`, and `kept_dir` says it.
    pub fn persist_error(&self) -> Option<String> {
        if self.pruned {
            return None;
        }
        if let Some(problem) = &self.problem {
            return Some(problem.clone());
        }
        (self.refused > 0).then(|| {
            format!(
                "the per-job disk cap of {} bytes was reached: {} more bytes were not saved",
                self.cap, self.refused
            )
        })
    }

    /// Looks whether the files are still where they were made, as long as they were
    /// written: a folder removed (or a file replaced or cut) under a running job goes
    /// unseen by its writes (they go on into the unlinked file). Two `lstat`s.
    pub fn check(&mut self) {
        if self.pruned || self.problem.is_some() {
            return;
        }
        let files = [
            (self.stdout_path(), self.stdout_bytes, self.identity[0], true),
            (self.stderr_path(), self.stderr_bytes, self.identity[1], false),
        ];
        for (path, bytes, identity, is_stdout) in files {
            if bytes == 0 && identity.is_none() {
                continue;
            }
            // What of `stdout.txt` is still there to read: nothing once it is gone, its
            // start when it was cut.
            let mut left = 0;
            let fault = match fs::symlink_metadata(&path) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => Some(if self.dir.exists() {
                    format!("{} was removed", path.display())
                } else {
                    format!("the job's folder {} was removed", self.dir.display())
                }),
                // Not to be told (no permission to look): nothing is claimed either way.
                Err(_) => None,
                Ok(meta) if identity.is_some() && metadata_identity(&meta) != identity => Some(format!(
                    "{} was removed and another file put in its place",
                    path.display()
                )),
                Ok(meta) if meta.len() < bytes => {
                    left = meta.len();
                    Some(format!(
                        "{} was cut to {} of its {} bytes",
                        path.display(),
                        meta.len(),
                        bytes
                    ))
                }
                Ok(_) => None,
            };
            if let Some(fault) = fault {
                if is_stdout {
                    self.stdout_text = self.stdout_text.min(left);
                }
                self.problem = Some(fault);
                // Nothing more goes to files that no longer hold what they were given.
                self.close();
                return;
            }
        }
    }

    /// A read found `stdout.txt` holding its text only up to byte `end`: nothing past
    /// it is read there again (it is counted as omitted), and the reason is kept.
    pub fn text_ends_at(&mut self, end: u64) {
        self.check();
        self.stdout_text = self.stdout_text.min(end);
        if self.problem.is_none() {
            self.problem = Some(format!(
                "{} holds only {end} bytes of its text: it was cut or removed",
                self.stdout_path().display()
            ));
        }
    }

    /// Retention removed the finished job's folder (`service/retention.rs`).
    pub fn mark_pruned(&mut self) {
        self.pruned = true;
        self.close();
    }

    pub fn write(&mut self, stream: Stream, text: &str) {
        if text.is_empty() || self.problem.is_some() {
            return;
        }
        let room = self.cap.saturating_sub(self.stdout_bytes + self.stderr_bytes) as usize;
        let mut take = text.len().min(room);
        while take > 0 && !text.is_char_boundary(take) {
            take -= 1;
        }
        self.refused += (text.len() - take) as u64;
        if take == 0 {
            return;
        }
        if self.closed {
            return;
        }
        let to_stdout = !(stream == Stream::Stderr && self.has_stderr);
        if let Err(e) = self.open_for_write(to_stdout) {
            // Removed or replaced while it was let go: said as `check` says it.
            self.check();
            if self.problem.is_none() {
                self.problem = Some(format!(
                    "{} could not be opened again: {}",
                    self.dir
                        .join(if to_stdout { STDOUT_FILE } else { STDERR_FILE })
                        .display(),
                    describe(&e)
                ));
            }
            self.close();
            return;
        }
        let Some(file) = (if to_stdout {
            self.stdout.as_mut()
        } else {
            self.stderr.as_mut()
        }) else {
            return;
        };
        // A full disk or a removed directory must not take the job down: persistence
        // stops, the in-memory views go on, and what the file took is counted.
        let (took, error) = write_counted(file, &text.as_bytes()[..take]);
        let name = if to_stdout {
            self.stdout_bytes += took as u64;
            let mut whole = took;
            while !text.is_char_boundary(whole) {
                whole -= 1;
            }
            self.stdout_text += whole as u64;
            STDOUT_FILE
        } else {
            self.stderr_bytes += took as u64;
            STDERR_FILE
        };
        if let Some(e) = error {
            let held = if to_stdout {
                self.stdout_bytes
            } else {
                self.stderr_bytes
            };
            self.problem = Some(format!(
                "{} could not be written past byte {held}: {}",
                self.dir.join(name).display(),
                describe(&e)
            ));
            self.close();
        }
    }

    /// Appends the cap marker if anything was refused, then looks whether the files
    /// are still there (`check`). Called once, at the end.
    pub fn finish(&mut self) {
        if self.refused > 0 && self.problem.is_none() {
            let marker = format!(
                "\n[... the per-job disk cap of {} bytes was reached; {} more bytes were not saved ...]\n",
                self.cap, self.refused
            );
            if !self.closed && self.open_for_write(true).is_ok() {
                if let Some(stdout) = self.stdout.as_mut() {
                    let _ = stdout.write_all(marker.as_bytes());
                }
            }
        }
        self.check();
    }

    /// Closes the output files; nothing more will be written (info.json still can be).
    pub fn close(&mut self) {
        self.closed = true;
        self.stdout = None;
        self.stderr = None;
    }

    /// Lets the files' descriptors go while the job is quiet; the next write opens them
    /// again. An idle job then holds no descriptor but its terminal's. Only a file that
    /// can be told from one put at its name later is let go: one whose birth time is
    /// known (`FileIdentity`); elsewhere (a file system without it, Windows) the file
    /// stays open, as it always did.
    pub fn idle(&mut self) {
        let knowable = |identity: &Option<FileIdentity>| identity.is_some_and(|(_, _, born)| born.is_some());
        if knowable(&self.identity[0]) {
            self.stdout = None;
        }
        if knowable(&self.identity[1]) {
            self.stderr = None;
        }
    }

    /// The file to write (`stdout.txt`, else `stderr.txt`), opened again where it was
    /// let go: only if it is still the file made for the job (its device and inode),
    /// never one put at its name since nor a link (`O_NOFOLLOW`), and positioned where
    /// the job's last write ended, as if it had stayed open.
    fn open_for_write(&mut self, stdout: bool) -> io::Result<()> {
        let (slot, name, written, identity) = if stdout {
            (&mut self.stdout, STDOUT_FILE, self.stdout_bytes, self.identity[0])
        } else {
            (&mut self.stderr, STDERR_FILE, self.stderr_bytes, self.identity[1])
        };
        if slot.is_none() {
            let path = self.dir.join(name);
            let mut file = open_existing_private(&path)?;
            if identity.is_some() && file_identity(&file) != identity {
                return Err(io::Error::other(format!(
                    "{} was removed and another file put in its place",
                    path.display()
                )));
            }
            if written > 0 {
                file.seek(io::SeekFrom::Start(written))?;
            }
            *slot = Some(file);
        }
        Ok(())
    }

    /// Writes `info.json` atomically: readers see the old or the new file, never half.
    /// When that fails (a full disk, a removed folder), no temporary file stays, and
    /// the last `info.json` of a job (status other than `running`) is written in place
    /// (the old file's blocks are freed first, so a full disk has room for it) or else
    /// removed: it never goes on saying `running` after the job ended.
    pub fn write_info(&mut self, info: &JobInfo) -> io::Result<()> {
        let json = serde_json::to_vec_pretty(info).map_err(io::Error::other)?;
        let Err(e) = self.replace_info(&json) else {
            self.info_written = true;
            return Ok(());
        };
        let _ = fs::remove_file(self.dir.join(INFO_TMP_FILE));
        if info.status != "running" {
            let info_path = self.dir.join(INFO_FILE);
            let in_place = open_private(&info_path).and_then(|mut file| file.write_all(&json));
            if in_place.is_err() {
                let _ = fs::remove_file(&info_path);
            }
        }
        // A folder removed under a running job can fail this write before any look
        // has seen it gone: said as what happened (`check`'s words), not as the ENOENT
        // it causes.
        self.check();
        if self.problem.is_none() && !self.pruned {
            self.problem = Some(format!(
                "{} could not be written: {}",
                self.dir.join(INFO_FILE).display(),
                describe(&e)
            ));
        }
        Err(e)
    }

    fn replace_info(&mut self, json: &[u8]) -> io::Result<()> {
        let tmp = self.dir.join(INFO_TMP_FILE);
        // The spare is ours and holds one byte (`INFO_TMP_START`): opened without
        // truncating it (truncating makes ext4 write the file back when it is closed,
        // its guard for replace-by-rename) and written over from its start by the JSON,
        // never empty, it holds the JSON and nothing else. Without a spare the file is
        // created here.
        let mut file = if std::mem::take(&mut self.spare_info) {
            open_private_with(&tmp, false)?
        } else {
            open_private(&tmp)?
        };
        file.write_all(json)?;
        drop(file);
        let info = self.dir.join(INFO_FILE);
        // An `info.json` written before (the job outlived its `run`) is swapped with the
        // new one, then removed under the temporary name: a rename over it makes ext4
        // write the new file to the disk first (its guard for replace-by-rename), a disk
        // write and about 50 µs more on the exit's path (measured here). Where the swap
        // cannot be made (another system or file system, no old file), a rename.
        if self.info_written && rename_as(&tmp, &info, Rename::Exchange).is_ok() {
            let _ = fs::remove_file(&tmp);
            return Ok(());
        }
        fs::rename(&tmp, info)
    }

    /// Whether `info.json` has been written yet.
    pub fn info_written(&self) -> bool {
        self.info_written
    }

    /// Makes the temporary file of the next `info.json` rewrite now (see `spare_info`).
    pub fn prepare_info_rewrite(&mut self) {
        if !self.spare_info {
            self.spare_info = prime_info_tmp(&self.dir.join(INFO_TMP_FILE)).is_ok();
        }
    }
}

impl Drop for JobFiles {
    fn drop(&mut self) {
        // An unused spare would stay behind as an empty hidden file.
        if self.spare_info {
            let _ = fs::remove_file(self.dir.join(INFO_TMP_FILE));
        }
    }
}

/// An I/O error as the results say it: the errno's name where it is one a disk gives
/// (what a caller searches for), then the system's words.
pub fn describe(e: &io::Error) -> String {
    let name = match e.kind() {
        io::ErrorKind::StorageFull => "ENOSPC",
        io::ErrorKind::QuotaExceeded => "EDQUOT",
        io::ErrorKind::FileTooLarge => "EFBIG",
        io::ErrorKind::ReadOnlyFilesystem => "EROFS",
        io::ErrorKind::NotFound => "ENOENT",
        io::ErrorKind::PermissionDenied => "EACCES",
        _ => return e.to_string(),
    };
    format!("{name}: {e}")
}

pub fn unix_millis(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
#[path = "persist_tests.rs"]
mod tests;
