//! The Connect protocol (connectrpc.com/docs/protocol), server side, written here: no
//! well-kept Rust Connect server library exists (tonic speaks gRPC, not Connect), and
//! the part envd's clients use is small. What is served:
//! - unary calls: `application/json` or `application/proto` bodies, errors as an HTTP
//!   status with a JSON `{code, message}` body;
//! - streaming calls: `application/connect+json` or `application/connect+proto`, each
//!   message in a 5-byte envelope (1 byte of flags, 4 of big-endian length), the last
//!   one flagged end-of-stream (0x02) and holding JSON `{}` or `{"error": {...}}`.
//!
//! No compression: a request compressed with anything but `identity` is refused
//! (`unimplemented`); replies are never compressed. Every decoding step is bounded:
//! a message over [`MAX_MESSAGE`] is refused from its declared length, before its body
//! is read.

use bytes::{BufMut, Bytes, BytesMut};
use hyper::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use hyper::{Response, StatusCode};
use serde::{de::DeserializeOwned, Serialize};

use super::body::{full, Body};

/// The largest request message (and envelope) accepted: 16 MiB, as the unix socket's
/// `frame::MAX_REQUEST` (the largest input a job takes, `MAX_INPUT_BYTES`, fits).
pub const MAX_MESSAGE: usize = crate::daemon::frame::MAX_REQUEST;
/// Envelope flags.
pub const FLAG_COMPRESSED: u8 = 0x01;
pub const FLAG_END_STREAM: u8 = 0x02;

/// How messages are written on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    Json,
    Proto,
}

/// A call's shape, from its content type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Unary,
    Streaming,
}

/// Connect's error codes (the ones this server gives).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    Canceled,
    Unknown,
    InvalidArgument,
    DeadlineExceeded,
    NotFound,
    AlreadyExists,
    PermissionDenied,
    FailedPrecondition,
    ResourceExhausted,
    Unimplemented,
    Internal,
    Unavailable,
    Unauthenticated,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Canceled => "canceled",
            Code::Unknown => "unknown",
            Code::InvalidArgument => "invalid_argument",
            Code::DeadlineExceeded => "deadline_exceeded",
            Code::NotFound => "not_found",
            Code::AlreadyExists => "already_exists",
            Code::PermissionDenied => "permission_denied",
            Code::FailedPrecondition => "failed_precondition",
            Code::ResourceExhausted => "resource_exhausted",
            Code::Unimplemented => "unimplemented",
            Code::Internal => "internal",
            Code::Unavailable => "unavailable",
            Code::Unauthenticated => "unauthenticated",
        }
    }

    /// The HTTP status of a unary error (the protocol's table).
    pub fn http_status(self) -> StatusCode {
        match self {
            Code::Canceled => StatusCode::from_u16(499).unwrap_or(StatusCode::BAD_REQUEST),
            Code::Unknown | Code::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            Code::InvalidArgument | Code::FailedPrecondition => StatusCode::BAD_REQUEST,
            Code::DeadlineExceeded => StatusCode::GATEWAY_TIMEOUT,
            Code::NotFound => StatusCode::NOT_FOUND,
            Code::AlreadyExists => StatusCode::CONFLICT,
            Code::PermissionDenied => StatusCode::FORBIDDEN,
            Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
            Code::Unimplemented => StatusCode::NOT_IMPLEMENTED,
            Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Code::Unauthenticated => StatusCode::UNAUTHORIZED,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectError {
    pub code: Code,
    pub message: String,
}

impl ConnectError {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(Code::InvalidArgument, message)
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({ "code": self.code.as_str(), "message": self.message })
    }

    /// The error as a unary call's reply.
    pub fn unary_response(&self) -> Response<Body> {
        full(
            self.code.http_status(),
            "application/json",
            Bytes::from(self.json().to_string()),
        )
    }

    /// The error as a stream's end message.
    pub fn end_stream(&self) -> Bytes {
        end_stream(Some(self))
    }
}

/// The call's shape and codec from its `Content-Type` header.
pub fn content_type(headers: &HeaderMap) -> Option<(Shape, Codec)> {
    content_type_of(headers.get(CONTENT_TYPE)?.to_str().ok()?)
}

/// The shape and codec a content type names (parameters such as `; charset=utf-8`
/// ignored), or `None` for one Connect does not define here.
pub fn content_type_of(value: &str) -> Option<(Shape, Codec)> {
    let essence = value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match essence.as_str() {
        "application/json" => Some((Shape::Unary, Codec::Json)),
        "application/proto" => Some((Shape::Unary, Codec::Proto)),
        "application/connect+json" => Some((Shape::Streaming, Codec::Json)),
        "application/connect+proto" => Some((Shape::Streaming, Codec::Proto)),
        _ => None,
    }
}

/// Refuses compressed requests (we neither inflate nor want a zip bomb's cost).
pub fn check_encoding(headers: &HeaderMap, shape: Shape) -> Result<(), ConnectError> {
    let name = match shape {
        Shape::Unary => "content-encoding",
        Shape::Streaming => "connect-content-encoding",
    };
    match headers.get(name).map(HeaderValue::to_str) {
        None => Ok(()),
        Some(Ok(v)) if v.trim().eq_ignore_ascii_case("identity") => Ok(()),
        Some(_) => Err(ConnectError::new(
            Code::Unimplemented,
            format!("{name}: only identity is supported"),
        )),
    }
}

/// `Connect-Timeout-Ms` in milliseconds: `None` when absent; a value that is not a
/// whole number of at most 10 digits is refused, as the protocol says.
pub fn timeout_ms(headers: &HeaderMap) -> Result<Option<u64>, ConnectError> {
    let Some(value) = headers.get("connect-timeout-ms") else {
        return Ok(None);
    };
    let text = value.to_str().unwrap_or("");
    if text.is_empty() || text.len() > 10 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ConnectError::invalid(
            "connect-timeout-ms must be a whole number of milliseconds",
        ));
    }
    text.parse()
        .map(Some)
        .map_err(|_| ConnectError::invalid("connect-timeout-ms is out of range"))
}

