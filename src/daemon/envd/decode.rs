//! A request's bytes → its message, for every method of `process.Process`: pure (no
//! daemon, no I/O), so the HTTP handler and the fuzz target (fuzz/fuzz_targets/
//! envd_request.rs) run the same code on the same input. Everything a caller controls
//! is checked here or refused with a Connect error; nothing here panics.

use super::proto::process as pb;
use crate::daemon::protocol::connect::{
    content_type_of, decode, split_envelopes, Code, Codec, ConnectError, Shape, FLAG_END_STREAM,
};

/// One decoded call.
#[derive(Debug)]
pub enum Call {
    List(pb::ListRequest),
    Connect(pb::ConnectRequest),
    Start(pb::StartRequest),
    Update(pb::UpdateRequest),
    StreamInput(Vec<pb::StreamInputRequest>),
    SendInput(pb::SendInputRequest),
    SendSignal(pb::SendSignalRequest),
    CloseStdin(pb::CloseStdinRequest),
}

/// The shape each method is called with.
pub fn shape_of(method: &str) -> Option<Shape> {
    match method {
        "Start" | "Connect" | "StreamInput" => Some(Shape::Streaming),
        "List" | "Update" | "SendInput" | "SendSignal" | "CloseStdin" => Some(Shape::Unary),
        _ => None,
    }
}

/// A whole request body of `method` sent as `content_type`.
pub fn decode_request(method: &str, content_type: &str, body: &[u8]) -> Result<Call, ConnectError> {
    let (shape, codec) = content_type_of(content_type)
        .ok_or_else(|| ConnectError::invalid(format!("unsupported content type {content_type:?}")))?;
    let expected =
        shape_of(method).ok_or_else(|| ConnectError::new(Code::NotFound, format!("no method {method:?}")))?;
    if shape != expected {
        return Err(ConnectError::invalid(format!(
            "{method} is not called with {content_type}"
        )));
    }
    match shape {
        Shape::Unary => decode_unary(method, codec, body),
        Shape::Streaming => {
            let messages = stream_messages(body)?;
            if method == "StreamInput" {
                let inputs = messages
                    .iter()
                    .map(|m| decode::<pb::StreamInputRequest>(codec, m))
                    .collect::<Result<Vec<_>, _>>()?;
                return Ok(Call::StreamInput(inputs));
            }
            let [message] = messages.as_slice() else {
                return Err(ConnectError::invalid(format!(
                    "{method} takes exactly one request message, got {}",
                    messages.len()
                )));
            };
            decode_first(method, codec, message)
        }
    }
}

/// A unary method's message.
pub fn decode_unary(method: &str, codec: Codec, body: &[u8]) -> Result<Call, ConnectError> {
    Ok(match method {
        "List" => Call::List(decode(codec, body)?),
        "Update" => Call::Update(decode(codec, body)?),
        "SendInput" => Call::SendInput(decode(codec, body)?),
        "SendSignal" => {
            let request: pb::SendSignalRequest = decode(codec, body)?;
            signal_of(&request)?;
            Call::SendSignal(request)
        }
        "CloseStdin" => Call::CloseStdin(decode(codec, body)?),
        other => return Err(ConnectError::new(Code::NotFound, format!("no unary method {other:?}"))),
    })
}

/// A server-streaming method's one request message.
pub fn decode_first(method: &str, codec: Codec, message: &[u8]) -> Result<Call, ConnectError> {
    Ok(match method {
        "Start" => Call::Start(decode(codec, message)?),
        "Connect" => Call::Connect(decode(codec, message)?),
        other => {
            return Err(ConnectError::new(
                Code::NotFound,
                format!("no streaming method {other:?}"),
            ))
        }
    })
}

/// The messages of a whole streaming request body, up to its end-of-stream envelope
/// (whose content a client does not fill; it is ignored).
fn stream_messages(body: &[u8]) -> Result<Vec<&[u8]>, ConnectError> {
    let (envelopes, used) = split_envelopes(body)?;
    if used != body.len() {
        return Err(ConnectError::invalid("the request ends inside an envelope"));
    }
    Ok(envelopes
        .into_iter()
        .take_while(|(flags, _)| flags & FLAG_END_STREAM == 0)
        .map(|(_, payload)| payload)
        .collect())
}

/// The signal a `SendSignal` asks for: SIGTERM or SIGKILL, as envd allows; anything
/// else is `invalid_argument` (envd answers `unimplemented`; either way nothing is sent).
pub fn signal_of(request: &pb::SendSignalRequest) -> Result<pb::Signal, ConnectError> {
    match pb::Signal::try_from(request.signal) {
        Ok(signal @ (pb::Signal::Sigterm | pb::Signal::Sigkill)) => Ok(signal),
        _ => Err(ConnectError::invalid(format!(
            "signal {} is not allowed: only SIGNAL_SIGTERM (15) and SIGNAL_SIGKILL (9)",
            request.signal
        ))),
    }
}

/// A PTY size as the core takes it; 0 or more than a terminal holds is refused.
pub fn terminal_size(size: &pb::pty::Size) -> Result<(u16, u16), ConnectError> {
    let fit = |v: u32, name: &str| {
        u16::try_from(v)
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| ConnectError::invalid(format!("pty {name} must be between 1 and 65535, got {v}")))
    };
    Ok((fit(size.cols, "cols")?, fit(size.rows, "rows")?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::protocol::connect::envelope;

    #[test]
    fn every_method_decodes_and_bad_input_is_refused() {
        let start = br#"{"process":{"cmd":"/bin/echo","args":["hi"],"envs":{"A":"1"}},"tag":"t"}"#;
        let body = envelope(0, start);
        match decode_request("Start", "application/connect+json", &body).unwrap() {
            Call::Start(s) => {
                let p = s.process.unwrap();
                assert_eq!(
                    (p.cmd.as_str(), p.args.len(), s.tag.as_deref()),
                    ("/bin/echo", 1, Some("t"))
                );
            }
            other => panic!("{other:?}"),
        }
        let err = decode_request("SendSignal", "application/json", br#"{"signal":"SIGNAL_SIGHUP"}"#).unwrap_err();
        assert_eq!(err.code, Code::InvalidArgument);
        let err = decode_request("SendSignal", "application/json", br#"{"signal":1}"#).unwrap_err();
        assert_eq!(err.code, Code::InvalidArgument);
        assert!(decode_request("SendSignal", "application/json", br#"{"signal":"SIGNAL_SIGKILL"}"#).is_ok());
        let err = decode_request("List", "application/proto", &[0xff, 0xff]).unwrap_err();
        assert_eq!(err.code, Code::InvalidArgument);
        let err = decode_request("List", "application/json", b"{").unwrap_err();
        assert_eq!(err.code, Code::InvalidArgument);
        assert_eq!(
            decode_request("Nope", "application/json", b"{}").unwrap_err().code,
            Code::NotFound
        );
    }
}
