//! Windows: not built into the service yet; `job_object` is the primitive its kill and
//! containment stand on.

pub mod job_object;
