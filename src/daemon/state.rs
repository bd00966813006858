//! What the daemon holds across connections: every service it made, and one handle
//! space over all of them. A handle is the daemon's (one counter, never reused while
//! the daemon lives), so a handle from an earlier client names the same job in a later
//! one; each maps to its service and that service's own handle.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::ended::Ended;
use crate::base::error::{Result, ServiceError};
use crate::base::sync::lock;
use crate::service::Service;

/// A service the daemon made for a connection's `open`. It outlives the connection
/// while it has jobs: a later client reaches them by handle.
pub struct Hosted {
    pub id: u64,
    pub service: Arc<Service>,
    pub root: PathBuf,
    /// The connection that opened it, while that connection lives.
    pub conn: Mutex<Option<u64>>,
    /// The `open` request's parameters it was made from: a restart in place makes
    /// it again from them (src/daemon/carry.rs, Linux only).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub made_with: Value,
}

struct JobEntry {
    service: Arc<Hosted>,
    local: u32,
    /// `false`: killed when the connection that started it closes.
    keep: bool,
}

#[derive(Default)]
struct Maps {
    jobs: HashMap<u32, JobEntry>,
    by_local: HashMap<(u64, u32), u32>,
    services: HashMap<u64, Arc<Hosted>>,
    conns: usize,
}

#[derive(Default)]
pub struct State {
    maps: Mutex<Maps>,
    /// The jobs clients removed: their folders, for reads by handle (ended.rs).
    ended: Mutex<Ended>,
    next_handle: AtomicU64,
    next_service: AtomicU64,
    /// The envd face's service a restart in place carried, and what each of its jobs'
    /// `Start` asked for, until the face (made after the jobs resume) takes them.
    resumed_face: Mutex<Option<ResumedFace>>,
}

/// See `State::resumed_face`.
pub type ResumedFace = (Arc<Hosted>, Vec<super::envd::carried::CarriedStart>);

impl State {
    pub fn add_service(&self, service: Service, conn: u64, made_with: Value) -> Arc<Hosted> {
        let hosted = Arc::new(Hosted {
            id: self.next_service.fetch_add(1, Ordering::Relaxed) + 1,
            root: service.project_root().to_path_buf(),
            service: Arc::new(service),
            conn: Mutex::new(Some(conn)),
            made_with,
        });
        lock(&self.maps).services.insert(hosted.id, hosted.clone());
        hosted
    }

    #[cfg(target_os = "linux")]
    /// A service carried by a restart in place, under its number (no connection holds
    /// it: its clients connect again).
    pub fn resume_service(&self, hosted: Arc<Hosted>) {
        lock(&self.maps).services.insert(hosted.id, hosted);
    }

    #[cfg(target_os = "linux")]
    /// The envd face's carried service: held by the state like any other, and kept
    /// for the face to take (`take_resumed_face`).
    pub fn resume_face(&self, face: ResumedFace) {
        self.resume_service(face.0.clone());
        *lock(&self.resumed_face) = Some(face);
    }

    pub fn take_resumed_face(&self) -> Option<ResumedFace> {
        lock(&self.resumed_face).take()
    }

    #[cfg(target_os = "linux")]
    /// Every daemon handle: (handle, service number, the service's handle, keep).
    pub fn handles(&self) -> Vec<(u32, u64, u32, bool)> {
        let maps = lock(&self.maps);
        let mut all: Vec<_> = maps
            .jobs
            .iter()
            .map(|(&h, e)| (h, e.service.id, e.local, e.keep))
            .collect();
        all.sort_unstable();
        all
    }

    #[cfg(target_os = "linux")]
    /// A daemon handle carried by a restart in place. `false` when its service is not
    /// here or the handle or the service's handle is taken.
    pub fn resume_handle(&self, handle: u32, service: u64, local: u32, keep: bool) -> bool {
        let mut maps = lock(&self.maps);
        let Some(hosted) = maps.services.get(&service).cloned() else {
            return false;
        };
        if maps.jobs.contains_key(&handle) || maps.by_local.contains_key(&(service, local)) {
            return false;
        }
        maps.by_local.insert((service, local), handle);
        maps.jobs.insert(
            handle,
            JobEntry {
                service: hosted,
                local,
                keep,
            },
        );
        true
    }

    #[cfg(target_os = "linux")]
    pub fn carry_ended(&self) -> Vec<super::ended::CarriedEnded> {
        lock(&self.ended).carry()
    }

    #[cfg(target_os = "linux")]
    pub fn resume_ended(&self, carried: Vec<super::ended::CarriedEnded>) {
        lock(&self.ended).resume(carried);
    }