/// A message from its bytes in `codec`.
pub fn decode<M>(codec: Codec, bytes: &[u8]) -> Result<M, ConnectError>
where
    M: prost::Message + DeserializeOwned + Default,
{
    if bytes.len() > MAX_MESSAGE {
        return Err(too_big(bytes.len()));
    }
    match codec {
        Codec::Proto => M::decode(bytes).map_err(|e| ConnectError::invalid(format!("bad protobuf: {e}"))),
        Codec::Json => {
            // An empty unary JSON body is the empty message (some clients send none).
            if bytes.iter().all(u8::is_ascii_whitespace) {
                return Ok(M::default());
            }
            serde_json::from_slice(bytes).map_err(|e| ConnectError::invalid(format!("bad JSON: {e}")))
        }
    }
}

/// A message's bytes in `codec`.
pub fn encode<M: prost::Message + Serialize>(codec: Codec, message: &M) -> Bytes {
    match codec {
        Codec::Proto => Bytes::from(message.encode_to_vec()),
        // Generated messages always serialise (no maps with non-string keys).
        Codec::Json => Bytes::from(serde_json::to_vec(message).unwrap_or_else(|_| b"{}".to_vec())),
    }
}

pub fn too_big(len: usize) -> ConnectError {
    ConnectError::new(
        Code::ResourceExhausted,
        format!("the message is {len} bytes, over the limit of {MAX_MESSAGE}"),
    )
}

/// One envelope.
pub fn envelope(flags: u8, payload: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(5 + payload.len());
    out.put_u8(flags);
    out.put_u32(payload.len() as u32);
    out.put_slice(payload);
    out.freeze()
}

/// The end-of-stream envelope: `{}` or `{"error": {code, message}}`.
pub fn end_stream(error: Option<&ConnectError>) -> Bytes {
    let body = match error {
        None => serde_json::json!({}),
        Some(e) => serde_json::json!({ "error": e.json() }),
    };
    envelope(FLAG_END_STREAM, body.to_string().as_bytes())
}

/// An envelope's header: its flags and its payload's length, checked against
/// [`MAX_MESSAGE`] (so a huge one is refused before its payload is read).
pub fn envelope_header(header: [u8; 5]) -> Result<(u8, usize), ConnectError> {
    let flags = header[0];
    let len = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
    if len > MAX_MESSAGE {
        return Err(too_big(len));
    }
    if flags & FLAG_COMPRESSED != 0 {
        return Err(ConnectError::new(
            Code::Unimplemented,
            "compressed messages are not supported",
        ));
    }
    if flags & !(FLAG_COMPRESSED | FLAG_END_STREAM) != 0 {
        return Err(ConnectError::invalid(format!("unknown envelope flags {flags:#04x}")));
    }
    Ok((flags, len))
}

