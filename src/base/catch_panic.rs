//! A future's panic caught as a value, as a task's `JoinHandle` reports it: for work
//! that shares one task with other work (a job's reader and writer run in one task,
//! `service::launch`) and whose panic must still be told apart from its end.
//!
//! Hand-written: `futures::FutureExt::catch_unwind` does this, but the `futures` crate
//! is not otherwise a dependency, for ten lines.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::task::Poll;

/// Runs `work` to its end; Err with the panic's payload if a poll of it panicked (it is
/// not polled again then).
pub async fn catch_panic<F: Future>(work: F) -> std::thread::Result<F::Output> {
    let mut work = std::pin::pin!(work);
    std::future::poll_fn(
        move |cx| match catch_unwind(AssertUnwindSafe(|| work.as_mut().poll(cx))) {
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => Poll::Ready(Err(panic)),
        },
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::catch_panic;

    #[tokio::test]
    async fn a_panic_is_a_value_and_an_end_is_its_output() {
        assert_eq!(catch_panic(async { 7 }).await.ok(), Some(7));
        let caught = catch_panic(async {
            tokio::task::yield_now().await;
            panic!("inside");
        })
        .await;
        assert!(caught.is_err());
    }
}
