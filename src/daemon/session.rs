//! One client's session on the daemon's protocol: its requests in, its replies and
//! subscribed output events out, until it closes. Served for the unix socket's
//! connections (server.rs) and for the HTTP port's after an Upgrade (http/upgrade.rs),
//! which is why it stands apart from both.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio::net::UnixStream;
use tokio::sync::mpsc;

use super::conn::{message, Conn, Daemon};
use super::frame::{read_frame, MAX_REQUEST};
use super::outbox::Outbox;
use crate::base::sync::lock;

/// What a connection's reads take at a time: most requests whole (a `sendInput`'s is
/// a few hundred bytes), and the connection holds no more while idle than this.
const REQUEST_BUFFER: usize = 8 * 1024;

/// One client's connection, until it closes. Also the daemon's protocol over the HTTP
/// port after its Upgrade (src/daemon/http/upgrade.rs), through a socket pair.
pub(super) async fn connection(daemon: Arc<Daemon>, stream: UnixStream) {
    let id = daemon.next_conn.fetch_add(1, Ordering::Relaxed);
    let (reader, writer) = match super::halves::split(stream) {
        Ok(halves) => halves,
        // Out of descriptors: this client is closed before anything is served.
        Err(e) => return eprintln!("native-shell-daemon: cannot serve a connection: {e}"),
    };
    // Buffered: a request's header and body (and any requests behind it) come in one
    // read, where reading the header and then the body took two, and a third to learn
    // that nothing more was there. A read shorter than the buffer tells tokio the
    // socket is drained, so the next read waits for the next request without a call
    // that finds nothing. A body larger than the buffer is read straight into its own.
    let mut reader = tokio::io::BufReader::with_capacity(REQUEST_BUFFER, reader);
    let (out, writer) = Outbox::new(writer);
    let (events, mut ready) = mpsc::unbounded_channel::<u32>();
    lock(&daemon.outs).insert(id, out.clone());
    daemon.state.connected();
    let writing = tokio::spawn(writer);
    let mut conn = Conn {
        id,
        daemon: daemon.clone(),
        out: out.clone(),
        hello: false,
        hosted: None,
        subs: Arc::new(Mutex::new(HashMap::new())),
        next_sub: 1,
        events,
    };
    let subs = conn.subs.clone();
    let pump_out = out.clone();
    let pumping = tokio::spawn(async move {
        while let Some(sub) = ready.recv().await {
            let found = lock(&subs).get(&sub).cloned();
            let Some((subscription, handle)) = found else { continue };
            let Some(event) = subscription.take_event() else {
                continue;
            };
            if event.exited {
                lock(&subs).remove(&sub);
            }
            let data = super::wire::output_event(event, handle);
            let _ = pump_out.send(message(&json!({ "event": "output", "sub": sub, "data": data })));
        }
    });
    loop {
        match read_frame(&mut reader, MAX_REQUEST).await {
            Ok(Some(body)) => super::dispatch::request(&mut conn, &body),
            Ok(None) => break,
            Err(e) => {
                let _ = out.send(message(&json!({ "event": "bye", "reason": e.to_string() })));
                break;
            }
        }
    }
    for (subscription, _) in lock(&conn.subs).drain().map(|(_, v)| v) {
        subscription.cancel();
    }
    lock(&daemon.outs).remove(&id);
    super::dispatch::closed(&conn);
    drop(conn);
    drop(out);
    pumping.abort();
    // Replies still queued go out; the task ends when every sender is gone.
    let _ = writing.await;
}
