//! The git guard across a restart in place (src/daemon/upgrade/): its record of the
//! project's `.git` (contents, modes, link targets, stamps, when it was taken) goes in
//! the hand-over the old image writes, from that image's memory, and each job's hold
//! with what it put back so far. The new image's guard takes the record as it was, so
//! it puts back at the job's end what differs from the record taken before the job
//! started, never from one taken after the job could have changed `.git`.
//!
//! The record is bounded (`MAX_CARRIED`): a larger one refuses the restart (the guard
//! would otherwise be carried partly, or the hand-over grow without bound).

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::tree::Node;
use super::{GitGuard, GitHold, Snapshot};

/// The most file bytes a carried record may hold.
pub const MAX_CARRIED: usize = 16 << 20;

/// A guard's record, carried.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedGitGuard {
    /// The record, or why it could not be taken; none when it was never taken.
    baseline: Option<Result<CarriedSnapshot, String>>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct CarriedSnapshot {
    paths: Vec<(PathBuf, Node)>,
    /// When it was taken, in nanoseconds since the epoch.
    at_ns: u128,
}

/// A job's hold on the guard, carried.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedGitHold {
    pub released: bool,
    pub restored: Vec<String>,
}

impl PartialEq for CarriedGitGuard {
    fn eq(&self, other: &Self) -> bool {
        serde_json::to_value(self).ok() == serde_json::to_value(other).ok()
    }
}

fn file_bytes(node: &Node) -> usize {
    match node {
        Node::File { bytes, .. } => bytes.len(),
        Node::Link { target, .. } => target.len(),
        Node::Dir { entries, .. } => entries.values().map(file_bytes).sum(),
        Node::Absent | Node::Other => 0,
    }
}

impl GitGuard {
    /// Its record as the hand-over carries it. `Err`: larger than `MAX_CARRIED`.
    pub fn carry(&self) -> Result<CarriedGitGuard, String> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let baseline = match &state.baseline {
            None => None,
            Some(Err(why)) => Some(Err(why.clone())),
            Some(Ok(snapshot)) => {
                let size: usize = snapshot.paths.iter().map(|(_, node)| file_bytes(node)).sum();
                if size > MAX_CARRIED {
                    return Err(format!(
                        "the git guard's record of .git holds {size} bytes, more than a hand-over carries ({MAX_CARRIED})"
                    ));
                }
                let at_ns = snapshot
                    .at
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or_default();
                Some(Ok(CarriedSnapshot {
                    paths: snapshot.paths.clone(),
                    at_ns,
                }))
            }
        };
        Ok(CarriedGitGuard { baseline })
    }

    /// The new image's side, on a guard just made for the same root: the record as
    /// carried, held by `holders` carried jobs (their holds: `adopt_hold`).
    pub fn adopt(&self, carried: CarriedGitGuard, holders: usize) -> Result<(), String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.holders != 0 || state.baseline.is_some() {
            return Err("the git guard was used before its record was carried in".into());
        }
        state.baseline = carried.baseline.map(|b| {
            b.map(|s| Snapshot {
                paths: s.paths,
                at: std::time::UNIX_EPOCH + std::time::Duration::from_nanos(s.at_ns.min(u64::MAX as u128) as u64),
            })
        });
        if holders > 0 && !matches!(state.baseline, Some(Ok(_))) {
            return Err("jobs hold the git guard but its record was not carried".into());
        }
        state.holders = holders;
        Ok(())
    }

    /// A carried job's hold, on the guard `adopt` gave its record to.
    pub fn adopt_hold(self: &Arc<Self>, carried: &CarriedGitHold) -> Arc<GitHold> {
        Arc::new(GitHold {
            guard: self.clone(),
            released: carried.released.into(),
            restored: std::sync::Mutex::new(carried.restored.clone()),
        })
    }
}

impl GitHold {
    pub fn carry(&self) -> CarriedGitHold {
        CarriedGitHold {
            released: self.released.load(std::sync::atomic::Ordering::Acquire),
            restored: self.restored(),
        }
    }
}
