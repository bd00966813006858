//! A service as a restart in place (src/daemon/upgrade/) hands it to the next image:
//! its session, its token (its jobs' marker), its handle counter, its history and
//! every job (src/job/carry.rs), with the descriptors the exec keeps open: each job's
//! terminal or pipes, and the session's lease (src/output/retention.rs), so no pruner
//! takes the session for dead meanwhile.
//!
//! The old image's side: `freeze_jobs` (every reader and writer stands still), `carry` (the
//! descriptors copied, their numbers in the record), `thaw_jobs` when the restart does
//! not happen. The new image's: `resume`, which checks every record and descriptor
//! before it starts anything, then starts each job's reader and writer again.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::runtime::Handle;
use tokio::sync::mpsc;

use super::history::HistoryEntry;
use super::launch::supervise;
use super::request::ServiceConfig;
use super::{Sandboxes, Service};
use crate::base::error::{Result, ServiceError};
use crate::base::sync::lock;
use crate::job::carry::{adopt, check, ended_unseen, restore_state, CarriedFds, CarriedJob, CarriedJournal};
use crate::job::driver::{self, Reader, Writer};
use crate::job::freeze::{inherited_fd, Fds};
use crate::job::sandbox_carry::{adopt_sandbox, check_sandbox};
use crate::job::Job;
use crate::platform::{CarriedGitGuard, ChildProcess, Mode, PipeReader, PipeWriter, Terminal};
use crate::sandbox::resolved_carry::{adopt_resolved, carry_resolved, check_resolved, CarriedResolved};

/// A service, carried.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedService {
    pub session_id: String,
    pub token: String,
    pub next_handle: u32,
    /// The session lease's descriptor number, while one is held.
    pub lease_fd: Option<i32>,
    /// Oldest first.
    pub history: Vec<HistoryEntry>,
    pub jobs: Vec<CarriedJob>,
    /// Its own sandbox (`ServiceOptions.sandbox`), every descriptor with it: the new
    /// image builds it from those, never from the names again
    /// (src/sandbox/resolved_carry.rs).
    #[serde(default)]
    pub sandbox: Option<CarriedResolved>,
    /// The default sandbox of its `sandbox: true` runs, when one was resolved.
    #[serde(default)]
    pub default_sandbox: Option<CarriedResolved>,
    /// The git guard's record of the project's `.git`, while a carried job holds it.
    #[serde(default)]
    pub git_guard: Option<CarriedGitGuard>,
}

impl CarriedService {
    /// Every descriptor number its sandboxes name.
    pub fn sandbox_fds(&self) -> Vec<i32> {
        self.sandbox
            .iter()
            .chain(self.default_sandbox.iter())
            .flat_map(CarriedResolved::fds)
            .collect()
    }
}

/// The descriptors a carried service's records name: copies, close-on-exec until the
/// exec (the caller clears the flag on exactly these).
pub type Kept = Vec<OwnedFd>;

impl Service {
    fn all_jobs(&self) -> Vec<Arc<Job>> {
        lock(&self.inner.jobs).values().cloned().collect()
    }

    /// Asks every job's reader to stand still, and waits (up to `limit`) until each
    /// does or is done. `Err` names a job that did not.
    pub async fn freeze_jobs(&self, limit: Duration) -> std::result::Result<(), String> {
        let jobs = {
            let jobs = lock(&self.inner.jobs);
            self.inner.frozen.store(true, Ordering::SeqCst);
            jobs.values().cloned().collect::<Vec<_>>()
        };
        for job in &jobs {
            job.freeze.request();
        }
        for job in &jobs {
            if tokio::time::timeout(limit, job.freeze.until_settled()).await.is_err() {
                return Err(format!("the reader of job {} did not stop", job.meta.handle));
            }
        }
        Ok(())
    }

    /// Lets every reader go on (the restart did not happen).
    pub fn thaw_jobs(&self) {
        self.inner.frozen.store(false, Ordering::SeqCst);
        for job in self.all_jobs() {
            job.queued_input().reopen();
            job.freeze.thaw();
        }
    }

    /// Why the service cannot be carried now, checked before a restart stops
    /// anything (the same checks `carry` makes, without its readers stopped).
    pub fn can_carry(&self) -> std::result::Result<(), String> {
        for job in self.all_jobs() {
            job.carriable()?;
        }
        Ok(())
    }

