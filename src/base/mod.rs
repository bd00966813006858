//! What every other part of the core shares: the error type and its codes (`error`),
//! the limits put on what callers ask for (`limits`), the one way to take a lock
//! (`sync`), the one timer per service for every wait's deadline (`deadlines`), and
//! where the product keeps its own files (`places`).
//! These import nothing of the crate but each other.

pub mod deadlines;
pub mod error;
pub mod limits;
pub mod places;
pub mod sync;
