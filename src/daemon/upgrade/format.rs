//! The hand-over: what one daemon image tells the next across `execve` (exec.rs), as
//! JSON in a memfd whose descriptor the new image is given (`--handover-fd N`).
//!
//! Versioned by `format`: a reader refuses any format it was not written for, and
//! that refusal happens in the old image's pre-flight (`--handover-check`, exec.rs)
//! BEFORE anything is torn down, so a binary that cannot read this hand-over is never
//! exec'ed. The version is read on its own first (`format_of`): a newer format whose
//! other fields this reader does not know still gets a clear refusal, not a parse
//! error about a field.

use serde::{Deserialize, Serialize};

use crate::daemon::carry::CarriedDaemon;

/// The format this build writes. Raise it whenever a field's meaning changes or a
/// field a reader must understand is added.
pub const FORMAT: u32 = 5;

/// The older formats this build reads too: each only adds what an older writer never
/// wrote, so an older hand-over means the same read as the newest. Format 4 added
/// sandboxes (a format 3 writer refused any sandboxed job or service) and snapshots of
/// a pipes job's output in its journal; format 5 adds snapshots of a terminal job's
/// output (src/output/screen_snapshot.rs). An older reader refuses a newer format: a
/// format 3 reader would adopt sandboxed jobs without their supervisor and TMPDIR,
/// and a format 4 reader could not replay a journal that starts with a terminal's
/// snapshot.
pub const READS_ALSO: [u32; 2] = [3, 4];

/// Everything the new image takes over. Format 2 adds the jobs: the daemon's
/// services, handles and remembered jobs (src/daemon/carry.rs), and what keeps the
/// jobs' processes this process's own (the owner token in their environment, the
/// watchdog's pipe). Format 3 adds each job's input not yet written (a format 2
/// reader would drop it unseen), and carries each job's output steps as a
/// journal's descriptor (src/output/journal.rs) instead of the steps themselves
/// (a format-2 reader would rebuild every output empty). Format 4 adds sandboxed jobs
/// and services (src/job/sandbox_carry.rs, src/sandbox/resolved_carry.rs) and the
/// TMPDIR base (src/sandbox/carry.rs), and a journal may start with a snapshot of the
/// output (src/output/snapshot.rs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Handover {
    pub format: u32,
    /// The version of the image that wrote it (for the log and the restart's answer).
    pub from_version: String,
    /// The socket path the unix listener is bound at.
    pub socket: String,
    /// Descriptors inherited across `execve` (close-on-exec cleared just before it).
    pub fds: Descriptors,
    /// The daemon's handle counters: a handle is never reused while the daemon lives,
    /// restarts included.
    pub next_handle: u64,
    pub next_service: u64,
    /// When the old image stopped serving, in ns of CLOCK_MONOTONIC (the same clock in
    /// both images: the pause is measured across the exec).
    pub paused_at_ns: u64,
    /// The token in every job's owner marker (src/service/registry.rs), and the next
    /// service number after it: the new image goes on with both.
    pub process_token: String,
    pub next_service_number: u64,
    /// The write end of the watchdog's pipe (src/platform/linux/watchdog.rs), kept
    /// open across the exec: its close is the watchdog's signal to kill every job.
    pub watchdog_fd: Option<i32>,
    pub daemon: CarriedDaemon,
    /// The way back when the new image finds the hand-over wrong after the exec.
    pub rollback: Option<Rollback>,
}

/// The previous image's binary, open (it may have been renamed over since), and the
/// arguments it ran with: the new image execs it again with this very hand-over when a
/// record does not check out, before it has taken anything (resume.rs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rollback {
    pub exe_fd: i32,
    pub args: Vec<String>,
}

/// The listening sockets and the lock. Pending connections wait in the listeners'
/// backlogs while the images change: nothing is closed or bound again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Descriptors {
    pub unix_listener: i32,
    pub tcp_listener: Option<i32>,
    /// `daemon.lock`, flock'ed: the lock belongs to the open file, which the new image
    /// inherits, so no other daemon can take the socket in between.
    pub lock: i32,
}

/// Why a hand-over cannot be read. Stable codes: the restart's refusal names them.
#[derive(Debug, PartialEq, Eq)]
pub enum Unreadable {
    /// Not JSON, or no `format` number.
    Garbled(String),
    /// A format this build does not read.
    Format { found: u32, reads: u32 },
    /// The right format, but a field missing or of the wrong kind.
    Fields(String),
    /// A descriptor that cannot be one (negative, or 0..=2: the new image's stdio),
    /// or one named twice.
    Descriptor(i32),
}

