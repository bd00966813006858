//! A job's files as a restart in place (src/daemon/upgrade/) carries them to the new
//! image: where they are, how much each holds, what they are (to tell them from files
//! put at their names since) and why they lack output, if they do. No descriptor is
//! carried: the new image opens them again at their first write, as after `idle`.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::{FileIdentity, JobFiles};

/// `JobFiles` without its descriptors.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedFiles {
    pub dir: PathBuf,
    pub has_stderr: bool,
    pub closed: bool,
    pub cap: u64,
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    pub stdout_text: u64,
    pub refused: u64,
    pub problem: Option<String>,
    pub pruned: bool,
    /// (device, inode, change time in ns since the epoch) of stdout.txt and stderr.txt.
    pub identity: [Option<(u64, u64, Option<u128>)>; 2],
    /// The temporary file of the next `info.json` exists (the previous image made it).
    pub spare_info: bool,
    pub info_written: bool,
}

fn identity_out(identity: Option<FileIdentity>) -> Option<(u64, u64, Option<u128>)> {
    identity.map(|(dev, ino, time)| {
        let nanos = time.and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok().map(|d| d.as_nanos()));
        (dev, ino, nanos)
    })
}

fn identity_in(identity: Option<(u64, u64, Option<u128>)>) -> Option<FileIdentity> {
    identity.map(|(dev, ino, nanos)| {
        let time = nanos.and_then(|n| {
            let secs = u64::try_from(n / 1_000_000_000).ok()?;
            SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, (n % 1_000_000_000) as u32))
        });
        (dev, ino, time)
    })
}

impl JobFiles {
    pub fn carry(&self) -> CarriedFiles {
        CarriedFiles {
            dir: self.dir.clone(),
            has_stderr: self.has_stderr,
            closed: self.closed,
            cap: self.cap,
            stdout_bytes: self.stdout_bytes,
            stderr_bytes: self.stderr_bytes,
            stdout_text: self.stdout_text,
            refused: self.refused,
            problem: self.problem.clone(),
            pruned: self.pruned,
            identity: [identity_out(self.identity[0]), identity_out(self.identity[1])],
            spare_info: self.spare_info,
            info_written: self.info_written,
        }
    }

    /// The files a previous image wrote, taken as they were. The first write opens
    /// them again and checks they are still the files it wrote (`open_for_write`).
    pub fn adopt(carried: CarriedFiles) -> Self {
        Self {
            dir: carried.dir,
            stdout: None,
            stderr: None,
            has_stderr: carried.has_stderr,
            closed: carried.closed,
            cap: carried.cap,
            stdout_bytes: carried.stdout_bytes,
            stderr_bytes: carried.stderr_bytes,
            stdout_text: carried.stdout_text,
            refused: carried.refused,
            problem: carried.problem,
            pruned: carried.pruned,
            identity: [identity_in(carried.identity[0]), identity_in(carried.identity[1])],
            spare_info: carried.spare_info,
            info_written: carried.info_written,
        }
    }
}
