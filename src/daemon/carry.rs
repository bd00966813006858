//! What the daemon carries across a restart in place besides its sockets
//! (src/daemon/upgrade/): every service a client opened, with its jobs running on
//! (src/service/carry.rs), the daemon handles that name them and whether each outlives
//! its connection, and the removed jobs it remembers (ended.rs).
//!
//! The envd face's own service (made by the face, not from an `open`) is carried apart
//! (`CarriedFace`) with what each of its jobs' `Start` asked for (its tag and process
//! config); the new image's face takes it instead of making its own.
//!
//! Not carried: connections and their subscriptions and waits (clients connect again
//! and ask again).

use std::os::fd::{OwnedFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ended::CarriedEnded;
use super::envd::carried::CarriedStart;
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
    /// The envd face's service, when it holds jobs.
    #[serde(default)]
    pub face: Option<CarriedFace>,
    /// The private base of sandboxed jobs' TMPDIRs, when this image made one
    /// (src/sandbox/carry.rs): the new image takes it as its own.
    #[serde(default)]
    pub tmp_base: Option<crate::sandbox::carry::CarriedTmpBase>,
}

/// The envd face's service and what each of its jobs' `Start` asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedFace {
    pub id: u64,
    pub root: std::path::PathBuf,
    pub service: CarriedService,
    pub started: Vec<CarriedStart>,
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
        self.all_services().map(|s| s.jobs.len()).sum()
    }

    /// Every carried service, the face's included, with its number.
    fn all_services(&self) -> impl Iterator<Item = &CarriedService> {
        self.services
            .iter()
            .map(|h| &h.service)
            .chain(self.face.iter().map(|f| &f.service))
    }

    /// (service number, the service's handle) of every carried job.
    fn carried_jobs(&self) -> std::collections::HashSet<(u64, u32)> {
        let hosted = self.services.iter().map(|h| (h.id, &h.service));
        let face = self.face.iter().map(|f| (f.id, &f.service));
        hosted
            .chain(face)
            .flat_map(|(id, s)| s.jobs.iter().map(move |j| (id, j.handle)))
            .collect()
    }

    /// Jobs carried with input not yet written, and its bytes (for the log).
    pub fn unwritten_input(&self) -> (usize, usize) {
        let inputs = self
            .all_services()
            .flat_map(|s| &s.jobs)
            .filter_map(|j| j.input.as_ref());
        inputs.fold((0, 0), |(jobs, bytes), input| (jobs + 1, bytes + input.bytes.len()))
    }

    /// Every descriptor number the records name.
    pub fn fds(&self) -> Vec<i32> {
        let mut all = Vec::new();
        for service in self.all_services() {
            all.extend(service.lease_fd);
            all.extend(service.sandbox_fds());
            for job in &service.jobs {
                all.extend(job.fds.all());
                all.push(job.journal.fd);
                all.extend(job.sandbox.iter().flat_map(|s| s.fds()));
            }
        }
        all.extend(self.tmp_base.as_ref().map(|b| b.fd));
        all
    }
}

/// Whether `hosted` is the envd face's service (made by the face, not from an `open`).
fn is_face(hosted: &Hosted) -> bool {
    hosted.made_with.is_null()
}