impl Unreadable {
    pub fn code(&self) -> &'static str {
        match self {
            Self::Format { .. } => "HANDOVER_FORMAT",
            _ => "HANDOVER_INVALID",
        }
    }
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Garbled(why) => write!(f, "the hand-over is not readable: {why}"),
            Self::Format { found, reads } => write!(
                f,
                "the hand-over is in format {found}; this binary reads format {reads} only"
            ),
            Self::Fields(why) => write!(f, "the hand-over's fields do not fit format {FORMAT}: {why}"),
            Self::Descriptor(fd) => write!(f, "the hand-over names descriptor {fd}, which cannot be one"),
        }
    }
}

impl Handover {
    pub fn encode(&self) -> Vec<u8> {
        // Strings, numbers and JSON values (maps with string keys) always serialise.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads a hand-over, checking its format before anything else.
    pub fn decode(bytes: &[u8]) -> Result<Self, Unreadable> {
        let found = format_of(bytes)?;
        if found != FORMAT && !READS_ALSO.contains(&found) {
            return Err(Unreadable::Format { found, reads: FORMAT });
        }
        let handover: Self = serde_json::from_slice(bytes).map_err(|e| Unreadable::Fields(e.to_string()))?;
        let fds = handover.fds;
        let mut seen = std::collections::HashSet::new();
        let exe = handover.rollback.as_ref().map(|r| r.exe_fd);
        for fd in [
            Some(fds.unix_listener),
            fds.tcp_listener,
            Some(fds.lock),
            handover.watchdog_fd,
            exe,
        ]
        .into_iter()
        .flatten()
        .chain(handover.daemon.fds())
        {
            if fd <= 2 || !seen.insert(fd) {
                return Err(Unreadable::Descriptor(fd));
            }
        }
        if handover.process_token.is_empty() || !handover.process_token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Unreadable::Fields(format!(
                "process token {:?} is not a hex token",
                handover.process_token
            )));
        }
        Ok(handover)
    }
}