/// An envelope's flags and payload.
pub type Envelope<'a> = (u8, &'a [u8]);

/// Splits whole envelopes off the front of `buf`: each `(flags, payload)`, and how
/// many bytes they took (a partial envelope at the end is left).
pub fn split_envelopes(buf: &[u8]) -> Result<(Vec<Envelope<'_>>, usize), ConnectError> {
    let mut found = Vec::new();
    let mut at = 0;
    while buf.len() - at >= 5 {
        let mut header = [0u8; 5];
        header.copy_from_slice(&buf[at..at + 5]);
        let (flags, len) = envelope_header(header)?;
        if buf.len() - at - 5 < len {
            break;
        }
        found.push((flags, &buf[at + 5..at + 5 + len]));
        at += 5 + len;
    }
    Ok((found, at))
}

/// The `Content-Type` of a streaming reply in `codec`.
pub fn streaming_type(codec: Codec) -> &'static str {
    match codec {
        Codec::Json => "application/connect+json",
        Codec::Proto => "application/connect+proto",
    }
}

/// The `Content-Type` of a unary reply in `codec`.
pub fn unary_type(codec: Codec) -> &'static str {
    match codec {
        Codec::Json => "application/json",
        Codec::Proto => "application/proto",
    }
}

/// The next envelope of a streaming request body, read as its frames come: its header
/// is checked as soon as its 5 bytes are in (a huge length is refused before the
/// payload is read). `None` at the body's end. `wait`: how long the next frame may
/// take (`None`: as long as the connection lives, for a client stream's pauses).
pub async fn next_envelope<B>(
    body: &mut B,
    buf: &mut BytesMut,
    wait: Option<std::time::Duration>,
) -> Result<Option<(u8, Bytes)>, ConnectError>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    use http_body_util::BodyExt;
    loop {
        if buf.len() >= 5 {
            let header = [buf[0], buf[1], buf[2], buf[3], buf[4]];
            let (flags, len) = envelope_header(header)?;
            if buf.len() >= 5 + len {
                let whole = buf.split_to(5 + len).freeze();
                return Ok(Some((flags, whole.slice(5..))));
            }
        }
        let frame = match wait {
            Some(wait) => tokio::time::timeout(wait, body.frame())
                .await
                .map_err(|_| ConnectError::new(Code::DeadlineExceeded, "the request body did not come in time"))?,
            None => body.frame().await,
        };
        match frame {
            None if buf.is_empty() => return Ok(None),
            None => return Err(ConnectError::invalid("the request ends inside an envelope")),
            Some(Err(e)) => return Err(ConnectError::new(Code::Canceled, format!("reading the request: {e}"))),
            // Trailers carry nothing Connect reads.
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    buf.extend_from_slice(&data);
                }
            }
        }
    }
}

/// A unary request's whole body: refused from its `Content-Length` when that is over
/// [`MAX_MESSAGE`], and cut off as soon as more than that arrives.
pub async fn read_unary<B>(headers: &HeaderMap, body: B, wait: std::time::Duration) -> Result<Bytes, ConnectError>
where
    B: hyper::body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use http_body_util::BodyExt;
    let declared = headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(len) = declared.filter(|&len| len > MAX_MESSAGE as u64) {
        return Err(too_big(len.min(usize::MAX as u64) as usize));
    }
    let limited = http_body_util::Limited::new(body, MAX_MESSAGE);
    match tokio::time::timeout(wait, limited.collect()).await {
        Err(_) => Err(ConnectError::new(
            Code::DeadlineExceeded,
            "the request body did not come in time",
        )),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_big(MAX_MESSAGE + 1)),
        Ok(Err(e)) => Err(ConnectError::new(Code::Canceled, format!("reading the request: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_split_and_refuse_huge_lengths() {
        let mut buf = envelope(0, b"abc").to_vec();
        buf.extend_from_slice(&envelope(FLAG_END_STREAM, b"{}"));
        buf.extend_from_slice(&[0, 0, 0]);
        let (found, used) = split_envelopes(&buf).unwrap();
        assert_eq!(found, vec![(0, &b"abc"[..]), (FLAG_END_STREAM, &b"{}"[..])]);
        assert_eq!(used, 8 + 7);
        let huge = [0u8, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(split_envelopes(&huge).unwrap_err().code, Code::ResourceExhausted);
        assert_eq!(
            split_envelopes(&[0x80, 0, 0, 0, 0]).unwrap_err().code,
            Code::InvalidArgument
        );
    }
}
