//! What a connection's dispatch and the server share: the daemon's state, a
//! connection's own, and the sending of replies and events (no import of either, so
//! the arrows point one way: server → dispatch → conn).

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::frame::{encode_value, MAX_REPLY};
use super::outbox::Outbox;
use super::state::{Hosted, State};
use crate::base::sync::lock;
use crate::job::events::Subscription;

/// What every connection shares.
pub struct Daemon {
    pub state: State,
    pub uid: u32,
    /// The runtime the services' jobs run on (src/daemon/mod.rs `run`: not the
    /// connections' thread).
    pub jobs: tokio::runtime::Handle,
    pub next_conn: AtomicU64,
    /// Each live connection's outgoing queue, for the `bye` sent before an exit.
    pub outs: Mutex<HashMap<u64, Arc<Outbox>>>,
    /// Set by `exitDaemon`: the accept loop ends.
    pub exit: tokio::sync::Notify,
    /// The path this daemon's socket is bound at.
    pub socket: std::path::PathBuf,
    /// `--project-root`: the project of a client's `open` that names none (a remote
    /// client's paths are this machine's; without it, the daemon's directory, `/`).
    pub default_project_root: Option<std::path::PathBuf>,
    /// `restartDaemon` requests on their way to the accept loop (src/daemon/upgrade/).
    pub upgrade: Arc<super::upgrade::requests::Requests>,
    /// Set while a restart in place carries the jobs: a connection closing then ends
    /// none of its `keep: false` jobs (the restart, not the client, closed it).
    pub restarting: std::sync::atomic::AtomicBool,
}

impl Daemon {
    pub fn new(state: State, uid: u32, jobs: tokio::runtime::Handle, socket: std::path::PathBuf) -> Self {
        Self {
            state,
            uid,
            jobs,
            next_conn: AtomicU64::new(1),
            outs: Mutex::new(HashMap::new()),
            exit: tokio::sync::Notify::new(),
            socket,
            default_project_root: None,
            upgrade: Arc::default(),
            restarting: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Stops new connections at once, then has the accept loop end. The socket goes
    /// first so that a daemon started the moment this one says it exits (a client
    /// replacing it) cannot connect here, take this daemon for a live one and leave
    /// nobody serving: it finds no socket, waits for the lock, and serves. The lock is
    /// held until this daemon has ended, so the removal never meets a successor's socket.
    pub fn request_exit(&self) {
        let _ = std::fs::remove_file(&self.socket);
        self.exit.notify_one();
    }

    pub fn bye_all(&self, reason: &str) {
        let frame = message(&json!({ "event": "bye", "reason": reason }));
        for out in lock(&self.outs).values() {
            let _ = out.send(frame.clone());
        }
    }
}

/// A connection's output subscriptions: id → (subscription, the job's daemon handle).
pub type Subs = Arc<Mutex<HashMap<u32, (Arc<Subscription>, u32)>>>;

/// One connection's state, read by its dispatch and its event pump.
pub struct Conn {
    pub id: u64,
    pub daemon: Arc<Daemon>,
    pub out: Arc<Outbox>,
    pub hello: bool,
    pub hosted: Option<Arc<Hosted>>,
    pub subs: Subs,
    pub next_sub: u32,
    /// Told a subscription's id when it has an event to take.
    pub events: mpsc::UnboundedSender<u32>,
}

/// A message as a frame.
pub fn message(value: &Value) -> Vec<u8> {
    encode_value(value).0
}

/// A reply's fields, serialized as they are: no map is built to hold them.
#[derive(serde::Serialize)]
struct Reply<'a> {
    id: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a Value>,
}

/// Sends a reply; one over the size limit becomes a `LIMIT_REACHED` error.
pub fn send_reply(out: &Outbox, id: &Value, reply: Result<Value, Value>) {
    let (result, error) = match &reply {
        Ok(result) => (Some(result), None),
        Err(error) => (None, Some(error)),
    };
    let (mut frame, len) = encode_value(&Reply { id, result, error });
    if len > MAX_REPLY {
        frame = message(&json!({ "id": id, "error": {
            "code": "LIMIT_REACHED",
            "message": format!("the reply is {len} bytes, over the wire's limit of {MAX_REPLY}"),
        }}));
    }
    // The connection is gone: nobody to tell.
    let _ = out.send(frame);
}