/// The `format` field alone.
pub fn format_of(bytes: &[u8]) -> Result<u32, Unreadable> {
    #[derive(Deserialize)]
    struct Head {
        format: u32,
    }
    serde_json::from_slice::<Head>(bytes)
        .map(|h| h.format)
        .map_err(|e| Unreadable::Garbled(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Handover {
        Handover {
            format: FORMAT,
            from_version: "1.2.3".into(),
            socket: "/run/user/1000/native-shell-service/daemon.sock".into(),
            fds: Descriptors {
                unix_listener: 7,
                tcp_listener: Some(9),
                lock: 5,
            },
            next_handle: 41,
            next_service: 6,
            paused_at_ns: 123_456_789,
            process_token: "0123abcd".into(),
            next_service_number: 3,
            watchdog_fd: Some(11),
            daemon: CarriedDaemon::default(),
            rollback: Some(Rollback {
                exe_fd: 12,
                args: vec!["--socket".into(), "/s".into()],
            }),
        }
    }

    #[test]
    fn a_handover_reads_back_as_written() {
        let written = sample();
        assert_eq!(Handover::decode(&written.encode()), Ok(written));
    }

    #[test]
    fn another_format_is_refused_by_its_number_even_with_fields_unknown_here() {
        let newer = format!(
            r#"{{"format": {}, "jobs": [{{"pid": 1}}], "somethingNew": true}}"#,
            FORMAT + 1
        );
        let refused = Handover::decode(newer.as_bytes()).unwrap_err();
        assert_eq!(
            refused,
            Unreadable::Format {
                found: FORMAT + 1,
                reads: FORMAT
            }
        );
        // Formats 1 (no jobs) and 2 (steps inline) are refused too: their fields do
        // not say what the later formats' do.
        for old in [1, 2] {
            let older = format!(r#"{{"format": {old}}}"#);
            assert!(matches!(
                Handover::decode(older.as_bytes()),
                Err(Unreadable::Format { found, .. }) if found == old
            ));
        }
        assert_eq!(refused.code(), "HANDOVER_FORMAT");
        let older = br#"{"format": 0}"#;
        assert_eq!(
            Handover::decode(older).unwrap_err(),
            Unreadable::Format {
                found: 0,
                reads: FORMAT
            }
        );
    }

    /// A format 3 hand-over (no sandboxes in it) and a format 4 one (no terminal
    /// snapshots in it) read as format 5.
    #[test]
    fn an_older_hand_over_is_read() {
        for older in READS_ALSO {
            let mut handover = sample();
            handover.format = older;
            let read = Handover::decode(&handover.encode()).expect("an older format read");
            assert_eq!(read, handover);
        }
    }

    #[test]
    fn garbage_and_missing_fields_are_errors_not_panics() {
        assert!(matches!(Handover::decode(b""), Err(Unreadable::Garbled(_))));
        assert!(matches!(Handover::decode(b"\xff\x00"), Err(Unreadable::Garbled(_))));
        assert!(matches!(
            Handover::decode(br#"{"format": "1"}"#),
            Err(Unreadable::Garbled(_))
        ));
        let missing = format!(r#"{{"format": {FORMAT}, "socket": "/x"}}"#);
        let refused = Handover::decode(missing.as_bytes()).unwrap_err();
        assert!(matches!(refused, Unreadable::Fields(_)), "{refused:?}");
        assert_eq!(refused.code(), "HANDOVER_INVALID");
    }

    #[test]
    fn stdio_or_negative_descriptors_are_refused() {
        for fd in [-1, 0, 1, 2] {
            let mut bad = sample();
            bad.fds.lock = fd;
            assert_eq!(Handover::decode(&bad.encode()), Err(Unreadable::Descriptor(fd)));
        }
        let mut bad = sample();
        bad.fds.tcp_listener = Some(1);
        assert_eq!(Handover::decode(&bad.encode()), Err(Unreadable::Descriptor(1)));
        let mut twice = sample();
        twice.watchdog_fd = Some(twice.fds.lock);
        assert_eq!(
            Handover::decode(&twice.encode()),
            Err(Unreadable::Descriptor(twice.fds.lock))
        );
    }

    // Jobs are carried on Linux only (src/daemon/carry.rs).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_job_descriptor_named_twice_or_a_bad_token_is_refused() {
        let with_journal = |fds: &str, journal: i32| {
            let mut json: serde_json::Value = serde_json::from_slice(&sample().encode()).unwrap();
            let service: serde_json::Value = serde_json::json!({
                "id": 1, "root": "/p", "madeWith": {},
                "service": {"sessionId": "s", "token": "ab-1", "nextHandle": 2, "leaseFd": null, "history": [],
                    "jobs": [serde_json::from_str::<serde_json::Value>(&format!(r#"{{
                        "handle": 1, "pid": 100, "startTicks": 5, "command": "x", "args": null,
                        "description": null, "directory": ".", "mode": "pipes", "startedAtMs": 0,
                        "ranMs": 0, "markerEntry": "M=1", "cgroup": null, "fds": {fds}, "end": null,
                        "killReason": null, "delivered": 0,
                        "shape": {{"limits": {{"text_head": 1, "text_tail": 1, "raw_head": 1, "raw_tail": 1, "raw_stream": 0}},
                                  "separate_stderr": true, "screen": null}},
                        "journal": {{"fd": {journal}, "len": 0}}, "files": null, "filesError": null
                    }}"#)).unwrap()]}
            });
            json["daemon"]["services"] = serde_json::json!([service]);
            serde_json::to_vec(&json).unwrap()
        };
        let with_job = |fds: &str| with_journal(fds, 23);
        let fine = with_job(r#"{"pty": null, "stdin": 20, "stdout": 21, "stderr": 22}"#);
        let read = Handover::decode(&fine).expect("a job record reads");
        assert_eq!(read.daemon.services[0].service.jobs[0].fds.stdout, Some(21));
        let clash = with_job(r#"{"pty": null, "stdin": 20, "stdout": 21, "stderr": 7}"#);
        assert_eq!(
            Handover::decode(&clash),
            Err(Unreadable::Descriptor(7)),
            "the unix listener's"
        );
        let stdio = with_job(r#"{"pty": null, "stdin": 2, "stdout": 21, "stderr": 22}"#);
        assert_eq!(Handover::decode(&stdio), Err(Unreadable::Descriptor(2)));
        // A job's journal is one of the numbers: named twice, it is refused too.
        let journal = with_journal(r#"{"pty": null, "stdin": 20, "stdout": 21, "stderr": 22}"#, 21);
        assert_eq!(Handover::decode(&journal), Err(Unreadable::Descriptor(21)));
        let mut token = sample();
        token.process_token = "not hex; rm".into();
        assert!(matches!(Handover::decode(&token.encode()), Err(Unreadable::Fields(_))));
    }
}
