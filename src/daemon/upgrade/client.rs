//! `native-shell-daemon --restart [--socket P]` (and `native-shell-service daemon
//! --restart`): asks the daemon on a socket to replace its image with the binary on
//! disk (src/daemon/restart.rs), then connects again and reports what now serves.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::daemon::frame::encode;

/// What serves after a restart.
#[derive(Debug)]
pub struct Restarted {
    pub pid: u32,
    pub from: String,
    pub to: String,
}

/// `Err((code, message))`: no daemon, or it refused (nothing changed then).
pub fn restart(socket: &Path) -> Result<Restarted, (String, String)> {
    let fail = |code: &str, message: String| (code.to_string(), message);
    let mut stream = UnixStream::connect(socket)
        .map_err(|e| fail("DAEMON_UNAVAILABLE", format!("no daemon on {}: {e}", socket.display())))?;
    // The pre-flight of the new binary takes up to 10 s.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let before = hello(&mut stream).map_err(|e| fail("DAEMON_UNAVAILABLE", e))?;
    send(&mut stream, &json!({"id": 2, "method": "restartDaemon", "params": {}}))
        .map_err(|e| fail("DAEMON_LOST", e))?;
    let reply = reply_to(&mut stream, 2).map_err(|e| fail("DAEMON_LOST", e))?;
    if let Some(error) = reply.get("error") {
        let code = error
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or("DAEMON_RESTART_FAILED");
        let message = error.get("message").and_then(Value::as_str).unwrap_or("refused");
        return Err(fail(code, message.to_string()));
    }
    let from = before.get("version").and_then(Value::as_str).unwrap_or("?").to_string();
    // The connection closes at the exec; then the same socket answers again.
    let mut sink = [0u8; 4096];
    while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
    // Long enough for the new image to rebuild its jobs' outputs before it answers
    // (their journals replayed: about 30 ms per MB of output, src/output/journal.rs).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let answered = UnixStream::connect(socket)
            .map_err(|e| e.to_string())
            .and_then(|mut s| {
                let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                hello(&mut s)
            });
        match answered {
            // The same image answering (an older daemon says none: taken as restarted,
            // as before): the restart was abandoned after it was answered, and the
            // daemon serves on with its old image (src/daemon/version.rs, `image`).
            Ok(after) if after.get("image").is_some_and(|image| Some(image) == before.get("image")) => {
                return Err(fail(
                    "DAEMON_RESTART_FAILED",
                    "the daemon abandoned the restart after its pre-flight and serves on with its old image and every job (its log says why)".to_string(),
                ))
            }
            Ok(after) => {
                return Ok(Restarted {
                    pid: after.get("pid").and_then(Value::as_u64).unwrap_or(0) as u32,
                    from,
                    to: after.get("version").and_then(Value::as_str).unwrap_or("?").to_string(),
                })
            }
            Err(e) if Instant::now() >= deadline => {
                return Err(fail(
                    "DAEMON_LOST",
                    format!("no daemon answered after the restart: {e}"),
                ))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

fn hello(stream: &mut UnixStream) -> Result<Value, String> {
    let hello = json!({"id": 1, "method": "hello", "params": {"version": crate::daemon::version::version(), "protocol": crate::daemon::version::PROTOCOL, "pid": std::process::id()}});
    send(stream, &hello)?;
    let reply = reply_to(stream, 1)?;
    reply
        .get("result")
        .cloned()
        .ok_or_else(|| format!("the daemon refused hello: {reply}"))
}

fn send(stream: &mut UnixStream, message: &Value) -> Result<(), String> {
    stream
        .write_all(&encode(message.to_string().as_bytes()))
        .map_err(|e| format!("cannot write to the daemon: {e}"))
}

/// The reply with this id (events and other messages are skipped).
fn reply_to(stream: &mut UnixStream, id: u64) -> Result<Value, String> {
    loop {
        let mut head = [0u8; 5];
        stream
            .read_exact(&mut head)
            .map_err(|e| format!("the daemon closed the connection: {e}"))?;
        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        if len > crate::daemon::frame::MAX_REQUEST {
            return Err(format!("a message of {len} bytes from the daemon"));
        }
        let mut body = vec![0u8; len];
        stream
            .read_exact(&mut body)
            .map_err(|e| format!("the daemon closed the connection: {e}"))?;
        let message: Value = serde_json::from_slice(&body).map_err(|e| format!("not JSON from the daemon: {e}"))?;
        if message.get("id").and_then(Value::as_u64) == Some(id) {
            return Ok(message);
        }
    }
}
