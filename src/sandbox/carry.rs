//! A sandboxed job's sandbox as a restart in place (src/daemon/upgrade/) hands it to
//! the next image: what its result reports (`Enforced`), its TMPDIR (name, identity,
//! the descriptor its rule was built from and the watch that says when nothing of the
//! job is left) and the private base the TMPDIRs are in (`tmpdir.rs`), which the new
//! image takes as its own. The seccomp listener and its policy go with the job too
//! (src/job/sandbox_carry.rs, src/platform/linux/sandbox/supervise/handover.rs).
//!
//! Everything here is written by the old image from what it holds, never read again
//! from a path a job could have swapped: the base and each TMPDIR are taken back by
//! their inherited descriptors, checked against the device and inode carried, and a
//! TMPDIR's name in the base must still be that directory.

use std::os::fd::{OwnedFd, RawFd};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::private_base::Base;
use super::tmpdir::{adopt_base, in_base, made_base};
use super::{Anchor, Enforced, FileId, JobTmpDir, Mechanism};

/// Takes an inherited descriptor by number (close-on-exec again).
pub type Take<'a> = &'a mut dyn FnMut(RawFd) -> Result<OwnedFd, String>;
/// Keeps a descriptor for the exec; returns the number the record names.
pub type Keep<'a> = &'a mut dyn FnMut(OwnedFd) -> i32;

/// The private base of the jobs' TMPDIRs, carried.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedTmpBase {
    pub path: PathBuf,
    pub fd: i32,
    /// The directories it is reached through, its own identity last.
    pub reached: Vec<FileId>,
}

/// The base, if this image made one.
pub fn carry_base(keep: Keep<'_>) -> Result<Option<CarriedTmpBase>, String> {
    let Some(base) = made_base() else { return Ok(None) };
    let fd = base
        .dir
        .fd()
        .try_clone_to_owned()
        .map_err(|e| format!("the TMPDIR base cannot be kept: {e}"))?;
    Ok(Some(CarriedTmpBase {
        path: base.dir.path().to_path_buf(),
        fd: keep(fd),
        reached: base.reached.clone(),
    }))
}

/// The new image's side: the carried base becomes this process's (before any job
/// takes a TMPDIR).
pub fn adopt_carried_base(carried: &CarriedTmpBase, take: Take<'_>) -> Result<(), String> {
    let id = *carried.reached.last().ok_or("the TMPDIR base carried no identity")?;
    let fd = take(carried.fd)?;
    let dir = Anchor::carried(carried.path.clone(), fd, id).map_err(|e| format!("the TMPDIR base: {e}"))?;
    if !dir.is_dir() {
        return Err("the TMPDIR base is no directory".into());
    }
    adopt_base(Base {
        dir,
        reached: carried.reached.clone(),
    })
}

/// A job's TMPDIR, carried while it is not handed back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedTmpDir {
    /// Its name in the base.
    pub name: String,
    pub id: FileId,
    pub fd: i32,
    /// What says when no process of the job is left (a copy of its seccomp listener,
    /// where no cgroup holds the job).
    pub watch: Option<i32>,
}

pub fn carry_tmpdir(tmpdir: &JobTmpDir, keep: Keep<'_>) -> Result<Option<CarriedTmpDir>, String> {
    let Some(parts) = tmpdir.carried_parts() else {
        return Ok(None);
    };
    let parts = parts.map_err(|e| format!("its TMPDIR cannot be kept: {e}"))?;
    let (name, id) = (parts.name, parts.id);
    let fd = keep(parts.dir);
    let watch = parts.watch.map(&mut *keep);
    Ok(Some(CarriedTmpDir { name, id, fd, watch }))
}

/// The new image's side (after `adopt_carried_base`): the TMPDIR held again, removed or
/// kept for another job at the job's end as before.
pub fn adopt_tmpdir(carried: &CarriedTmpDir, take: Take<'_>) -> Result<JobTmpDir, String> {
    let name = &carried.name;
    if name.is_empty() || name.contains('/') || !in_base(name, carried.id) {
        return Err(format!("its TMPDIR {name:?} is no longer the directory carried"));
    }
    let base = made_base().ok_or("no TMPDIR base was carried")?;
    let fd = take(carried.fd)?;
    let dir = Anchor::carried(base.dir.path().join(name), fd, carried.id).map_err(|e| format!("its TMPDIR: {e}"))?;
    let watch = match carried.watch {
        Some(fd) => Some(take(fd)?),
        None => None,
    };
    Ok(JobTmpDir::adopted(name.clone(), dir, watch))
}

/// What a sandboxed job's result reports, carried (`Enforced`'s fixed words as text).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedEnforced {
    pub mechanism: String,
    pub abi: u32,
    pub write: Vec<String>,
    pub read: Option<Vec<String>>,
    pub read_only: bool,
    pub tmpdir: String,
    pub network: String,
    pub tcp_ports: Vec<u16>,
    pub filesystem: bool,
    pub tcp: bool,
    pub scoping: bool,
    pub seccomp: bool,
    pub unix_sockets: String,
    pub notes: Vec<String>,
    pub env_dropped: Vec<String>,
    pub restored: Vec<String>,
    pub read_denied: Vec<String>,
    pub sysv_ipc: bool,
}

impl From<&Enforced> for CarriedEnforced {
    fn from(e: &Enforced) -> Self {
        Self {
            mechanism: e.mechanism.as_str().into(),
            abi: e.abi,
            write: e.write.clone(),
            read: e.read.clone(),
            read_only: e.read_only,
            tmpdir: e.tmpdir.clone(),
            network: e.network.into(),
            tcp_ports: e.tcp_ports.clone(),
            filesystem: e.filesystem,
            tcp: e.tcp,
            scoping: e.scoping,
            seccomp: e.seccomp,
            unix_sockets: e.unix_sockets.into(),
            notes: e.notes.clone(),
            env_dropped: e.env_dropped.clone(),
            restored: e.restored.clone(),
            read_denied: e.read_denied.clone(),
            sysv_ipc: e.sysv_ipc,
        }
    }
}

/// One of `words`, as the `&'static str` `Enforced` holds; `Err` for any other.
fn word(what: &str, text: &str, words: &[&'static str]) -> Result<&'static str, String> {
    words
        .iter()
        .copied()
        .find(|w| *w == text)
        .ok_or_else(|| format!("its sandbox's {what} {text:?} is none this image knows"))
}

impl TryFrom<&CarriedEnforced> for Enforced {
    type Error = String;

    fn try_from(c: &CarriedEnforced) -> Result<Self, String> {
        let mechanism = [Mechanism::Landlock, Mechanism::Seatbelt]
            .into_iter()
            .find(|m| m.as_str() == c.mechanism)
            .ok_or_else(|| format!("its sandbox's mechanism {:?} is none this image knows", c.mechanism))?;
        Ok(Self {
            mechanism,
            abi: c.abi,
            write: c.write.clone(),
            read: c.read.clone(),
            read_only: c.read_only,
            tmpdir: c.tmpdir.clone(),
            network: word("network", &c.network, &["none", "ports", "all"])?,
            tcp_ports: c.tcp_ports.clone(),
            filesystem: c.filesystem,
            tcp: c.tcp,
            scoping: c.scoping,
            seccomp: c.seccomp,
            unix_sockets: word("unixSockets", &c.unix_sockets, &["landlock", "supervised", "open"])?,
            notes: c.notes.clone(),
            env_dropped: c.env_dropped.clone(),
            restored: c.restored.clone(),
            read_denied: c.read_denied.clone(),
            sysv_ipc: c.sysv_ipc,
        })
    }
}
