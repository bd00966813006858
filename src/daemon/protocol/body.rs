//! Reply bodies: whole, empty or streamed, one type for every route. A leaf: the
//! routes' modules (this folder's and src/daemon/envd/) build replies with it and it
//! imports none of them.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::BodyExt;
use hyper::body::Frame;
use hyper::{Response, StatusCode};
use tokio::sync::mpsc;

/// A reply body: whole or streamed; an error ends the response abruptly (a proxy's
/// upstream that failed mid-body).
pub type BodyError = Box<dyn std::error::Error + Send + Sync>;
pub type Body = BoxBody<Bytes, BodyError>;

/// A reply with no body.
pub fn empty(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(http_body_util::Empty::new().map_err(never).boxed());
    *response.status_mut() = status;
    response
}

/// A reply with a whole body.
pub fn full(status: StatusCode, content_type: &'static str, body: Bytes) -> Response<Body> {
    let mut response = Response::new(http_body_util::Full::new(body).map_err(never).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(content_type),
    );
    response
}

fn never(e: Infallible) -> BodyError {
    match e {}
}

/// A streamed body and its sender: each `Bytes` sent is one data frame; the body ends
/// when every sender is dropped. Bounded: a sender waits while `depth` frames wait for
/// a slow reader (HTTP/2's flow control reaches back to it).
pub fn channel(depth: usize) -> (mpsc::Sender<Bytes>, Body) {
    let (tx, rx) = mpsc::channel(depth.max(1));
    (tx, ChannelBody { rx }.boxed())
}

struct ChannelBody {
    rx: mpsc::Receiver<Bytes>,
}

impl hyper::body::Body for ChannelBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        self.rx
            .poll_recv(cx)
            .map(|next| next.map(|bytes| Ok(Frame::data(bytes))))
    }
}
