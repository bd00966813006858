//! Whether a connection is idle: how many of its requests are open (from the moment
//! its headers are in until its reply's body has been sent or dropped) and since when
//! none has been. mod.rs closes a connection idle for longer than its kind's limit, so
//! an HTTP/2 connection that never opens a stream, or an HTTP/1.1 one that keeps alive
//! without a request, does not hold its slot for ever.

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Frame, SizeHint};
use hyper::Response;

use crate::daemon::protocol::body::{Body, BodyError};

/// One connection's requests in flight.
pub struct Activity {
    open: AtomicUsize,
    idle_since: Mutex<Instant>,
}

impl Activity {
    pub fn new() -> Arc<Self> {
        Arc::new(Activity {
            open: AtomicUsize::new(0),
            idle_since: Mutex::new(Instant::now()),
        })
    }

    /// A request has begun; it ends when the returned guard is dropped.
    pub fn begin(self: &Arc<Self>) -> OpenRequest {
        self.open.fetch_add(1, Ordering::AcqRel);
        OpenRequest(self.clone())
    }

    /// How long the connection has had no open request (zero while one is open).
    pub fn idle_for(&self) -> Duration {
        if self.open.load(Ordering::Acquire) > 0 {
            return Duration::ZERO;
        }
        let since = *self.idle_since.lock().unwrap_or_else(|p| p.into_inner());
        since.elapsed()
    }
}

/// An open request: the connection is not idle while it lives.
pub struct OpenRequest(Arc<Activity>);

impl Drop for OpenRequest {
    fn drop(&mut self) {
        // The idle clock starts when the last open request ends.
        let mut since = self.0.idle_since.lock().unwrap_or_else(|p| p.into_inner());
        if self.0.open.fetch_sub(1, Ordering::AcqRel) == 1 {
            *since = Instant::now();
        }
    }
}

/// The reply with `open` held until its body has been sent (or dropped: the client
/// went away), so a long stream counts as an open request all along.
pub fn held_until_sent(response: Response<Body>, open: OpenRequest) -> Response<Body> {
    response.map(|inner| Held { inner, _open: open }.boxed())
}

struct Held {
    inner: Body,
    _open: OpenRequest,
}

impl hyper::body::Body for Held {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_only_when_no_request_is_open() {
        let activity = Activity::new();
        let first = activity.begin();
        let second = activity.begin();
        assert_eq!(activity.idle_for(), Duration::ZERO);
        drop(first);
        assert_eq!(activity.idle_for(), Duration::ZERO);
        drop(second);
        std::thread::sleep(Duration::from_millis(5));
        assert!(activity.idle_for() >= Duration::from_millis(5));
    }
}
