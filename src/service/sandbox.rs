//! Which sandbox a job gets: the service's, none, or its own (`RunRequest::sandbox`),
//! resolved against the project root and checked against what the platform can do.
//! A sandbox the platform cannot give is `SANDBOX_UNAVAILABLE`, before anything starts.
//!
//! Every sandbox is checked, when it is resolved, to leave the service's own files out
//! of its jobs' reach (deny by construction): the output folders under `ioDir` (else a
//! job could forge another job's `stdout.txt`, which `readOutput` serves) and the
//! private directory the jobs' TMPDIRs are made in (`crate::sandbox::JobTmpDir`).

use std::sync::{Arc, OnceLock};

use super::Service;
use crate::base::error::{Result, ServiceError};
use crate::platform::sandbox_support;
use crate::sandbox::{resolve_within, unavailable, Anchor, FileId, Resolved, SandboxChoice, SandboxSpec, Support};
use crate::service::request::RunRequest;

/// A job's sandbox, resolved and supported: what `start_job` applies.
pub(super) struct JobSandboxPlan {
    pub resolved: Arc<Resolved>,
    pub support: Support,
}

/// What the service checks every sandbox against: its project root held open, and the
/// directories its output folders are reached through (`None`: it keeps no files).
pub(super) struct Guarded<'a> {
    /// The canonical project root, and where it is held once opened.
    pub root: &'a std::path::Path,
    pub root_dir: &'a OnceLock<Arc<Anchor>>,
    pub io_dir: &'a std::path::Path,
    /// The service keeps its output files under `io_dir` (`persistOutput`).
    pub keeps_files: bool,
    pub io_reached: &'a OnceLock<std::result::Result<Vec<FileId>, String>>,
    /// The service's own sandbox, when a run makes another: its jobs may write its
    /// `write` paths, so a path under one is opened without following symlinks.
    pub service: Option<&'a Resolved>,
}

impl Guarded<'_> {
    /// `spec` resolved, then checked: the service's files out of its jobs' reach.
    pub(super) fn resolve(&self, spec: &SandboxSpec) -> Result<Resolved> {
        let root = match self.root_dir.get() {
            Some(root) => root,
            None => {
                let opened = open_root(self.root)?;
                self.root_dir.get_or_init(|| opened)
            }
        };
        let writable: Vec<&Anchor> = self.service.map(|s| s.write.iter().collect()).unwrap_or_default();
        let mut resolved = resolve_within(spec, root, &writable)?;
        if self.keeps_files {
            let reached = self.io_reached.get_or_init(|| io_reached(self.io_dir));
            let reached = reached.as_ref().map_err(|why| {
                unavailable(format!(
                    "ioDir {} could not be checked to lie outside what sandboxed jobs may write: {why}",
                    self.io_dir.display()
                ))
            })?;
            if let Some(writable) = resolved.covers(reached) {
                return Err(ServiceError::invalid(format!(
                    "ioDir {} lies inside {}, which this sandbox's jobs may write: they could change other \
                     jobs' output files; choose an ioDir outside it, or persistOutput: false",
                    self.io_dir.display(),
                    writable.display()
                )));
            }
            if resolved.shared_tmp_covers(reached) {
                resolved.withhold_shared_tmp(&format!(
                    "ioDir {} lies under it, and a job could change other jobs' output files there",
                    self.io_dir.display()
                ));
            }
        }
        // Other jobs' output files (each job reads its own output through the service,
        // never from the disk) and the daemon's directory: not readable by any job.
        if self.keeps_files {
            resolved.hide(self.io_dir);
        }
        resolved.hide(&crate::base::places::daemon_dir());
        check_private_base(&resolved)?;
        // No writable path inside the service's own directories (one the caller named
        // there): ioDir, and the jobs' private TMPDIR directory.
        let io_dir = if self.keeps_files { io_dir_id(self.io_dir) } else { None };
        let owned: Vec<FileId> = io_dir.into_iter().chain(base_id()?).collect();
        if let Some((inside, id)) = reaches_into(&resolved, &owned)? {
            let what = if Some(id) == io_dir {
                format!(
                    "ioDir {}: its jobs could change the service's output files",
                    self.io_dir.display()
                )
            } else {
                "the jobs' private TMPDIR directory: its jobs could write other jobs' TMPDIRs".to_string()
            };
            return Err(ServiceError::invalid(format!(
                "sandbox write path {} lies inside {what}",
                inside.display()
            )));
        }
        Ok(resolved)
    }
}

/// The jobs' TMPDIRs are made in a private directory no job may write; a sandbox whose
/// own writable paths reach it (a project at `/var/tmp`, a `write` path above it) is
/// refused: its jobs could reach every other job's TMPDIR.
#[cfg(unix)]
fn check_private_base(resolved: &Resolved) -> Result<()> {
    let reached = crate::sandbox::base_reached_through()
        .map_err(|e| unavailable(format!("no private directory for the jobs' TMPDIRs: {e}")))?;
    if let Some(writable) = resolved.covers(reached) {
        return Err(unavailable(format!(
            "the jobs' private TMPDIRs are made under a directory this sandbox makes writable ({}): \
             its jobs could write other jobs' TMPDIRs; set TMPDIR to a directory outside it",
            writable.display()
        )));
    }
    Ok(())
}

