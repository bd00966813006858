//! A cgroup's `cgroup.events`, read for its `populated` line: whether a process is left
//! in the cgroup (`super::cgroup`).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::base::sync::lock;

/// A cgroup's `cgroup.events`, open. The kernel makes its text anew for each read from
/// offset 0, so a descriptor held open (a spare cgroup's) answers for the cgroup as it
/// is at each read: one `pread`, about 1 µs, where an open, a read and a close of the
/// kernfs file took about 10 (measured on Linux 6.18).
pub(super) struct Events(File);

impl Events {
    pub(super) fn open(cgroup: &Path) -> Option<Self> {
        File::open(cgroup.join("cgroup.events")).ok().map(Self)
    }

    /// Whether the file says `populated 1`. A file that cannot be read says nothing is
    /// there, as before it was held.
    pub(super) fn populated(&self) -> bool {
        let mut buf = [0u8; 256];
        let mut len = 0;
        // The kernel hands the whole file, two short lines, in one read; more are made
        // only if it did not.
        while len < buf.len() {
            match self.0.read_at(&mut buf[len..], len as u64) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return false,
            }
            if let Some(answer) = populated_line(&buf[..len]) {
                return answer;
            }
        }
        populated_line(&buf[..len]).unwrap_or(false)
    }
}

/// The `cgroup.events` of the latest job given a spare, kept from the spare for the
/// check at that job's end (`release_if_empty` in `super::cgroup`), on the path from
/// the job's exit to its result: a `pread` there too instead of a kernfs open. One per
/// process, not one per job (an idle job holds one descriptor): a job started after it
/// takes the place. Keyed by path, which no later cgroup of this process is given once
/// removed (its job counter only grows), so a descriptor is only ever read for its own
/// directory.
pub(super) static LATEST_EVENTS: LatestEvents = LatestEvents::empty();

pub(super) struct LatestEvents(Mutex<Option<(PathBuf, Events)>>);

impl LatestEvents {
    pub(super) const fn empty() -> Self {
        Self(Mutex::new(None))
    }

    /// Keeps `events` for the cgroup at `path`; returns the one it replaces, to be
    /// closed by the caller after the lock.
    pub(super) fn keep(&self, path: &Path, events: Events) -> Option<Events> {
        lock(&self.0).replace((path.to_path_buf(), events)).map(|(_, old)| old)
    }

    /// The descriptor kept for the cgroup at `path`, if it is the one kept.
    pub(super) fn take_for(&self, path: &Path) -> Option<Events> {
        let mut latest = lock(&self.0);
        let ours = latest.as_ref().is_some_and(|(kept, _)| kept == path);
        ours.then(|| latest.take()).flatten().map(|(_, events)| events)
    }
}

/// Whether a process is left in the cgroup: its `cgroup.events` opened, read and closed.
pub(super) fn populated(cgroup: &Path) -> bool {
    Events::open(cgroup).is_some_and(|events| events.populated())
}

/// The `populated` line of `cgroup.events` text, once it is there whole (with its
/// newline): whether it says 1.
fn populated_line(text: &[u8]) -> Option<bool> {
    text.split_inclusive(|&b| b == b'\n')
        .filter(|line| line.ends_with(b"\n"))
        .find_map(|line| line.strip_prefix(b"populated "))
        .map(|value| value == b"1\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The latest job's kept descriptor is handed only to the check for its own cgroup,
    /// once; a later job's replaces it.
    #[test]
    fn the_kept_events_file_goes_to_its_own_cgroup_only() {
        // Any directory with a `cgroup.events` stands in for a cgroup here: only who
        // gets the descriptor is checked.
        let dir = tempfile::tempdir().expect("a directory");
        std::fs::write(dir.path().join("cgroup.events"), "populated 0\n").expect("the file");
        let events = || Events::open(dir.path()).expect("opened");
        let latest = LatestEvents::empty();
        let (a, b) = (Path::new("/cgroup/job-a"), Path::new("/cgroup/job-b"));
        assert!(latest.keep(a, events()).is_none());
        assert!(latest.take_for(b).is_none(), "given to another cgroup");
        assert!(latest.take_for(a).is_some(), "its own cgroup's check did not get it");
        assert!(latest.take_for(a).is_none(), "given twice");
        assert!(latest.keep(a, events()).is_none());
        assert!(latest.keep(b, events()).is_some(), "the replaced one is handed back");
        assert!(latest.take_for(a).is_none());
        assert!(latest.take_for(b).is_some());
    }

    #[test]
    fn reads_the_populated_line_only_once_it_is_whole() {
        assert_eq!(populated_line(b"populated 0\nfrozen 0\n"), Some(false));
        assert_eq!(populated_line(b"populated 1\nfrozen 0\n"), Some(true));
        assert_eq!(populated_line(b"frozen 0\npopulated 1\n"), Some(true));
        assert_eq!(populated_line(b"populated 1"), None);
        assert_eq!(populated_line(b"frozen 0\n"), None);
        assert_eq!(populated_line(b""), None);
    }
}