    /// The service and its jobs as the hand-over carries them, and the copies of the
    /// descriptors it names. Readers must stand still (`freeze_jobs`). `Err`: why it
    /// cannot be carried (nothing is changed then).
    pub fn carry(&self) -> std::result::Result<(CarriedService, Kept), String> {
        let inner = &self.inner;
        let mut kept = Kept::new();
        let mut keep = |fd: Option<OwnedFd>| -> Option<i32> {
            let fd = fd?;
            let raw = fd.as_raw_fd();
            kept.push(fd);
            Some(raw)
        };
        let mut jobs = Vec::new();
        for job in self.all_jobs() {
            if !job.freeze.settled() {
                return Err(format!("job {} started during the restart", job.meta.handle));
            }
            let fds = if job.freeze.reader_gone() {
                CarriedFds::default()
            } else {
                let dup = job
                    .freeze
                    .dup_all()
                    .map_err(|e| format!("job {}: cannot keep its descriptors: {e}", job.meta.handle))?;
                CarriedFds {
                    pty: keep(dup.pty),
                    stdin: keep(dup.stdin),
                    stdout: keep(dup.stdout),
                    stderr: keep(dup.stderr),
                }
            };
            let mut carried = job.carry(fds)?;
            carried.sandbox = job.carry_sandbox(&mut |fd| keep(Some(fd)).unwrap_or(-1))?;
            carried.exited = job.exit_while_frozen();
            let (journal, len) = job.seal_journal()?;
            carried.journal = CarriedJournal {
                fd: keep(Some(OwnedFd::from(journal))).unwrap_or_default(),
                len,
            };
            jobs.push(carried);
        }
        let lease_fd = match &inner.retention {
            Some(retention) => match retention.lease_fd() {
                Some(fd) => {
                    // SAFETY: the lease's file stays open while the service lives.
                    let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
                    keep(Some(
                        borrowed
                            .try_clone_to_owned()
                            .map_err(|e| format!("cannot keep the session's lease: {e}"))?,
                    ))
                }
                None => None,
            },
            None => None,
        };
        let mut keep_fd = |fd: OwnedFd| keep(Some(fd)).unwrap_or(-1);
        let sandbox = match &inner.sandbox {
            Some(resolved) => Some(carry_resolved(resolved, &mut keep_fd)?),
            None => None,
        };
        let default_sandbox = match lock(&inner.default_sandbox).as_ref() {
            Some(resolved) => Some(carry_resolved(resolved, &mut keep_fd)?),
            None => None,
        };
        // The record the holds are checked against: taken before those jobs started.
        let git_guard = match jobs
            .iter()
            .any(|j| j.sandbox.as_ref().is_some_and(|s| s.git_hold.is_some()))
        {
            true => Some(inner.git_guard.carry()?),
            false => None,
        };
        let mut history: Vec<HistoryEntry> = lock(&inner.history).list(None);
        history.reverse();
        Ok((
            CarriedService {
                session_id: inner.session_id.clone(),
                token: inner.token.clone(),
                next_handle: inner.next_handle.load(Ordering::SeqCst),
                lease_fd,
                history,
                jobs,
                sandbox,
                default_sandbox,
                git_guard,
            },
            kept,
        ))
    }

    /// Checks a carried service without taking anything (the new image does this for
    /// every service before it takes any, so a record that does not check out can
    /// still roll back to the previous image with every job untouched).
    pub fn check_carried(carried: &CarriedService) -> std::result::Result<(), String> {
        let mut handles = std::collections::HashSet::new();
        for job in &carried.jobs {
            if job.handle == 0 || job.handle >= carried.next_handle || !handles.insert(job.handle) {
                return Err(format!("job {} is past the handle counter or named twice", job.handle));
            }
            let mode = check(job)?;
            if let Some(sandbox) = &job.sandbox {
                check_sandbox(sandbox).map_err(|e| format!("job {}: {e}", job.handle))?;
            }
            check_fds(mode, &job.fds).map_err(|e| format!("job {}: {e}", job.handle))?;
            check_journal(job.journal).map_err(|e| format!("job {}: {e}", job.handle))?;
            if job.end.is_none() && job.fds.stdout.is_none() && job.fds.pty.is_none() {
                return Err(format!("job {} runs but has no output descriptors", job.handle));
            }
            if job.input.is_some() && job.fds.stdin.is_none() && job.fds.pty.is_none() {
                return Err(format!(
                    "job {} carried input but no descriptor to write it to",
                    job.handle
                ));
            }
        }
        if let Some(fd) = carried.lease_fd {
            inherited_fd(fd)?;
        }
        for resolved in carried.sandbox.iter().chain(carried.default_sandbox.iter()) {
            check_resolved(resolved)?;
        }
        if holds_git(carried) > 0 && carried.git_guard.is_none() {
            return Err("jobs hold the git guard but its record was not carried".into());
        }
        Ok(())
    }

