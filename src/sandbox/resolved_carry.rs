//! A service's sandbox (`Resolved`) as a restart in place hands it to the next image:
//! every directory and socket it holds open goes over by descriptor (the exec keeps
//! it), with the path it was opened at and its device and inode; the rest as values.
//!
//! Nothing is resolved again by name in the new image: a job of the service may have
//! replaced a directory the spec names (one in its writable paths, or under the shared
//! `/tmp`) since the sandbox was made, and rules built from the name now would follow
//! what the job put there. The new image checks each descriptor is open and still the
//! file carried (`check`), and builds the sandbox from them (`adopt`): its later jobs
//! get the rules the earlier ones got.

use std::os::fd::{OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::carry::{Keep, Take};
use super::{next_resolution_id, Anchor, FileId, LayerSlot, Network, Resolved};

/// A file the sandbox holds open.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedAnchor {
    pub path: PathBuf,
    pub fd: i32,
    pub id: FileId,
}

/// A service's sandbox, carried.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedResolved {
    pub root: CarriedAnchor,
    pub read_only: bool,
    pub write: Vec<CarriedAnchor>,
    pub read: Option<Vec<CarriedAnchor>>,
    pub network: Network,
    pub shared_tmp: bool,
    pub notes: Vec<String>,
    pub env: Vec<String>,
    pub per_run: bool,
    pub hidden: Vec<PathBuf>,
    pub read_allow: Vec<CarriedAnchor>,
    pub read_denied: Vec<String>,
    pub hidden_notes: Vec<String>,
    pub sysv_ipc: bool,
    pub unix_sockets: Vec<CarriedAnchor>,
}

impl CarriedResolved {
    /// Every descriptor number it names.
    pub fn fds(&self) -> Vec<i32> {
        self.anchors().map(|a| a.fd).collect()
    }

    fn anchors(&self) -> impl Iterator<Item = &CarriedAnchor> {
        std::iter::once(&self.root)
            .chain(&self.write)
            .chain(self.read.iter().flatten())
            .chain(&self.read_allow)
            .chain(&self.unix_sockets)
    }
}

/// The sandbox as the hand-over carries it, copies of its descriptors given to `keep`.
pub fn carry_resolved(resolved: &Resolved, keep: Keep<'_>) -> Result<CarriedResolved, String> {
    let mut one = |anchor: &Anchor| -> Result<CarriedAnchor, String> {
        let fd = anchor
            .fd()
            .try_clone_to_owned()
            .map_err(|e| format!("its sandbox's {} cannot be kept: {e}", anchor.path().display()))?;
        Ok(CarriedAnchor {
            path: anchor.path().to_path_buf(),
            fd: keep(fd),
            id: anchor.id(),
        })
    };
    let mut all = |anchors: &[Anchor]| anchors.iter().map(&mut one).collect::<Result<Vec<_>, _>>();
    let write = all(&resolved.write)?;
    let read = resolved.read.as_deref().map(&mut all).transpose()?;
    let read_allow = all(&resolved.read_allow)?;
    let unix_sockets = all(&resolved.unix_sockets)?;
    Ok(CarriedResolved {
        root: one(&resolved.root)?,
        read_only: resolved.read_only,
        write,
        read,
        network: resolved.network.clone(),
        shared_tmp: resolved.shared_tmp,
        notes: resolved.notes.clone(),
        env: resolved.env.clone(),
        per_run: resolved.per_run,
        hidden: resolved.hidden.clone(),
        read_allow,
        read_denied: resolved.read_denied.clone(),
        hidden_notes: resolved.hidden_notes.clone(),
        sysv_ipc: resolved.sysv_ipc,
        unix_sockets,
    })
}

/// Checks a carried sandbox without taking anything: each descriptor open and still
/// the file carried, the root a directory, each socket a socket.
pub fn check_resolved(carried: &CarriedResolved) -> Result<(), String> {
    for anchor in carried.anchors() {
        let fd = anchor.fd;
        if fd <= 2 {
            return Err(format!("its sandbox names descriptor {fd}, which cannot be one"));
        }
        // SAFETY: a number only, while this image has taken nothing; fstat says
        // whether it is open and what it is.
        let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let st = rustix::fs::fstat(borrowed).map_err(|e| format!("its sandbox's descriptor {fd}: {e}"))?;
        if super::stat_id(&st) != anchor.id {
            return Err(format!(
                "its sandbox's descriptor {fd} is not {} as carried",
                anchor.path.display()
            ));
        }
    }
    Ok(())
}

