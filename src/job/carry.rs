//! One job as a restart in place (src/daemon/upgrade/) hands it to the next image:
//! what it was started as, its process, its descriptors (by number: the exec keeps
//! them open), its output (the steps that rebuild it: src/output/replay.rs, and its
//! files), how it ended if it did, and what its caller was already given.
//!
//! Its input not yet written goes with it: what its writer standing still had not
//! written (src/job/writer.rs), which the new image's writer writes first.
//!
//! A sandboxed job's sandbox goes with it (src/job/sandbox_carry.rs).
//!
//! A job the hand-over cannot carry whole refuses the restart (nothing is stopped):
//! one whose output's journal could not be made or written (src/output/journal.rs).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use base64::Engine;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::job::freeze::Fds;
use crate::job::sandbox_carry::{AdoptedSandbox, CarriedSandbox};
use crate::job::{Job, JobMeta, JobStatus};
use crate::output::persist::{unix_millis, CarriedFiles, JobFiles};
use crate::output::{JobOutput, Shape};
use crate::platform::{Containment, Exit, Mode};

/// A job, carried.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedJob {
    pub handle: u32,
    pub pid: u32,
    pub start_ticks: u64,
    pub command: String,
    pub args: Option<Vec<String>>,
    pub description: Option<String>,
    pub directory: String,
    /// "pty" or "pipes".
    pub mode: String,
    pub started_at_ms: u64,
    /// How long it had run at the freeze (its `started` instant is set back by as much).
    pub ran_ms: u64,
    pub marker_entry: String,
    /// Its cgroup, when one holds it.
    pub cgroup: Option<std::path::PathBuf>,
    /// Its descriptors' numbers in the new image (none once its output is done).
    pub fds: CarriedFds,
    pub end: Option<CarriedEnd>,
    /// Set by a kill in progress: the exit is reported as what caused it.
    pub kill_reason: Option<String>,
    pub delivered: u64,
    pub shape: Shape,
    /// Its output's steps (src/output/journal.rs), by descriptor.
    pub journal: CarriedJournal,
    /// Its process's exit, taken while its reader stood still (`Freeze::hold_or_exit`):
    /// the process is reaped, its status is this; the new image publishes it.
    #[serde(default)]
    pub exited: Option<CarriedExit>,
    pub files: Option<CarriedFiles>,
    pub files_error: Option<String>,
    /// The input its writer had not written (none when nothing was queued).
    #[serde(default)]
    pub input: Option<CarriedInput>,
    /// Its sandbox, when it has one (src/job/sandbox_carry.rs); set by the caller,
    /// who keeps its descriptors.
    #[serde(default)]
    pub sandbox: Option<CarriedSandbox>,
}

/// Input queued for a job and not yet written, in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedInput {
    #[serde(serialize_with = "to_base64", deserialize_with = "from_base64")]
    pub bytes: Vec<u8>,
    /// A close of stdin follows (pipes mode: the program then reads EOF).
    pub close: bool,
}

/// An exit taken during the freeze.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CarriedExit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

impl From<CarriedExit> for Exit {
    fn from(exit: CarriedExit) -> Self {
        Exit {
            code: exit.code,
            signal: exit.signal,
        }
    }
}

/// A job's journal: its descriptor's number in the new image, and the bytes that
/// rebuild the output (what was written after them, if anything, is not read).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CarriedJournal {
    pub fd: i32,
    pub len: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CarriedFds {
    pub pty: Option<i32>,
    pub stdin: Option<i32>,
    pub stdout: Option<i32>,
    pub stderr: Option<i32>,
}

impl CarriedFds {
    pub fn all(&self) -> impl Iterator<Item = i32> {
        [self.pty, self.stdin, self.stdout, self.stderr].into_iter().flatten()
    }
}

impl From<Fds> for CarriedFds {
    fn from(fds: Fds) -> Self {
        Self {
            pty: fds.pty,
            stdin: fds.stdin,
            stdout: fds.stdout,
            stderr: fds.stderr,
        }
    }
}

