//! `native-shell-daemon --stop`: asks the daemon on a socket to exit (its jobs are
//! killed), as a client of version X is told to when it meets a daemon of another
//! version with jobs (`DAEMON_VERSION`).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use serde_json::json;

use super::frame::encode;

/// `Ok(false)`: no daemon answers on `socket`. `Ok(true)`: one did and has closed the
/// connection on its way out.
pub fn stop(socket: &Path) -> Result<bool, String> {
    let mut stream = match UnixStream::connect(socket) {
        Ok(s) => s,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Ok(false)
        }
        Err(e) => return Err(format!("cannot connect to {}: {e}", socket.display())),
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let hello = json!({"id": 1, "method": "hello", "params": {"version": super::version::VERSION, "protocol": super::version::PROTOCOL, "pid": std::process::id()}});
    let exit = json!({"id": 2, "method": "exitDaemon", "params": {"killJobs": true}});
    for message in [hello, exit] {
        stream
            .write_all(&encode(message.to_string().as_bytes()))
            .map_err(|e| format!("cannot write to the daemon: {e}"))?;
    }
    // Everything it sends until it closes (its replies, its `bye`) is read and dropped.
    let mut sink = [0u8; 4096];
    loop {
        match stream.read(&mut sink) {
            Ok(0) => return Ok(true),
            Ok(_) => {}
            Err(e) => return Err(format!("the daemon did not close the connection: {e}")),
        }
    }
}