/// A refusal before anything stops: the envd face's service holds jobs but the face's
/// record of them is not at hand (no HTTP face in this image: cannot happen, as only
/// the face makes that service; refused rather than carried without tags).
pub fn check(state: &State, face_started: Option<&[CarriedStart]>) -> Result<(), String> {
    for hosted in state.all_services() {
        if is_face(&hosted) && face_started.is_none() && !hosted.service.handles().is_empty() {
            return Err("the envd face's service holds jobs but the face is not at hand".into());
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
pub fn precheck(state: &State, face_started: Option<&[CarriedStart]>) -> Result<(), String> {
    check(state, face_started)?;
    for hosted in state.all_services() {
        hosted.service.can_carry()?;
    }
    Ok(())
}

/// Stops every carried job's reader (up to `FREEZE_LIMIT`), and the unix socket
/// supervisor: every call it took answered, none taken after (its `handover`
/// module says why).
pub async fn freeze(state: &State) -> Result<(), String> {
    for hosted in state.all_services() {
        hosted.service.freeze_jobs(FREEZE_LIMIT).await?;
    }
    #[cfg(target_os = "linux")]
    {
        use crate::platform::supervisor_handover::drain;
        tokio::task::spawn_blocking(|| drain(FREEZE_LIMIT))
            .await
            .map_err(|e| format!("the supervisor's drain: {e}"))??;
    }
    Ok(())
}

/// Lets every reader go on, and the supervisor (the restart did not happen).
pub fn thaw(state: &State) {
    #[cfg(target_os = "linux")]
    crate::platform::supervisor_handover::undrain();
    for hosted in state.all_services() {
        hosted.service.thaw_jobs();
    }
}

/// The daemon's state as the hand-over carries it, and the descriptors it names
/// (copies: close-on-exec until the exec clears it on exactly these).
/// `face_started`: what the envd face's `Start`s asked for (`Envd::carry_started`).
pub fn carry(state: &State, face_started: Option<Vec<CarriedStart>>) -> Result<(CarriedDaemon, Kept), String> {
    check(state, face_started.as_deref())?;
    let mut kept = Kept::new();
    let tmp_base = crate::sandbox::carry::carry_base(&mut |fd| {
        let raw = std::os::fd::AsRawFd::as_raw_fd(&fd);
        kept.push(fd);
        raw
    })?;
    let mut services = Vec::new();
    let mut face = None;
    for hosted in state.all_services() {
        let (service, fds) = hosted.service.carry()?;
        kept.extend(fds);
        if is_face(&hosted) {
            // Its record of tags and configs, for the jobs it still holds.
            let started = face_started
                .iter()
                .flatten()
                .filter(|s| service.jobs.iter().any(|j| j.handle == s.handle))
                .cloned()
                .collect();
            face = Some(CarriedFace {
                id: hosted.id,
                root: hosted.root.clone(),
                service,
                started,
            });
            continue;
        }
        services.push(CarriedHosted {
            id: hosted.id,
            root: hosted.root.clone(),
            made_with: hosted.made_with.clone(),
            service,
        });
    }
    // A supervised job is found by its main process's pid (the supervisor knows no
    // other name for it): two carried jobs with the same pid (the first one's main
    // process gone, the pid reused by the second) could each be given the other's
    // listener and policy. Refused rather than guessed.
    let mut supervised = std::collections::HashSet::new();
    let all_jobs = services
        .iter()
        .map(|h| &h.service)
        .chain(face.iter().map(|f| &f.service));
    for job in all_jobs.flat_map(|s| &s.jobs) {
        if job.sandbox.as_ref().is_some_and(|s| s.supervised.is_some()) && !supervised.insert(job.pid) {
            return Err(format!("two sandboxed jobs claim process {} (a pid reused)", job.pid));
        }
    }
    // Only handles of jobs carried (a job its service forgot may keep its handle until
    // the next prune).
    let mut carried = CarriedDaemon {
        services,
        handles: Vec::new(),
        ended: state.carry_ended(),
        face,
        tmp_base,
    };
    let jobs = carried.carried_jobs();
    carried.handles = state
        .handles()
        .into_iter()
        .filter(|(_, s, l, _)| jobs.contains(&(*s, *l)))
        .collect();
    Ok((carried, kept))
}

/// Checks every record without taking anything: each service's `open` parameters
/// and project root, each job (src/service/carry.rs), each handle.
pub fn check_records(carried: &CarriedDaemon) -> Result<(), String> {
    if let Some(base) = &carried.tmp_base {
        check_tmp_base(base)?;
    }
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
    if let Some(face) = &carried.face {
        check_face(face)?;
        jobs.extend(face.service.jobs.iter().map(|j| (face.id, j.handle)));
    }
    let mut handles = std::collections::HashSet::new();
    for (handle, service, local, _) in &carried.handles {
        if !handles.insert(*handle) || !jobs.contains(&(*service, *local)) {
            return Err(format!("handle {handle} names no carried job or is named twice"));
        }
    }
    Ok(())
}

/// The TMPDIR base's descriptor is open and the directory carried.
fn check_tmp_base(base: &crate::sandbox::carry::CarriedTmpBase) -> Result<(), String> {
    let fd = base.fd;
    let borrowed = crate::job::freeze::inherited_fd(fd).map_err(|e| format!("the TMPDIR base: {e}"))?;
    let st = rustix::fs::fstat(borrowed).map_err(|e| format!("the TMPDIR base: descriptor {fd}: {e}"))?;
    if base.reached.last() != Some(&crate::sandbox::stat_id(&st)) {
        return Err(format!("the TMPDIR base: descriptor {fd} is another file"));
    }
    Ok(())
}

/// The envd face's record: its root a directory, its jobs' records sound, its
/// `Start` records each naming one of its jobs, once.
fn check_face(face: &CarriedFace) -> Result<(), String> {
    if !face.root.is_dir() {
        return Err(format!(
            "the envd face's service: {} is no directory now",
            face.root.display()
        ));
    }
    Service::check_carried(&face.service).map_err(|e| format!("the envd face's service: {e}"))?;
    let mut seen = std::collections::HashSet::new();
    for start in &face.started {
        if !seen.insert(start.handle) || !face.service.jobs.iter().any(|j| j.handle == start.handle) {
            return Err(format!(
                "the envd face's start {} names no carried job or is named twice",
                start.handle
            ));
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
    // Before any service: the carried TMPDIRs are in it.
    if let Some(base) = &carried.tmp_base {
        crate::sandbox::carry::adopt_carried_base(base, take)?;
    }
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
    if let Some(face) = carried.face {
        let config = super::envd::face_config(face.root.clone());
        let service = Service::resume(config, runtime.clone(), face.service, take)
            .map_err(|e| format!("the envd face's service: {}", e.message))?;
        let hosted = Arc::new(Hosted {
            id: face.id,
            root: service.project_root().to_path_buf(),
            service: Arc::new(service),
            conn: Mutex::new(Some(super::envd::FACE_CONN)),
            made_with: Value::Null,
        });
        state.resume_face((hosted, face.started));
    }
    for (handle, service, local, keep) in carried.handles {
        if !state.resume_handle(handle, service, local, keep) {
            return Err(format!("handle {handle} names no carried job or is taken twice"));
        }
    }
    state.resume_ended(carried.ended);
    Ok(())
}