/// How a carried job ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedEnd {
    pub status: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub error: Option<String>,
    pub ended_at_ms: u64,
    pub duration_ms: u64,
    pub background_pids: Vec<u32>,
    pub output_closed_at_exit: bool,
}

pub fn status_named(name: &str) -> Option<JobStatus> {
    [
        JobStatus::Running,
        JobStatus::Exited,
        JobStatus::Killed,
        JobStatus::TimedOut,
        JobStatus::Failed,
    ]
    .into_iter()
    .find(|s| s.as_str() == name)
}

pub fn mode_named(name: &str) -> Option<Mode> {
    [Mode::Pty, Mode::Pipes].into_iter().find(|m| m.as_str() == name)
}

fn from_millis(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms)
}

impl Job {
    /// The job as the hand-over carries it; its reader must stand still (`freeze`).
    /// `fds`: the numbers its descriptors have in the new image. `Err`: why it cannot
    /// be carried.
    pub fn carry(&self, fds: CarriedFds) -> Result<CarriedJob, String> {
        let handle = self.meta.handle;
        self.carriable()?;
        let input = self.carried_input()?;
        // Nothing left to write it to (its output is done, so its descriptors are not
        // carried): the program can no longer read it, as without a restart.
        let input = input.filter(|_| fds.stdin.is_some() || fds.pty.is_some());
        let state = self.state();
        let end = (state.status != JobStatus::Running).then(|| CarriedEnd {
            status: state.status.as_str().to_string(),
            exit_code: state.exit_code,
            signal: state.signal,
            error: state.error.clone(),
            ended_at_ms: state.ended_at.map(unix_millis).unwrap_or(0),
            duration_ms: state.duration.map(|d| d.as_millis() as u64).unwrap_or(0),
            background_pids: state.background_pids.clone(),
            output_closed_at_exit: state.output_closed_at_exit,
        });
        Ok(CarriedJob {
            handle,
            pid: self.meta.pid,
            start_ticks: self.meta.start_ticks,
            command: self.meta.command.clone(),
            args: self.meta.args.clone(),
            description: self.meta.description.clone(),
            directory: self.meta.directory.clone(),
            mode: self.meta.mode.as_str().to_string(),
            started_at_ms: unix_millis(self.meta.started_at),
            ran_ms: self.meta.started.elapsed().as_millis() as u64,
            marker_entry: self.meta.marker_entry.clone(),
            cgroup: self.meta.containment.path().map(|p| p.to_path_buf()),
            fds,
            end,
            kill_reason: state.kill_reason.map(|s| s.as_str().to_string()),
            delivered: state.delivered,
            shape: state.output.shape(),
            // Set by the caller, who keeps its descriptor (`seal_journal`).
            journal: CarriedJournal::default(),
            exited: None,
            files: state.output.files().map(JobFiles::carry),
            files_error: state
                .output
                .files()
                .is_none()
                .then(|| state.output.persist_error())
                .flatten(),
            input,
            sandbox: None,
        })
    }

    /// What the writer standing still has not written. The queue takes nothing more
    /// from here on (until a thaw: `InputQueue::reopen`); an input counted in but not
    /// yet handed to the writer (a call in flight as the restart began) refuses the
    /// hand-over rather than be lost.
    fn carried_input(&self) -> Result<Option<CarriedInput>, String> {
        let handle = self.meta.handle;
        self.queued_input.hand_over();
        let Some(unwritten) = self.freeze.unwritten() else {
            // No writer (stdin closed, or a finished job): nothing would be written.
            return Ok(None);
        };
        if unwritten.items != self.queued_input.count() {
            return Err(format!(
                "job {handle}: input was being queued as the restart began (try again)"
            ));
        }
        Ok((unwritten.items > 0).then_some(CarriedInput {
            bytes: unwritten.bytes,
            close: unwritten.close,
        }))
    }
}

impl Job {
    /// Its output's journal, every step in the file (its reader stands still): a copy of
    /// the descriptor (close-on-exec) and the length the new image replays.
    pub fn seal_journal(&self) -> Result<(std::fs::File, u64), String> {
        let handle = self.meta.handle;
        self.state()
            .output
            .seal_journal()
            .map_err(|why| unrebuildable(handle, &why))
    }
}

