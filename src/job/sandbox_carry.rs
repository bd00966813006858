//! A sandboxed job across a restart in place (src/job/carry.rs carries the rest of
//! it): what its result reports, its TMPDIR (src/sandbox/carry.rs) and, below Landlock
//! ABI 9, its seccomp listener with the policy its supervisor answers by
//! (src/platform/linux/sandbox/supervise/handover.rs).
//!
//! The job's Landlock domain and seccomp filter are the kernel's, on its processes:
//! they go on as they are. What lived only in the old image is the service's side of
//! them, and each part of it comes from that image's memory, never from anything the
//! job can write (its files, its environment): the policy by device and inode as it
//! was found when the sandbox was made, the TMPDIR and the listener by inherited
//! descriptor, checked before anything is taken.
//!
//! Its hold on the project's git guard goes with it (what it put back so far), the
//! guard's record with its service (src/platform/unix/git_guard/carry.rs).

use std::os::fd::OwnedFd;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::freeze::inherited_fd;
use super::Job;
use crate::sandbox::carry::{adopt_tmpdir, carry_tmpdir, CarriedEnforced, CarriedTmpDir, Keep, Take};
use crate::sandbox::{Enforced, JobTmpDir};

/// A job's sandbox, carried.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedSandbox {
    pub enforced: CarriedEnforced,
    /// Until it is handed back (`None` after: nothing of the job runs).
    pub tmpdir: Option<CarriedTmpDir>,
    /// Its calls to unix sockets, below Landlock ABI 9, while a process of it is left.
    pub supervised: Option<CarriedSupervision>,
    /// Its hold on the project's git guard (the guard's record goes with its service:
    /// src/service/carry.rs).
    #[serde(default)]
    pub git_hold: Option<crate::platform::CarriedGitHold>,
}

use crate::platform::supervisor_handover::{self as handover, CarriedPolicy};

/// The job's seccomp listener's number and what its supervisor answers by.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedSupervision {
    pub fd: i32,
    pub policy: CarriedPolicy,
}

impl CarriedSandbox {
    /// Every descriptor number it names.
    pub fn fds(&self) -> Vec<i32> {
        let mut all = Vec::new();
        if let Some(tmpdir) = &self.tmpdir {
            all.push(tmpdir.fd);
            all.extend(tmpdir.watch);
        }
        all.extend(self.supervised.as_ref().map(|s| s.fd));
        all
    }
}

impl Job {
    /// Why this job's sandbox cannot be carried, if it cannot.
    pub fn sandbox_carriable(&self) -> Result<(), String> {
        let handle = self.meta.handle;
        if self.meta.tmpdir.is_some() && self.meta.sandbox.is_none() {
            return Err(format!("job {handle} has a TMPDIR but no sandbox"));
        }
        Ok(())
    }

    /// The job's sandbox as the hand-over carries it (its reader stands still), its
    /// descriptors given to `keep`.
    pub fn carry_sandbox(&self, keep: Keep<'_>) -> Result<Option<CarriedSandbox>, String> {
        self.sandbox_carriable()?;
        let Some(enforced) = &self.meta.sandbox else {
            return Ok(None);
        };
        let handle = self.meta.handle;
        let tmpdir = match &self.meta.tmpdir {
            Some(tmpdir) => carry_tmpdir(tmpdir, keep).map_err(|e| format!("job {handle}: {e}"))?,
            None => None,
        };
        Ok(Some(CarriedSandbox {
            enforced: enforced.into(),
            tmpdir,
            supervised: self.carry_supervision(keep)?,
            git_hold: self.meta.git_hold.as_ref().map(|hold| hold.carry()),
        }))
    }

    fn carry_supervision(&self, keep: Keep<'_>) -> Result<Option<CarriedSupervision>, String> {
        let handle = self.meta.handle;
        let found = handover::carried(self.meta.pid).map_err(|e| format!("job {handle}: {e}"))?;
        Ok(found.map(|(listener, policy)| CarriedSupervision {
            fd: keep(listener),
            policy,
        }))
    }
}

/// Checks a carried sandbox without taking anything: its report reads back, its
/// descriptors are open and of their kind (the TMPDIR the directory carried, the
/// listener a seccomp listener).
pub fn check_sandbox(carried: &CarriedSandbox) -> Result<(), String> {
    Enforced::try_from(&carried.enforced)?;
    if let Some(tmpdir) = &carried.tmpdir {
        let fd = inherited_fd(tmpdir.fd)?;
        let st = rustix::fs::fstat(fd).map_err(|e| format!("descriptor {}: {e}", tmpdir.fd))?;
        if crate::sandbox::stat_id(&st) != tmpdir.id {
            return Err(format!("descriptor {} is not its TMPDIR", tmpdir.fd));
        }
        if let Some(watch) = tmpdir.watch {
            inherited_fd(watch)?;
        }
    }
    if let Some(supervised) = &carried.supervised {
        if !handover::is_listener(inherited_fd(supervised.fd)?) {
            return Err(format!("descriptor {} is no seccomp listener", supervised.fd));
        }
    }
    Ok(())
}

/// What a carried sandbox becomes in the new image.
pub struct AdoptedSandbox {
    pub enforced: Enforced,
    pub tmpdir: Option<Arc<JobTmpDir>>,
}

/// The new image's side (checked first, the TMPDIR base taken): the report, the
/// TMPDIR held again, and the supervisor answering the job's calls from now on,
/// those made while the images changed first. `pid`: the job's main process.
pub fn adopt_sandbox(carried: &CarriedSandbox, pid: u32, take: Take<'_>) -> Result<AdoptedSandbox, String> {
    let enforced = Enforced::try_from(&carried.enforced)?;
    let tmpdir = match &carried.tmpdir {
        Some(tmpdir) => Some(Arc::new(adopt_tmpdir(tmpdir, take)?)),
        None => None,
    };
    if let Some(supervised) = &carried.supervised {
        let listener: OwnedFd = take(supervised.fd)?;
        supervise(listener, supervised, pid)?;
    }
    Ok(AdoptedSandbox { enforced, tmpdir })
}

fn supervise(listener: OwnedFd, supervised: &CarriedSupervision, pid: u32) -> Result<(), String> {
    handover::resume(listener, supervised.policy.clone(), pid)
        .map_err(|e| format!("its unix socket supervisor did not start: {e}"))
}
