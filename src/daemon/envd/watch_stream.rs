//! `WatchDir`, filesystem.Filesystem's one server stream: its request read from the
//! first envelope, a watch opened (watch.rs), then, as envd sends them, a start event,
//! each change as a filesystem event, and a keepalive after each quiet interval
//! (`Keepalive-Ping-Interval`). It ends with an error only: the watch's failure,
//! `deadline_exceeded` when `Connect-Timeout-Ms` runs out, or nothing (the client left).
//! The watch ends with it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use tokio::sync::mpsc;

use super::fs_entry::Bases;
use super::fs_error::connect_error;
use super::proto::filesystem::{watch_dir_response, WatchDirRequest, WatchDirResponse};
use super::watch::{Spec, Watch};
use super::Envd;
use crate::daemon::protocol::body::{channel, full, Body};
use crate::daemon::protocol::connect::{
    self, check_encoding, encode, envelope, next_envelope, Code, Codec, ConnectError, Shape, FLAG_END_STREAM,
};

/// How long the request's one message may take to arrive.
const BODY_WAIT: Duration = Duration::from_secs(30);
/// Messages queued for a slow client before the stream waits for it (events wait in
/// the watch's own bounded queue meanwhile).
const DEPTH: usize = 16;

pub async fn handle(req: Request<Incoming>, codec: Codec, envd: Arc<Envd>) -> Response<Body> {
    let failed = |e: &ConnectError| full(StatusCode::OK, connect::streaming_type(codec), e.end_stream());
    if let Err(e) = check_encoding(req.headers(), Shape::Streaming) {
        return failed(&e);
    }
    let (parts, mut body) = req.into_parts();
    let mut buf = BytesMut::new();
    let request: WatchDirRequest = match next_envelope(&mut body, &mut buf, Some(BODY_WAIT)).await {
        Ok(Some((flags, message))) if flags & FLAG_END_STREAM == 0 => match connect::decode(codec, &message) {
            Ok(request) => request,
            Err(e) => return failed(&e),
        },
        Ok(_) => return failed(&ConnectError::invalid("WatchDir needs its request message")),
        Err(e) => return failed(&e),
    };
    let deadline = match connect::timeout_ms(&parts.headers) {
        Ok(t) => t
            .filter(|&t| t > 0)
            .and_then(|t| Instant::now().checked_add(Duration::from_millis(t))),
        Err(e) => return failed(&e),
    };
    let keepalive = super::stream::keepalive_of(&parts.headers);
    tokio::spawn(super::process::drain(body));
    let bases = Bases::of_daemon(envd.project_root.as_deref());
    let opening = envd.clone();
    let opened = tokio::task::spawn_blocking(move || {
        opening.watchers.open(
            &bases,
            &Spec {
                path: &request.path,
                recursive: request.recursive,
                include_entry: request.include_entry,
                allow_network_mounts: request.allow_network_mounts,
            },
        )
    })
    .await;
    let watch = match opened {
        Ok(Ok(watch)) => watch,
        Ok(Err(e)) => return failed(&connect_error(&e)),
        Err(e) => return failed(&ConnectError::new(Code::Internal, format!("the watch failed: {e}"))),
    };
    let (tx, body) = channel(DEPTH);
    tokio::spawn(pump(watch, tx, codec, keepalive, deadline));
    let mut response = Response::new(body);
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(connect::streaming_type(codec)),
    );
    response
}

fn frame(codec: Codec, event: watch_dir_response::Event) -> Bytes {
    envelope(0, &encode(codec, &WatchDirResponse { event: Some(event) }))
}

/// Sends the watch's events until it fails, the deadline passes or the client leaves;
/// the watch is dropped (its kernel watch removed) on the way out.
async fn pump(watch: Watch, tx: mpsc::Sender<Bytes>, codec: Codec, keepalive: Duration, deadline: Option<Instant>) {
    use watch_dir_response::Event;
    if tx
        .send(frame(codec, Event::Start(watch_dir_response::StartEvent {})))
        .await
        .is_err()
    {
        return;
    }
    let shared = watch.shared.clone();
    let end = loop {
        match shared.take() {
            Err(e) => break Some(connect_error(&e)),
            Ok(events) => {
                for event in events {
                    if tx.send(frame(codec, Event::Filesystem(event))).await.is_err() {
                        return;
                    }
                }
            }
        }
        let passed = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = shared.woken.notified() => {}
            _ = tokio::time::sleep(keepalive) => {
                if tx.send(frame(codec, Event::Keepalive(watch_dir_response::KeepAlive {}))).await.is_err() {
                    return;
                }
            }
            _ = passed => break Some(ConnectError::new(
                Code::DeadlineExceeded,
                "the request's deadline (Connect-Timeout-Ms) passed",
            )),
            _ = tx.closed() => return,
        }
    };
    drop(watch);
    let _ = tx.send(connect::end_stream(end.as_ref())).await;
}
