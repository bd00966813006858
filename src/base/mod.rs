//! What every other part of the core shares: the error type and its codes (`error`),
//! the limits put on what callers ask for (`limits`), the one way to take a lock
//! (`sync`), the one timer per service for every wait's deadline (`deadlines`),
//! where the product keeps its own files (`places`), a future's panic caught as a
//! value (`catch_panic`), and the runtime the jobs' tasks run on (`jobs_runtime`).
//! These import nothing of the crate but each other.

pub mod catch_panic;
pub mod deadlines;
pub mod error;
pub mod jobs_runtime;
pub mod limits;
pub mod places;
pub mod sync;
