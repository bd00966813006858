//! envd's `filesystem.Filesystem` Connect service (proto/envd/filesystem.proto) over
//! HTTP, for the e2b SDKs' files.list/exists/getInfo/makeDir/rename/remove: each request
//! checked like process.Process's (method, content type, encoding, size), decoded in
//! either codec, and answered by fs_calls.rs on a blocking thread (file system calls
//! block; the connection's thread serves other requests meanwhile). The watchers:
//! WatchDir, a server stream (watch_stream.rs), and the polled CreateWatcher,
//! GetWatcherEvents and RemoveWatcher (watch.rs).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};

use super::fs_calls;
use super::fs_entry::Bases;
use super::fs_error::{connect_error, FsError};
use super::proto::filesystem as pb;
use super::watch::Spec;
use super::Envd;
use crate::daemon::protocol::body::{empty, full, Body};
use crate::daemon::protocol::connect::{
    self, check_encoding, decode, encode, read_unary, Code, Codec, ConnectError, Shape,
};

/// The path prefix of the service's methods.
pub const PREFIX: &str = "/filesystem.Filesystem/";
/// How long a request's body may take to arrive.
const BODY_WAIT: Duration = Duration::from_secs(30);

pub async fn handle(req: Request<Incoming>, envd: Arc<Envd>) -> Response<Body> {
    let method = req.uri().path().trim_start_matches(PREFIX).to_string();
    if req.method() != Method::POST {
        return empty(StatusCode::METHOD_NOT_ALLOWED);
    }
    let Some((shape, codec)) = connect::content_type(req.headers()) else {
        return empty(StatusCode::UNSUPPORTED_MEDIA_TYPE);
    };
    // WatchDir is the service's one stream.
    if method == "WatchDir" && shape == Shape::Streaming {
        return super::watch_stream::handle(req, codec, envd).await;
    }
    if shape != Shape::Unary {
        return empty(StatusCode::UNSUPPORTED_MEDIA_TYPE);
    }
    if let Err(e) = check_encoding(req.headers(), shape) {
        return e.unary_response();
    }
    let (parts, body) = req.into_parts();
    let bytes = match read_unary(&parts.headers, body, BODY_WAIT).await {
        Ok(bytes) => bytes,
        Err(e) => return e.unary_response(),
    };
    let bases = Bases::of_daemon(envd.project_root.as_deref());
    let answer = tokio::task::spawn_blocking(move || call(&method, codec, &bytes, &bases, &envd))
        .await
        .unwrap_or_else(|e| Err(ConnectError::new(Code::Internal, format!("the file call failed: {e}"))));
    match answer {
        Ok(bytes) => full(StatusCode::OK, connect::unary_type(codec), bytes),
        Err(e) => e.unary_response(),
    }
}

/// One unary call: its request decoded, the call made, its reply encoded.
fn call(method: &str, codec: Codec, bytes: &[u8], bases: &Bases, envd: &Envd) -> Result<Bytes, ConnectError> {
    fn reply<M: prost::Message + serde::Serialize>(codec: Codec, r: Result<M, FsError>) -> Result<Bytes, ConnectError> {
        r.map(|m| encode(codec, &m)).map_err(|e| connect_error(&e))
    }
    match method {
        "Stat" => reply(codec, fs_calls::stat(bases, &decode::<pb::StatRequest>(codec, bytes)?)),
        "ListDir" => reply(
            codec,
            fs_calls::list_dir(bases, &decode::<pb::ListDirRequest>(codec, bytes)?),
        ),
        "MakeDir" => reply(
            codec,
            fs_calls::make_dir(bases, &decode::<pb::MakeDirRequest>(codec, bytes)?),
        ),
        "Move" => reply(
            codec,
            fs_calls::rename(bases, &decode::<pb::MoveRequest>(codec, bytes)?),
        ),
        "Remove" => reply(
            codec,
            fs_calls::remove(bases, &decode::<pb::RemoveRequest>(codec, bytes)?),
        ),
        "CreateWatcher" => {
            let req = decode::<pb::CreateWatcherRequest>(codec, bytes)?;
            let spec = Spec {
                path: &req.path,
                recursive: req.recursive,
                include_entry: req.include_entry,
                allow_network_mounts: req.allow_network_mounts,
            };
            reply(
                codec,
                envd.watchers
                    .create(bases, &spec)
                    .map(|watcher_id| pb::CreateWatcherResponse { watcher_id }),
            )
        }
        "GetWatcherEvents" => {
            let req = decode::<pb::GetWatcherEventsRequest>(codec, bytes)?;
            reply(
                codec,
                envd.watchers
                    .events(&req.watcher_id)
                    .map(|events| pb::GetWatcherEventsResponse { events }),
            )
        }
        "RemoveWatcher" => {
            let req = decode::<pb::RemoveWatcherRequest>(codec, bytes)?;
            reply(
                codec,
                envd.watchers
                    .remove(&req.watcher_id)
                    .map(|()| pb::RemoveWatcherResponse {}),
            )
        }
        // WatchDir as a unary call: it is a stream (its content type says so).
        "WatchDir" => Err(ConnectError::invalid("WatchDir is a server stream: send it as one")),
        _ => Err(ConnectError::new(
            Code::NotFound,
            format!("no method filesystem.Filesystem/{method}"),
        )),
    }
}
