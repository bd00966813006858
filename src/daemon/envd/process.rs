//! `process.Process` over HTTP: each request checked (method, content type, encoding,
//! size), decoded (`decode`), and answered on the daemon's state (`Envd`); the two
//! server streams are `stream`'s.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};

use super::decode::{decode_first, decode_unary, shape_of, signal_of, Call};
use super::proto::process as pb;
use super::Envd;
use super::{connect_error, stream};
use crate::daemon::protocol::body::{empty, full, Body};
use crate::daemon::protocol::connect::{
    self, check_encoding, encode, envelope, next_envelope, read_unary, Code, Codec, ConnectError, Shape,
    FLAG_END_STREAM,
};
use crate::service::MAX_GRACE;

/// How long a request's body (a unary one, a stream's first message) may take.
const BODY_WAIT: Duration = Duration::from_secs(30);
/// SIGTERM is a request to end: the process tree gets it, then SIGKILL for whatever is
/// left this much later (envd sends SIGTERM alone; a program that ignores it ran on).
const SIGTERM_GRACE: Duration = Duration::from_secs(5);

pub async fn handle(req: Request<Incoming>, envd: Arc<Envd>) -> Response<Body> {
    let method = req.uri().path().trim_start_matches("/process.Process/").to_string();
    let Some(expected) = shape_of(&method) else {
        return ConnectError::new(Code::NotFound, format!("no method process.Process/{method}")).unary_response();
    };
    if req.method() != Method::POST {
        return empty(StatusCode::METHOD_NOT_ALLOWED);
    }
    let Some((shape, codec)) = connect::content_type(req.headers()) else {
        return empty(StatusCode::UNSUPPORTED_MEDIA_TYPE);
    };
    if shape != expected {
        return empty(StatusCode::UNSUPPORTED_MEDIA_TYPE);
    }
    if let Err(e) = check_encoding(req.headers(), shape) {
        return refuse(shape, codec, &e);
    }
    match shape {
        Shape::Unary => unary(&method, codec, req, &envd).await,
        Shape::Streaming => streaming(&method, codec, req, envd).await,
    }
}

/// An error before any reply message: a unary error, or a stream of just its end.
fn refuse(shape: Shape, codec: Codec, e: &ConnectError) -> Response<Body> {
    match shape {
        Shape::Unary => e.unary_response(),
        Shape::Streaming => full(StatusCode::OK, connect::streaming_type(codec), e.end_stream()),
    }
}

async fn unary(method: &str, codec: Codec, req: Request<Incoming>, envd: &Envd) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let answer = match read_unary(&parts.headers, body, BODY_WAIT).await {
        Ok(bytes) => decode_unary(method, codec, &bytes).and_then(|call| call_unary(call, codec, envd)),
        Err(e) => Err(e),
    };
    match answer {
        Ok(bytes) => full(StatusCode::OK, connect::unary_type(codec), bytes),
        Err(e) => e.unary_response(),
    }
}

fn call_unary(call: Call, codec: Codec, envd: &Envd) -> Result<Bytes, ConnectError> {
    let daemon = &envd.daemon;
    match call {
        Call::List(_) => Ok(encode(
            codec,
            &pb::ListResponse {
                processes: envd.list(daemon),
            },
        )),
        Call::Update(request) => {
            let found = envd.find_running(daemon, request.process.as_ref())?;
            if let Some(size) = request.pty.and_then(|p| p.size) {
                let (cols, rows) = super::decode::terminal_size(&size)?;
                found
                    .hosted
                    .service
                    .resize(found.local, cols, rows)
                    .map_err(|e| connect_error(&e))?;
            }
            Ok(encode(codec, &pb::UpdateResponse {}))
        }
        Call::SendInput(request) => {
            let found = envd.find_running(daemon, request.process.as_ref())?;
            write(&found, request.input)?;
            Ok(encode(codec, &pb::SendInputResponse {}))
        }
        Call::SendSignal(request) => {
            let signal = signal_of(&request)?;
            let found = envd.find_running(daemon, request.process.as_ref())?;
            // The whole tree, by the core's kill; answered at once, not when it is
            // done (E2B #1034: their kill blocked). The end reaches the streams.
            let service = found.hosted.service.clone();
            tokio::spawn(async move {
                let _ = match signal {
                    pb::Signal::Sigkill => service.kill_now(found.local).await,
                    _ => service.kill(found.local, SIGTERM_GRACE.min(MAX_GRACE)).await,
                };
            });
            Ok(encode(codec, &pb::SendSignalResponse {}))
        }
        Call::CloseStdin(request) => {
            let found = envd.find_running(daemon, request.process.as_ref())?;
            found
                .hosted
                .service
                .close_input(found.local)
                .map_err(|e| connect_error(&e))?;
            Ok(encode(codec, &pb::CloseStdinResponse {}))
        }
        Call::Start(_) | Call::Connect(_) | Call::StreamInput(_) => {
            Err(ConnectError::invalid("a streaming method called as unary"))
        }
    }
}