    /// The new image's side: the service `config` makes, as `carried` says it was, its
    /// jobs running on. `take` takes an inherited descriptor by number (close-on-exec
    /// again). Every job is checked before any is started.
    pub fn resume(
        config: ServiceConfig,
        runtime: Handle,
        carried: CarriedService,
        take: &mut dyn FnMut(RawFd) -> std::result::Result<OwnedFd, String>,
    ) -> Result<Self> {
        let invalid = |why: String| ServiceError::invalid(format!("the hand-over's service: {why}"));
        // A service opened with a sandbox whose record carries none (a record no
        // image writes): refused, never resolved again by name nor run without it.
        if config.sandbox.is_some() != carried.sandbox.is_some() {
            return Err(invalid("its sandbox and its options disagree".into()));
        }
        let mut take_sandbox = |c: &Option<CarriedResolved>| match c {
            Some(c) => adopt_resolved(c, &mut *take).map(Some).map_err(invalid),
            None => Ok(None),
        };
        let sandboxes = Sandboxes {
            own: take_sandbox(&carried.sandbox)?,
            default: take_sandbox(&carried.default_sandbox)?,
        };
        let config = ServiceConfig {
            session_id: Some(carried.session_id.clone()),
            ..config
        };
        let mut adopted = Vec::new();
        for job in &carried.jobs {
            if job.handle == 0 || job.handle >= carried.next_handle {
                return Err(invalid(format!("job {} is past the handle counter", job.handle)));
            }
            let journal = std::fs::File::from(take(job.journal.fd).map_err(invalid)?);
            // Its TMPDIR held again and its supervisor answering, before its reader
            // starts (a call it made meanwhile waits in the kernel until then).
            let sandbox = match &job.sandbox {
                Some(sandbox) => Some(
                    adopt_sandbox(sandbox, job.pid, take).map_err(|e| invalid(format!("job {}: {e}", job.handle)))?,
                ),
                None => None,
            };
            adopted.push(adopt(job, journal, sandbox).map_err(invalid)?);
        }
        let service = Self::made(config, runtime.clone(), Some((carried.token.clone(), sandboxes)))?;
        let inner = &service.inner;
        if let (Some(fd), Some(retention)) = (carried.lease_fd, &inner.retention) {
            let file = std::fs::File::from(take(fd).map_err(invalid)?);
            retention
                .adopt_lease(file)
                .map_err(|e| invalid(format!("the session's lease: {e}")))?;
        }
        if let Some(guard) = carried.git_guard.clone() {
            inner
                .git_guard
                .adopt(guard, holds_git(&carried))
                .map_err(|e| invalid(format!("the git guard: {e}")))?;
        }
        inner.next_handle.store(carried.next_handle, Ordering::SeqCst);
        {
            let mut history = lock(&inner.history);
            for entry in carried.history {
                history.record(entry);
            }
        }
        let _guard = runtime.enter();
        for (record, mut parts) in carried.jobs.iter().zip(adopted) {
            if let Some(hold) = record.sandbox.as_ref().and_then(|s| s.git_hold.as_ref()) {
                parts.meta.git_hold = Some(inner.git_guard.adopt_hold(hold));
            }
            let unseen = ended_unseen(record);
            let record = unseen.as_ref().unwrap_or(record);
            let io = Io::take(parts.meta.mode, &record.fds, take).map_err(invalid)?;
            let running = record.end.is_none();
            if running && io.reader.is_none() {
                return Err(invalid(format!(
                    "job {} runs but has no output descriptors",
                    record.handle
                )));
            }
            let (tx, rx) = mpsc::unbounded_channel();
            let job = Arc::new(Job::new(
                parts.meta,
                parts.output,
                tx,
                io.terminal,
                inner.timer.deadlines(),
            ));
            job.freeze.set_fds(io.fds);
            restore_state(&job, record);
            if let Some(writer) = io.writer {
                crate::job::writer::spawn(&runtime, writer, rx, job.queued_input(), job.freeze.clone());
            }
            match io.reader {
                Some(reader) if running => {
                    let child = match record.exited {
                        // Reaped by the previous image during the freeze: its status.
                        Some(exit) => ChildProcess::exited(job.meta.pid as i32, exit.into()),
                        None => {
                            crate::platform::adopt_launched(job.meta.pid as i32);
                            ChildProcess::adopt(job.meta.pid as i32)
                        }
                    };
                    let (reader_job, on_exit) = (job.clone(), service.history_recorder());
                    let task = runtime.spawn(driver::drive(reader_job, child, reader, on_exit));
                    supervise(&runtime, &job, task, inner.retention.clone());
                }
                Some(reader) => {
                    let task = runtime.spawn(driver::drive_after_exit(job.clone(), reader));
                    supervise(&runtime, &job, task, inner.retention.clone());
                }
                None => {
                    let task = runtime.spawn(async {});
                    supervise(&runtime, &job, task, inner.retention.clone());
                }
            }
            lock(&inner.jobs).insert(record.handle, job);
        }
        Ok(service)
    }
}

