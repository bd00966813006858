//! Accepting connections: the lock and the socket, the peer check, one task per
//! connection (requests in, replies and events out), the idle exit.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

use super::frame::{encode, read_frame, MAX_MESSAGE};
use super::place::{prepare_dir, take_lock};
use super::state::{Hosted, State};
use super::{Config, Ended};
use crate::events::Subscription;
use crate::sync::lock;

/// What every connection shares.
pub struct Daemon {
    pub state: State,
    uid: u32,
    next_conn: AtomicU64,
    /// Each live connection's outgoing queue, for the `bye` sent before an exit.
    outs: Mutex<HashMap<u64, mpsc::UnboundedSender<Vec<u8>>>>,
    /// Set by `exitDaemon`: the accept loop ends.
    exit: tokio::sync::Notify,
}

impl Daemon {
    pub fn request_exit(&self) {
        self.exit.notify_one();
    }

    fn bye_all(&self, reason: &str) {
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
    pub out: mpsc::UnboundedSender<Vec<u8>>,
    pub hello: bool,
    pub hosted: Option<Arc<Hosted>>,
    pub subs: Subs,
    pub next_sub: u32,
    /// Told a subscription's id when it has an event to take.
    pub events: mpsc::UnboundedSender<u32>,
    /// `run`s with `keep: false` not yet answered: their jobs have no handle here yet.
    pub unkept_runs: Arc<AtomicUsize>,
}

/// A message as a frame.
pub fn message(value: &Value) -> Vec<u8> {
    encode(value.to_string().as_bytes())
}

/// Sends a reply; one over the size limit becomes a `LIMIT_REACHED` error.
pub fn send_reply(out: &mpsc::UnboundedSender<Vec<u8>>, id: &Value, reply: Result<Value, Value>) {
    let body = match reply {
        Ok(result) => json!({ "id": id, "result": result }),
        Err(error) => json!({ "id": id, "error": error }),
    }
    .to_string();
    let frame = if body.len() > MAX_MESSAGE {
        message(&json!({ "id": id, "error": {
            "code": "LIMIT_REACHED",
            "message": format!("the reply is {} bytes, over the wire's limit of {MAX_MESSAGE}", body.len()),
        }}))
    } else {
        encode(body.as_bytes())
    };
    // The connection is gone: nobody to tell.
    let _ = out.send(frame);
}

pub async fn serve(config: Config) -> Result<Ended, String> {
    let dir = prepare_dir(&config.socket)?;
    let Some(_lock) = take_lock(&dir)? else {
        return Ok(Ended::AlreadyRunning);
    };
    // Holding the lock, no other daemon serves this path: a socket there is a dead
    // daemon's (or anything else left in our own 0700 directory).
    match std::fs::remove_file(&config.socket) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(format!(
                "cannot remove the stale socket {}: {e}",
                config.socket.display()
            ))
        }
    }
    let listener =
        UnixListener::bind(&config.socket).map_err(|e| format!("cannot bind {}: {e}", config.socket.display()))?;
    let daemon = Arc::new(Daemon {
        state: State::default(),
        uid: rustix::process::getuid().as_raw(),
        next_conn: AtomicU64::new(1),
        outs: Mutex::new(HashMap::new()),
        exit: tokio::sync::Notify::new(),
    });
    eprintln!(
        "native-shell-daemon {} (pid {}) serving {}",
        super::VERSION,
        std::process::id(),
        config.socket.display()
    );
    let tick = (config.idle_exit / 2).clamp(Duration::from_millis(10), Duration::from_secs(1));
    let mut ticks = tokio::time::interval(tick);
    let mut idle_since: Option<Instant> = None;
    let mut term = signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut int = signal(tokio::signal::unix::SignalKind::interrupt())?;
    let reason = loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => accept(&daemon, stream),
                Err(e) => eprintln!("native-shell-daemon: accept failed: {e}"),
            },
            _ = ticks.tick() => {
                if daemon.state.connections() > 0 {
                    idle_since = None;
                    continue;
                }
                daemon.state.prune();
                if daemon.state.running_jobs() > 0 {
                    idle_since = None;
                } else if idle_since.get_or_insert_with(Instant::now).elapsed() >= config.idle_exit {
                    break "idle";
                }
            },
            _ = daemon.exit.notified() => break "asked to exit",
            _ = term.recv() => break "SIGTERM",
            _ = int.recv() => break "SIGINT",
        }
    };
    eprintln!("native-shell-daemon: exiting ({reason})");
    daemon.bye_all(&format!("the daemon exits ({reason})"));
    // Removed while the lock is held: a new daemon binds its own after taking it.
    let _ = std::fs::remove_file(&config.socket);
    drop(listener);
    // The byes get a moment to leave.
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok(Ended::Done)
}

fn signal(kind: tokio::signal::unix::SignalKind) -> Result<tokio::signal::unix::Signal, String> {
    tokio::signal::unix::signal(kind).map_err(|e| format!("cannot handle signals: {e}"))
}

/// The peer check, then the connection's task. Another user's connection is closed
/// before anything is read or written: it learns nothing, not even the job list.
fn accept(daemon: &Arc<Daemon>, stream: UnixStream) {
    let peer = stream.peer_cred().map(|c| c.uid());
    if peer.as_ref().ok() != Some(&daemon.uid) {
        // Fails closed: credentials that cannot be read are refused too.
        eprintln!("native-shell-daemon: refused a connection from uid {peer:?}");
        return;
    }
    let daemon = daemon.clone();
    tokio::spawn(connection(daemon, stream));
}

async fn connection(daemon: Arc<Daemon>, stream: UnixStream) {
    let id = daemon.next_conn.fetch_add(1, Ordering::Relaxed);
    let (mut reader, mut writer) = stream.into_split();
    let (out, mut outgoing) = mpsc::unbounded_channel::<Vec<u8>>();
    let (events, mut ready) = mpsc::unbounded_channel::<u32>();
    lock(&daemon.outs).insert(id, out.clone());
    daemon.state.connected();
    let writing = tokio::spawn(async move {
        while let Some(frame) = outgoing.recv().await {
            if writer.write_all(&frame).await.is_err() {
                break;
            }
        }
    });
    let mut conn = Conn {
        id,
        daemon: daemon.clone(),
        out: out.clone(),
        hello: false,
        hosted: None,
        subs: Arc::new(Mutex::new(HashMap::new())),
        next_sub: 1,
        events,
        unkept_runs: Arc::new(AtomicUsize::new(0)),
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
        match read_frame(&mut reader).await {
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