    /// The daemon's handle for a service's own, made at first sight. `keep` is the
    /// starter's word (whether the job outlives its connection), which stands whoever
    /// saw the job first; `None` (a job list, the history) keeps it by default.
    pub fn global(&self, hosted: &Arc<Hosted>, local: u32, keep: Option<bool>) -> u32 {
        let mut maps = lock(&self.maps);
        if let Some(&handle) = maps.by_local.get(&(hosted.id, local)) {
            if let (Some(keep), Some(entry)) = (keep, maps.jobs.get_mut(&handle)) {
                entry.keep = keep;
            }
            return handle;
        }
        let handle = (self.next_handle.fetch_add(1, Ordering::Relaxed) + 1) as u32;
        maps.by_local.insert((hosted.id, local), handle);
        maps.jobs.insert(
            handle,
            JobEntry {
                service: hosted.clone(),
                local,
                keep: keep.unwrap_or(true),
            },
        );
        handle
    }

    /// The service and its own handle for a daemon handle, or `PROCESS_NOT_FOUND`.
    pub fn resolve(&self, handle: u32) -> Result<(Arc<Hosted>, u32)> {
        lock(&self.maps)
            .jobs
            .get(&handle)
            .map(|e| (e.service.clone(), e.local))
            .ok_or_else(|| ServiceError::not_found(handle))
    }

    /// Removes a job from its service, remembering its folder first (ended.rs): a later
    /// client still reads its output by handle.
    pub fn remove(&self, handle: u32) -> Result<()> {
        let (target, local) = self.resolve(handle)?;
        let last = target.service.result(local, 1);
        target.service.remove(local)?;
        if let Ok(last) = last {
            lock(&self.ended).record(handle, &target.root, &last, std::time::SystemTime::now());
        }
        Ok(())
    }

    /// The removed jobs of the project `root` still remembered, newest first.
    pub fn ended(&self, root: &std::path::Path, handle: Option<u32>, limit: usize) -> Vec<Value> {
        lock(&self.ended).list(root, handle, limit, std::time::SystemTime::now())
    }

    /// Every service whose project root is `root`.
    pub fn services_of(&self, root: &std::path::Path) -> Vec<Arc<Hosted>> {
        let mut found: Vec<Arc<Hosted>> = lock(&self.maps)
            .services
            .values()
            .filter(|s| s.root == root)
            .cloned()
            .collect();
        found.sort_by_key(|s| s.id);
        found
    }

    /// Every service, oldest first.
    pub fn all_services(&self) -> Vec<Arc<Hosted>> {
        let mut found: Vec<Arc<Hosted>> = lock(&self.maps).services.values().cloned().collect();
        found.sort_by_key(|s| s.id);
        found
    }

    /// The handle and service counters, for a restart's hand-over: the next image
    /// goes on counting, so no handle is reused while the daemon lives
    /// (src/daemon/upgrade/).
    pub fn counters(&self) -> (u64, u64) {
        (
            self.next_handle.load(Ordering::Relaxed),
            self.next_service.load(Ordering::Relaxed),
        )
    }

    /// Goes on from a previous image's counters (never backwards).
    pub fn resume_counters(&self, next_handle: u64, next_service: u64) {
        self.next_handle.fetch_max(next_handle, Ordering::Relaxed);
        self.next_service.fetch_max(next_service, Ordering::Relaxed);
    }

    pub fn connected(&self) {
        lock(&self.maps).conns += 1;
    }

    /// A connection closed: its service is nobody's now, and the handles of its jobs
    /// started with `keep: false` are returned for killing.
    pub fn disconnected(&self, hosted: Option<&Arc<Hosted>>) -> Vec<u32> {
        let mut maps = lock(&self.maps);
        maps.conns = maps.conns.saturating_sub(1);
        let Some(hosted) = hosted else { return Vec::new() };
        *lock(&hosted.conn) = None;
        maps.jobs
            .values()
            .filter(|e| e.service.id == hosted.id && !e.keep)
            .map(|e| e.local)
            .collect()
    }

    /// Jobs running in any service (what a client of another version must not lose).
    pub fn running_jobs(&self) -> usize {
        let services: Vec<Arc<Hosted>> = lock(&self.maps).services.values().cloned().collect();
        services
            .iter()
            .map(|s| s.service.handles().iter().filter(|(_, running)| *running).count())
            .sum()
    }

    pub fn connections(&self) -> usize {
        lock(&self.maps).conns
    }

    /// Drops the services no connection holds that have no job left (all removed), and
    /// forgets handles whose job its service no longer has.
    pub fn prune(&self) {
        let services: Vec<Arc<Hosted>> = lock(&self.maps).services.values().cloned().collect();
        for hosted in services {
            let locals: std::collections::HashSet<u32> = hosted.service.handles().iter().map(|(h, _)| *h).collect();
            let mut maps = lock(&self.maps);
            let gone: Vec<u32> = maps
                .jobs
                .iter()
                .filter(|(_, e)| e.service.id == hosted.id && !locals.contains(&e.local))
                .map(|(&h, _)| h)
                .collect();
            for handle in gone {
                if let Some(entry) = maps.jobs.remove(&handle) {
                    maps.by_local.remove(&(hosted.id, entry.local));
                }
            }
            if locals.is_empty() && lock(&hosted.conn).is_none() {
                maps.services.remove(&hosted.id);
            }
        }
    }
}