/// The private TMPDIR directory's identity, if there is one here.
#[cfg(unix)]
fn base_id() -> Result<Option<FileId>> {
    crate::sandbox::base_id()
        .map(Some)
        .map_err(|e| unavailable(format!("no private directory for the jobs' TMPDIRs: {e}")))
}

#[cfg(not(unix))]
fn base_id() -> Result<Option<FileId>> {
    Ok(None)
}

#[cfg(not(unix))]
fn check_private_base(_resolved: &Resolved) -> Result<()> {
    Ok(())
}

/// The first writable path of `resolved` inside one of the directories `ids`, or why
/// that could not be found (fail closed).
#[cfg(unix)]
fn reaches_into<'a>(resolved: &'a Resolved, ids: &[FileId]) -> Result<Option<(&'a std::path::Path, FileId)>> {
    if ids.is_empty() {
        return Ok(None);
    }
    resolved
        .reaches_into(ids)
        .map_err(|e| unavailable(format!("the sandbox's writable paths could not be checked: {e}")))
}

#[cfg(not(unix))]
fn reaches_into<'a>(_resolved: &'a Resolved, _ids: &[FileId]) -> Result<Option<(&'a std::path::Path, FileId)>> {
    Ok(None)
}

/// What `io_dir` is now, if it exists (a directory inside it must exist to be granted).
#[cfg(unix)]
fn io_dir_id(io_dir: &std::path::Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(io_dir).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn io_dir_id(_io_dir: &std::path::Path) -> Option<FileId> {
    None
}

impl Service {
    pub(super) fn job_sandbox(&self, req: &RunRequest) -> Result<Option<JobSandboxPlan>> {
        let resolved = match &req.sandbox {
            SandboxChoice::Off => None,
            SandboxChoice::ServiceDefault => self.inner.sandbox.clone(),
            SandboxChoice::On => match &self.inner.sandbox {
                Some(service) => Some(service.clone()),
                None => Some(self.default_sandbox()?),
            },
            SandboxChoice::Custom(spec) => {
                let mut resolved = self.guarded().resolve(spec)?;
                resolved.per_run = true;
                Some(Arc::new(resolved))
            }
        };
        let Some(resolved) = resolved else { return Ok(None) };
        Ok(Some(JobSandboxPlan {
            resolved,
            support: supported()?,
        }))
    }

    /// The default sandbox (`sandbox: true` on a service without one), resolved at its
    /// first use and kept: the same for every such run, so its rules can be built
    /// ahead like the service's own.
    fn default_sandbox(&self) -> Result<Arc<Resolved>> {
        let mut kept = crate::base::sync::lock(&self.inner.default_sandbox);
        if let Some(resolved) = kept.as_ref() {
            return Ok(resolved.clone());
        }
        let resolved = Arc::new(self.guarded().resolve(&SandboxSpec::default())?);
        *kept = Some(resolved.clone());
        Ok(resolved)
    }

    fn guarded(&self) -> Guarded<'_> {
        Guarded {
            root: &self.inner.root,
            root_dir: &self.inner.root_dir,
            io_dir: &self.inner.io_dir,
            keeps_files: self.inner.retention.is_some(),
            io_reached: &self.inner.io_reached,
            service: self.inner.sandbox.as_deref(),
        }
    }
}

/// The platform's support, or `SANDBOX_UNAVAILABLE` saying why there is none.
pub(super) fn supported() -> Result<Support> {
    sandbox_support().map_err(|why| unavailable(format!("a sandbox was asked for and cannot be given: {why}")))
}

/// The directories `io_dir` is reached through, or why they could not be found.
#[cfg(unix)]
fn io_reached(io_dir: &std::path::Path) -> std::result::Result<Vec<FileId>, String> {
    crate::sandbox::reached_through(io_dir).map_err(|e| e.to_string())
}

#[cfg(not(unix))]
fn io_reached(_io_dir: &std::path::Path) -> std::result::Result<Vec<FileId>, String> {
    Ok(Vec::new())
}

/// The project root, held open (Unix): every sandbox's rules on it are built from this.
/// Opened without following any symlink: the canonical path found when the service was
/// made, or an error (never a directory a symlink put in its place since).
#[cfg(unix)]
fn open_root(root: &std::path::Path) -> Result<Arc<Anchor>> {
    Anchor::open(root).map(Arc::new).map_err(|e| {
        ServiceError::new(
            crate::base::error::ErrorCode::InvalidDirectory,
            format!("project root {} cannot be used: {e}", root.display()),
        )
    })
}

#[cfg(not(unix))]
fn open_root(_root: &std::path::Path) -> Result<Arc<Anchor>> {
    Err(unavailable("the project root cannot be held open on this platform"))
}
