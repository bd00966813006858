//! What the daemon carries across a restart in place besides its sockets
//! (src/daemon/upgrade/): every service a client opened, with its jobs running on
//! (src/service/carry.rs), the daemon handles that name them and whether each outlives
//! its connection, and the removed jobs it remembers (ended.rs).
//!
//! Not carried: the envd face's own service (made by the face at start; the new image
//! makes its own, so the restart is refused while it holds jobs), connections and
//! their subscriptions and waits (clients connect again and ask again).

use std::os::fd::{OwnedFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ended::CarriedEnded;
use super::params::parse;
use super::state::{Hosted, State};
use crate::service::carry::{CarriedService, Kept};
use crate::service::options::ServiceArgs;
use crate::service::request::ServiceConfig;
use crate::service::Service;

/// How long every job's reader has to stand still (each stops at its next step).
pub const FREEZE_LIMIT: Duration = Duration::from_secs(2);

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedDaemon {
    pub services: Vec<CarriedHosted>,
    /// (daemon handle, service number, the service's handle, keep).
    pub handles: Vec<(u32, u64, u32, bool)>,
    pub ended: Vec<CarriedEnded>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedHosted {
    pub id: u64,
    pub root: std::path::PathBuf,
    pub made_with: Value,
    pub service: CarriedService,
}

impl CarriedDaemon {
    pub fn job_count(&self) -> usize {
        self.services.iter().map(|s| s.service.jobs.len()).sum()
    }

    /// Every descriptor number the records name.
    pub fn fds(&self) -> Vec<i32> {
        let mut all = Vec::new();
        for hosted in &self.services {
            all.extend(hosted.service.lease_fd);
            for job in &hosted.service.jobs {
                all.extend(job.fds.all());
                all.push(job.journal.fd);
            }
        }
        all
    }
}

/// The services that are carried (the envd face's is not), oldest first.
fn carried_services(state: &State) -> Vec<Arc<Hosted>> {
    state
        .all_services()
        .into_iter()
        .filter(|h| !h.made_with.is_null())
        .collect()
}

/// A refusal before anything stops: the envd face's service holds jobs.
pub fn check(state: &State) -> Result<(), String> {
    for hosted in state.all_services() {
        if hosted.made_with.is_null() && !hosted.service.handles().is_empty() {
            return Err(
                "the envd face holds jobs (started through its Start call): they cannot be handed over yet".into(),
            );
        }
    }
    Ok(())
}

/// The watchdog's pipe, kept open across the exec (src/platform/linux/watchdog.rs).
pub fn watchdog_fd() -> Option<RawFd> {
    crate::platform::watchdog::write_fd()
}

/// Why the daemon's jobs cannot be carried now: checked before a restart stops
/// anything.
pub fn precheck(state: &State) -> Result<(), String> {
    check(state)?;
    for hosted in carried_services(state) {
        hosted.service.can_carry()?;
    }
    Ok(())
}

/// Stops every carried job's reader (up to `FREEZE_LIMIT`).
pub async fn freeze(state: &State) -> Result<(), String> {
    for hosted in carried_services(state) {
        hosted.service.freeze_jobs(FREEZE_LIMIT).await?;
    }
    Ok(())
}

/// Lets every reader go on (the restart did not happen).
pub fn thaw(state: &State) {
    for hosted in state.all_services() {
        hosted.service.thaw_jobs();
    }
}

/// The daemon's state as the hand-over carries it, and the descriptors it names
/// (copies: close-on-exec until the exec clears it on exactly these).
pub fn carry(state: &State) -> Result<(CarriedDaemon, Kept), String> {
    check(state)?;
    let mut kept = Kept::new();
    let mut services = Vec::new();
    for hosted in carried_services(state) {
        let (service, fds) = hosted.service.carry()?;
        kept.extend(fds);
        services.push(CarriedHosted {
            id: hosted.id,
            root: hosted.root.clone(),
            made_with: hosted.made_with.clone(),
            service,
        });
    }
    // Only handles of jobs carried (a job its service forgot may keep its handle until
    // the next prune).
    let jobs: std::collections::HashSet<(u64, u32)> = services
        .iter()
        .flat_map(|s| s.service.jobs.iter().map(|j| (s.id, j.handle)))
        .collect();
    let handles = state
        .handles()
        .into_iter()
        .filter(|(_, s, l, _)| jobs.contains(&(*s, *l)))
        .collect();
    Ok((
        CarriedDaemon {
            services,
            handles,
            ended: state.carry_ended(),
        },
        kept,
    ))
}

/// Checks every record without taking anything: each service's `open` parameters
/// and project root, each job (src/service/carry.rs), each handle.
pub fn check_records(carried: &CarriedDaemon) -> Result<(), String> {
    let mut jobs = std::collections::HashSet::new();
    for hosted in &carried.services {
        let args: ServiceArgs =
            parse("options", hosted.made_with.clone()).map_err(|e| format!("service {}: {}", hosted.id, e.message))?;
        args.into_config()
            .map_err(|e| format!("service {}: {}", hosted.id, e.message))?;
        if !hosted.root.is_dir() {
            return Err(format!(
                "service {}: {} is no directory now",
                hosted.id,
                hosted.root.display()
            ));
        }
        Service::check_carried(&hosted.service).map_err(|e| format!("service {}: {e}", hosted.id))?;
        jobs.extend(hosted.service.jobs.iter().map(|j| (hosted.id, j.handle)));
    }
    let mut handles = std::collections::HashSet::new();
    for (handle, service, local, _) in &carried.handles {
        if !handles.insert(*handle) || !jobs.contains(&(*service, *local)) {
            return Err(format!("handle {handle} names no carried job or is named twice"));
        }
    }
    Ok(())
}

/// The new image's side: every carried service made again from its `open`, its jobs
/// running on, the handles naming them. `take` takes an inherited descriptor by
/// number. `Err` at the first record that does not check out.
pub fn resume(
    state: &State,
    carried: CarriedDaemon,
    runtime: &tokio::runtime::Handle,
    take: &mut dyn FnMut(RawFd) -> Result<OwnedFd, String>,
) -> Result<(), String> {
    for hosted in carried.services {
        let mut args: ServiceArgs =
            parse("options", hosted.made_with.clone()).map_err(|e| format!("service {}: {}", hosted.id, e.message))?;
        // The root it resolved to then (the daemon's default root may differ now).
        args.project_root = Some(hosted.root.display().to_string());
        let config = ServiceConfig {
            keep_streams: true,
            ..args
                .into_config()
                .map_err(|e| format!("service {}: {}", hosted.id, e.message))?
        };
        let service = Service::resume(config, runtime.clone(), hosted.service, take)
            .map_err(|e| format!("service {}: {}", hosted.id, e.message))?;
        state.resume_service(Arc::new(Hosted {
            id: hosted.id,
            root: service.project_root().to_path_buf(),
            service: Arc::new(service),
            conn: Mutex::new(None),
            made_with: hosted.made_with,
        }));
    }
    for (handle, service, local, keep) in carried.handles {
        if !state.resume_handle(handle, service, local, keep) {
            return Err(format!("handle {handle} names no carried job or is taken twice"));
        }
    }
    state.resume_ended(carried.ended);
    Ok(())
}