/// How many of a carried service's jobs hold its git guard (not yet released).
fn holds_git(carried: &CarriedService) -> usize {
    carried
        .jobs
        .iter()
        .filter_map(|j| j.sandbox.as_ref()?.git_hold.as_ref())
        .filter(|hold| !hold.released)
        .count()
}

/// A carried job's descriptors, taken back and put in the reactor.
struct Io {
    terminal: Option<Arc<Terminal>>,
    writer: Option<Writer>,
    reader: Option<Reader>,
    fds: Fds,
}

impl Io {
    fn take(
        mode: Mode,
        fds: &CarriedFds,
        take: &mut dyn FnMut(RawFd) -> std::result::Result<OwnedFd, String>,
    ) -> std::result::Result<Self, String> {
        let mut io = Io {
            terminal: None,
            writer: None,
            reader: None,
            fds: Fds::default(),
        };
        match mode {
            Mode::Pty => {
                if fds.stdin.is_some() || fds.stdout.is_some() || fds.stderr.is_some() {
                    return Err("a PTY job carried pipes".into());
                }
                if let Some(fd) = fds.pty {
                    let master = take(fd)?;
                    if !rustix::termios::isatty(&master) {
                        return Err(format!("descriptor {fd} is not a terminal"));
                    }
                    let terminal = Arc::new(Terminal::new(master).map_err(|e| e.to_string())?);
                    io.fds.pty = Some(terminal.raw_fd());
                    io.terminal = Some(terminal.clone());
                    io.writer = Some(Writer::Pty(terminal.clone()));
                    io.reader = Some(Reader::Pty(terminal));
                }
            }
            Mode::Pipes => {
                if fds.pty.is_some() {
                    return Err("a pipes job carried a terminal".into());
                }
                if let Some(fd) = fds.stdin {
                    let stdin = PipeWriter::adopt(take(fd)?).map_err(|e| format!("descriptor {fd}: {e}"))?;
                    io.fds.stdin = Some(stdin.as_raw_fd());
                    io.writer = Some(Writer::Pipe(stdin));
                }
                match (fds.stdout, fds.stderr) {
                    (Some(out), Some(err)) => {
                        let stdout = PipeReader::adopt(take(out)?).map_err(|e| format!("descriptor {out}: {e}"))?;
                        let stderr = PipeReader::adopt(take(err)?).map_err(|e| format!("descriptor {err}: {e}"))?;
                        io.fds.stdout = Some(stdout.as_raw_fd());
                        io.fds.stderr = Some(stderr.as_raw_fd());
                        io.reader = Some(Reader::Pipes { stdout, stderr });
                    }
                    (None, None) => {}
                    _ => return Err("a pipes job carried one of its two output pipes".into()),
                }
            }
        }
        Ok(io)
    }
}

/// A carried job's journal is an open regular file holding at least the bytes named.
fn check_journal(journal: CarriedJournal) -> std::result::Result<(), String> {
    let fd = journal.fd;
    let stat = rustix::fs::fstat(inherited_fd(fd)?).map_err(|e| format!("descriptor {fd}: {e}"))?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(format!("descriptor {fd} is not a journal (no regular file)"));
    }
    if (stat.st_size as u64) < journal.len {
        return Err(format!("its journal holds {} bytes, not {}", stat.st_size, journal.len));
    }
    Ok(())
}

/// A carried job's descriptors are open and of their kind: a terminal, or pipes.
fn check_fds(mode: Mode, fds: &CarriedFds) -> std::result::Result<(), String> {
    match mode {
        Mode::Pty => {
            if fds.stdin.is_some() || fds.stdout.is_some() || fds.stderr.is_some() {
                return Err("a PTY job carried pipes".into());
            }
            if let Some(fd) = fds.pty {
                if !rustix::termios::isatty(inherited_fd(fd)?) {
                    return Err(format!("descriptor {fd} is not a terminal"));
                }
            }
        }
        Mode::Pipes => {
            if fds.pty.is_some() || fds.stdout.is_some() != fds.stderr.is_some() {
                return Err("a pipes job carried a terminal, or one of its two output pipes".into());
            }
            for fd in [fds.stdin, fds.stdout, fds.stderr].into_iter().flatten() {
                let stat = rustix::fs::fstat(inherited_fd(fd)?).map_err(|e| format!("descriptor {fd}: {e}"))?;
                if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::Fifo {
                    return Err(format!("descriptor {fd} is not a pipe"));
                }
            }
        }
    }
    Ok(())
}