/// The new image's side (checked first): the sandbox built from the inherited
/// descriptors, with a resolution id of this image's (rules built ahead are this
/// image's too).
pub fn adopt_resolved(carried: &CarriedResolved, take: Take<'_>) -> Result<Resolved, String> {
    let mut one = |anchor: &CarriedAnchor| -> Result<Anchor, String> {
        let fd: OwnedFd = take(anchor.fd as RawFd)?;
        Anchor::carried(anchor.path.clone(), fd, anchor.id)
            .map_err(|e| format!("its sandbox's {}: {e}", anchor.path.display()))
    };
    let mut all = |anchors: &[CarriedAnchor]| anchors.iter().map(&mut one).collect::<Result<Vec<_>, _>>();
    let write = all(&carried.write)?;
    let read = carried.read.as_deref().map(&mut all).transpose()?;
    let read_allow = all(&carried.read_allow)?;
    let unix_sockets = all(&carried.unix_sockets)?;
    let root = one(&carried.root)?;
    if !root.is_dir() {
        return Err("its sandbox's root is no directory".into());
    }
    if unix_sockets.iter().any(|a| !a.is_socket()) {
        return Err("its sandbox's unixSockets are not all sockets".into());
    }
    Ok(Resolved {
        id: next_resolution_id(),
        root: Arc::new(root),
        read_only: carried.read_only,
        write,
        read,
        network: carried.network.clone(),
        shared_tmp: carried.shared_tmp,
        notes: carried.notes.clone(),
        env: carried.env.clone(),
        per_run: carried.per_run,
        hidden: carried.hidden.clone(),
        read_allow,
        read_denied: carried.read_denied.clone(),
        hidden_notes: carried.hidden_notes.clone(),
        sysv_ipc: carried.sysv_ipc,
        read_layer: LayerSlot::default(),
        unix_sockets,
    })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::sandbox::{resolve_within, SandboxSpec};
    use std::os::fd::{FromRawFd, IntoRawFd};

    /// The carried sandbox is the one the previous image held, not what its names lead
    /// to now: a directory the spec names, replaced since (as a job that may write its
    /// parent can), is not what the adopted sandbox grants.
    #[test]
    fn adopted_from_the_descriptors_held_not_from_the_names() {
        let dir = tempfile::tempdir().unwrap();
        let root_path = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root_path.join("out")).unwrap();
        let root = Arc::new(Anchor::open(&root_path).unwrap());
        let spec = SandboxSpec {
            write: vec!["out".into()],
            ..SandboxSpec::default()
        };
        let resolved = resolve_within(&spec, &root, &[]).unwrap();
        let held = resolved.write[0].id();
        let carried = carry_resolved(&resolved, &mut |fd| fd.into_raw_fd()).unwrap();
        drop(resolved);

        std::fs::rename(root_path.join("out"), root_path.join("out-before")).unwrap();
        std::fs::create_dir(root_path.join("out")).unwrap();
        check_resolved(&carried).unwrap();
        // SAFETY: the numbers `carry_resolved` left open above, each taken once.
        let adopted = adopt_resolved(&carried, &mut |fd| Ok(unsafe { OwnedFd::from_raw_fd(fd) })).unwrap();
        assert_eq!(
            adopted.write[0].id(),
            held,
            "the directory held, not the one now at its name"
        );
        let now = Anchor::open(&root_path.join("out")).unwrap();
        assert_ne!(adopted.write[0].id(), now.id());
        assert_eq!(adopted.root.id(), root.id());
    }

    /// A record whose descriptor is not the file it names is refused before anything
    /// is taken.
    #[test]
    fn a_descriptor_that_is_another_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root_path = dir.path().canonicalize().unwrap();
        let root = Arc::new(Anchor::open(&root_path).unwrap());
        let resolved = resolve_within(&SandboxSpec::default(), &root, &[]).unwrap();
        let mut carried = carry_resolved(&resolved, &mut |fd| fd.into_raw_fd()).unwrap();
        carried.root.id.1 += 1;
        let refused = check_resolved(&carried).unwrap_err();
        assert!(refused.contains("is not"), "{refused}");
        // SAFETY: the number `carry_resolved` left open, closed once.
        drop(unsafe { OwnedFd::from_raw_fd(carried.root.fd) });
    }
}
