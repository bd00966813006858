//! Which sandbox a job gets: the service's, none, or its own (`RunRequest::sandbox`),
//! resolved against the project root and checked against what the platform can do.
//! A sandbox the platform cannot give is `SANDBOX_UNAVAILABLE`, before anything starts.

use super::Service;
use crate::error::Result;
use crate::platform::sandbox_support;
use crate::request::RunRequest;
use crate::sandbox::{resolve, unavailable, Resolved, SandboxChoice, SandboxSpec, Support};

/// A job's sandbox, resolved and supported: what `start_job` applies.
pub(super) struct JobSandboxPlan {
    pub resolved: Resolved,
    pub support: Support,
}

impl Service {
    pub(super) fn job_sandbox(&self, req: &RunRequest) -> Result<Option<JobSandboxPlan>> {
        let resolved = match &req.sandbox {
            SandboxChoice::Off => None,
            SandboxChoice::ServiceDefault => self.inner.sandbox.clone(),
            SandboxChoice::On => match &self.inner.sandbox {
                Some(service) => Some(service.clone()),
                None => Some(resolve(&SandboxSpec::default(), &self.inner.root)?),
            },
            SandboxChoice::Custom(spec) => Some(resolve(spec, &self.inner.root)?),
        };
        let Some(resolved) = resolved else { return Ok(None) };
        Ok(Some(JobSandboxPlan {
            resolved,
            support: supported()?,
        }))
    }
}

/// The platform's support, or `SANDBOX_UNAVAILABLE` saying why there is none.
pub(super) fn supported() -> Result<Support> {
    sandbox_support().map_err(|why| unavailable(format!("a sandbox was asked for and cannot be given: {why}")))
}