/// How long a running job whose process is already reaped may take to hand its exit
/// to its frozen reader (the exit ring's thread sends it just after the kernel reaps).
const EXIT_IN_FLIGHT: Duration = Duration::from_secs(2);

impl Job {
    /// The exit its process made while its reader stood still, if it made one. A job
    /// still running whose process is gone (reaped by the exit ring, its status on the
    /// way to the reader) is waited for, up to `EXIT_IN_FLIGHT`; a process still there
    /// (running, or a zombie no one reaped) is left for the new image to take.
    pub fn exit_while_frozen(&self) -> Option<CarriedExit> {
        let deadline = Instant::now() + EXIT_IN_FLIGHT;
        loop {
            if let Some(exit) = self.freeze.exit_while_held() {
                return Some(CarriedExit {
                    code: exit.code,
                    signal: exit.signal,
                });
            }
            let running = self.state().status == JobStatus::Running && !self.freeze.reader_gone();
            if !running
                || crate::platform::start_ticks(self.meta.pid as i32) == self.meta.start_ticks
                || Instant::now() >= deadline
            {
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn unrebuildable(handle: u32, why: &str) -> String {
    format!("job {handle}: its output cannot be rebuilt ({why}; remove the job first)")
}

impl Job {
    /// Why this job cannot be carried, if it cannot (see the module's comment).
    pub fn carriable(&self) -> Result<(), String> {
        let handle = self.meta.handle;
        self.sandbox_carriable()?;
        if let Some(why) = self.state().output.journal_refusal() {
            return Err(unrebuildable(handle, &why));
        }
        Ok(())
    }
}

/// The parts of a carried job before its tasks start (src/service/carry.rs starts them).
pub struct Adopted {
    pub meta: JobMeta,
    pub output: JobOutput,
}

/// Checks a carried job without taking anything: what `adopt` relies on. The process
/// must be this process's child with the start time carried (not another that got its
/// pid), its cgroup one of this process's job cgroups.
pub fn check(carried: &CarriedJob) -> Result<Mode, String> {
    let handle = carried.handle;
    let mode = mode_named(&carried.mode).ok_or_else(|| format!("job {handle}: no mode {:?}", carried.mode))?;
    if carried.pid <= 1 {
        return Err(format!("job {handle}: pid {}", carried.pid));
    }
    if let Some(end) = &carried.end {
        status_named(&end.status)
            .filter(|s| *s != JobStatus::Running)
            .ok_or_else(|| format!("job {handle}: no end status {:?}", end.status))?;
    }
    if let Some(input) = &carried.input {
        if input.bytes.len() > crate::base::limits::MAX_QUEUED_INPUT_BYTES {
            return Err(format!("job {handle}: more input than a queue holds"));
        }
    }
    // A running job whose process is not the one started (gone, or its pid reused) is
    // not an error: `ended_unseen` ends it without touching that pid.
    if let Some(reason) = &carried.kill_reason {
        status_named(reason).ok_or_else(|| format!("job {handle}: no kill reason {reason:?}"))?;
    }
    if (mode == Mode::Pty) != carried.shape.screen.is_some() || (mode == Mode::Pipes) != carried.shape.separate_stderr {
        return Err(format!("job {handle}: its output's shape does not fit its mode"));
    }
    if let Some(path) = &carried.cgroup {
        if crate::platform::job_cgroup_number(path).is_none() {
            return Err(format!(
                "job {handle}: {} is not one of this daemon's job cgroups",
                path.display()
            ));
        }
    }
    Ok(mode)
}

/// Makes a checked job's meta and output (`check` first: a cgroup taken here and let go
/// on an error would kill the job). `journal`: its journal's descriptor, taken.
pub fn adopt(carried: &CarriedJob, journal: std::fs::File, sandbox: Option<AdoptedSandbox>) -> Result<Adopted, String> {
    let handle = carried.handle;
    let mode = check(carried)?;
    // Before the cgroup is taken: a journal that does not replay fails here with
    // nothing let go.
    let mut output =
        JobOutput::rebuilt(carried.shape, journal, carried.journal.len).map_err(|e| format!("job {handle}: {e}"))?;
    let containment = match &carried.cgroup {
        Some(path) => Containment::adopt(path).ok_or_else(|| {
            format!(
                "job {handle}: {} is not one of this daemon's job cgroups",
                path.display()
            )
        })?,
        None => Containment::default(),
    };
    let ran = Duration::from_millis(carried.ran_ms);
    match (&carried.files, &carried.files_error) {
        (Some(files), _) => output.set_files(Some(Ok(JobFiles::adopt(files.clone())))),
        (None, Some(why)) => output.set_files(Some(Err(why.clone()))),
        (None, None) => {}
    }
    let meta = JobMeta {
        handle,
        pid: carried.pid,
        command: carried.command.clone(),
        args: carried.args.clone(),
        description: carried.description.clone(),
        directory: carried.directory.clone(),
        mode,
        started_at: from_millis(carried.started_at_ms),
        started: Instant::now().checked_sub(ran).unwrap_or_else(Instant::now),
        marker_entry: carried.marker_entry.clone(),
        start_ticks: carried.start_ticks,
        containment,
        sandbox: sandbox.as_ref().map(|s| s.enforced.clone()),
        tmpdir: sandbox.and_then(|s| s.tmpdir),
        git_hold: None,
    };
    Ok(Adopted { meta, output })
}

/// A job carried as running whose process is gone, its exit not carried: it exited
/// after the hand-over was written, and the previous image's exit ring reaped it
/// (src/platform/linux/exit_ring.rs), its status lost with that image. The record, ended
/// as failed with that reason; its pid (gone, or another process's now) is never
/// adopted nor signalled. Refusing the hand-over instead would roll back to the
/// previous binary, which reads the same hand-over and refuses it again.
pub fn ended_unseen(carried: &CarriedJob) -> Option<CarriedJob> {
    if carried.end.is_some()
        || carried.exited.is_some()
        || crate::platform::start_ticks(carried.pid as i32) == carried.start_ticks
    {
        return None;
    }
    let mut ended = carried.clone();
    ended.end = Some(CarriedEnd {
        status: JobStatus::Failed.as_str().to_string(),
        exit_code: None,
        signal: None,
        error: Some(format!(
            "process {} ended during the restart in place; its exit status was lost",
            carried.pid
        )),
        ended_at_ms: unix_millis(SystemTime::now()),
        duration_ms: carried.ran_ms,
        background_pids: Vec::new(),
        output_closed_at_exit: false,
    });
    Some(ended)
}

/// Puts the carried state on a job just made from `adopt`'s parts.
pub fn restore_state(job: &Arc<Job>, carried: &CarriedJob) {
    let mut state = job.state();
    state.delivered = carried.delivered;
    state.kill_reason = carried.kill_reason.as_deref().and_then(status_named);
    if let Some(end) = &carried.end {
        state.status = status_named(&end.status).unwrap_or(JobStatus::Failed);
        state.exit_code = end.exit_code;
        state.signal = end.signal;
        state.error = end.error.clone();
        state.ended_at = Some(from_millis(end.ended_at_ms));
        state.duration = Some(Duration::from_millis(end.duration_ms));
        state.background_pids = end.background_pids.clone();
        state.output_closed_at_exit = end.output_closed_at_exit;
    }
    drop(state);
    // Its files came with it: nobody waits for them to be made.
    job.files_ready.send_replace(true);
    if carried.end.is_some() {
        // Ended before the hand-over: its waits resolve at once, as they did there.
        job.finished.send_replace(true);
    }
    // Queued before its writer starts: written first, in order, before any input the
    // new image takes (it serves no one yet).
    if let Some(input) = &carried.input {
        if !input.bytes.is_empty() {
            let _ = job.send_input(crate::job::Input::Data(input.bytes.clone()));
        }
        if input.close {
            let _ = job.send_input(crate::job::Input::Close);
        }
    }
}

/// The carried input's bytes, as text in the hand-over's JSON.
fn to_base64<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn from_base64<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    let text = String::deserialize(d)?;
    base64::engine::general_purpose::STANDARD
        .decode(text.as_bytes())
        .map_err(serde::de::Error::custom)
}