/// Input bytes to a running job (stdin or its terminal, whichever it has).
fn write(found: &super::Found, input: Option<pb::ProcessInput>) -> Result<(), ConnectError> {
    let bytes = match input.and_then(|i| i.input) {
        Some(pb::process_input::Input::Stdin(b) | pb::process_input::Input::Pty(b)) => b,
        None => return Err(ConnectError::invalid("no input (stdin or pty)")),
    };
    found
        .hosted
        .service
        .write_input(found.local, bytes)
        .map_err(|e| connect_error(&e))
}

async fn streaming(method: &str, codec: Codec, req: Request<Incoming>, envd: Arc<Envd>) -> Response<Body> {
    let (parts, mut body) = req.into_parts();
    let mut buf = BytesMut::new();
    if method == "StreamInput" {
        let result = stream_input(codec, &mut body, &mut buf, &envd).await;
        let mut reply = BytesMut::new();
        match result {
            Ok(()) => {
                reply.extend_from_slice(&envelope(0, &encode(codec, &pb::StreamInputResponse {})));
                reply.extend_from_slice(&connect::end_stream(None));
            }
            Err(e) => reply.extend_from_slice(&e.end_stream()),
        }
        return full(StatusCode::OK, connect::streaming_type(codec), reply.freeze());
    }
    let first = match next_envelope(&mut body, &mut buf, Some(BODY_WAIT)).await {
        Ok(Some((flags, message))) if flags & FLAG_END_STREAM == 0 => decode_first(method, codec, &message),
        Ok(_) => Err(ConnectError::invalid(format!("{method} needs its request message"))),
        Err(e) => Err(e),
    };
    let call = match first {
        Ok(call) => call,
        Err(e) => return refuse(Shape::Streaming, codec, &e),
    };
    let timeout = match connect::timeout_ms(&parts.headers) {
        Ok(t) => t,
        Err(e) => return refuse(Shape::Streaming, codec, &e),
    };
    let keepalive = stream::keepalive_of(&parts.headers);
    // A server stream's request is its one message, but its body may end in a later
    // packet (a chunked body's last chunk): read it to its end beside the reply, else
    // hyper does not reuse the HTTP/1.1 connection and closes it after the reply, while
    // a pooling client may already be sending its next request on it (e2b's Python SDK
    // failed so: "connection closed before message completed").
    tokio::spawn(drain(body));
    match call {
        Call::Start(request) => stream::start(envd, codec, request, timeout, keepalive),
        Call::Connect(request) => stream::connect(envd, codec, request, timeout, keepalive),
        _ => refuse(
            Shape::Streaming,
            codec,
            &ConnectError::invalid("not a streaming method"),
        ),
    }
}

/// Reads what is left of a request body and drops it (bounded in size and time).
pub(super) async fn drain(mut body: Incoming) {
    use http_body_util::BodyExt;
    let mut seen = 0usize;
    let _ = tokio::time::timeout(BODY_WAIT, async {
        while let Some(Ok(frame)) = body.frame().await {
            seen += frame.data_ref().map_or(0, |d| d.len());
            if seen > connect::MAX_MESSAGE {
                return;
            }
        }
    })
    .await;
}

/// A client stream of input: its first message names the process, the rest carry
/// input (written in order) or keep the stream alive, until the client ends it.
async fn stream_input(codec: Codec, body: &mut Incoming, buf: &mut BytesMut, envd: &Envd) -> Result<(), ConnectError> {
    use pb::stream_input_request::Event;
    let mut target = None;
    // The first message comes soon; later ones whenever the client has input.
    let mut wait = Some(BODY_WAIT);
    while let Some((flags, message)) = next_envelope(body, buf, wait).await? {
        if flags & FLAG_END_STREAM != 0 {
            break;
        }
        wait = None;
        let request: pb::StreamInputRequest = connect::decode(codec, &message)?;
        match (request.event, &target) {
            (Some(Event::Start(start)), None) => {
                target = Some(envd.find_running(&envd.daemon, start.process.as_ref())?);
            }
            (Some(Event::Start(_)), Some(_)) => return Err(ConnectError::invalid("a second start message")),
            (Some(Event::Data(data)), Some(found)) => write(found, data.input)?,
            (Some(Event::Data(_)), None) => {
                return Err(ConnectError::invalid(
                    "input before the start message naming the process",
                ))
            }
            (Some(Event::Keepalive(_)) | None, _) => {}
        }
    }
    Ok(())
}
