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

/// The format this build writes and the only one it reads. Raise it whenever a field's
/// meaning changes or a field a reader must understand is added.
pub const FORMAT: u32 = 1;

/// Everything the new image takes over.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// A descriptor that cannot be one (negative, or 0..=2: the new image's stdio).
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
        // A struct of strings and numbers always serialises.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads a hand-over, checking its format before anything else.
    pub fn decode(bytes: &[u8]) -> Result<Self, Unreadable> {
        let found = format_of(bytes)?;
        if found != FORMAT {
            return Err(Unreadable::Format { found, reads: FORMAT });
        }
        let handover: Self = serde_json::from_slice(bytes).map_err(|e| Unreadable::Fields(e.to_string()))?;
        let fds = handover.fds;
        for fd in [Some(fds.unix_listener), fds.tcp_listener, Some(fds.lock)]
            .into_iter()
            .flatten()
        {
            if fd <= 2 {
                return Err(Unreadable::Descriptor(fd));
            }
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
        }
    }

    #[test]
    fn a_handover_reads_back_as_written() {
        let written = sample();
        assert_eq!(Handover::decode(&written.encode()), Ok(written));
    }

    #[test]
    fn another_format_is_refused_by_its_number_even_with_fields_unknown_here() {
        let newer = br#"{"format": 2, "jobs": [{"pid": 1}], "somethingNew": true}"#;
        let refused = Handover::decode(newer).unwrap_err();
        assert_eq!(
            refused,
            Unreadable::Format {
                found: 2,
                reads: FORMAT
            }
        );
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
    }
}
