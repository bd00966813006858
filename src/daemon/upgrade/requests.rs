//! `restartDaemon` requests: the dispatch hands one here; the new binary's pre-flight
//! (exec.rs) runs on the blocking pool while the daemon serves on; a request whose
//! binary answered is handed to the accept loop, which alone may stop accepting and
//! replace the image (src/daemon/restart.rs).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{json, Value};
use tokio::sync::Notify;

use super::exec::{file_identity, preflight, still_checked, FileIdentity, Image, Refusal};
use super::format::{Descriptors, Handover, FORMAT};
use crate::base::sync::lock;

/// How a request's answer gets back to its connection.
pub type Answer = Box<dyn FnOnce(Result<Value, Value>) + Send>;

/// A request whose new binary took the dry hand-over.
pub struct Checked {
    pub answer: Answer,
    pub binary: PathBuf,
    pub to_version: String,
    /// The file that answered the pre-flight (exec.rs `file_identity`).
    pub identity: Option<FileIdentity>,
}

#[derive(Default)]
pub struct Requests {
    /// What this image was started as (set by the accept loop once it serves).
    pub image: OnceLock<Image>,
    checked: Mutex<Vec<Checked>>,
    pub asked: Notify,
}

impl Requests {
    /// Runs the pre-flight off this thread; answers a refusal at once, else queues the
    /// request for the accept loop.
    pub fn ask(self: &Arc<Self>, answer: Answer) {
        let Some(image) = self.image.get().cloned() else {
            answer(Err(refusal_json(&Refusal::new(
                "DAEMON_RESTART_REFUSED",
                "this daemon cannot restart in place (not serving a socket of its own, or not on Linux)",
            ))));
            return;
        };
        let requests = self.clone();
        tokio::spawn(async move {
            let binary = image.binary.clone();
            let checked = tokio::task::spawn_blocking(move || {
                let dry = dry_handover();
                // The same file before and after its run, or it is not the one checked.
                let identity = file_identity(&image.binary);
                let version = preflight(&image.binary, &image.args, &dry)?;
                still_checked(&image.binary, identity)?;
                Ok((version, identity))
            })
            .await
            .unwrap_or_else(|e| {
                Err(Refusal::new(
                    "DAEMON_RESTART_FAILED",
                    format!("the pre-flight failed: {e}"),
                ))
            });
            match checked {
                Ok((to_version, identity)) => {
                    lock(&requests.checked).push(Checked {
                        answer,
                        binary,
                        to_version,
                        identity,
                    });
                    requests.asked.notify_one();
                }
                Err(refusal) => answer(Err(refusal_json(&refusal))),
            }
        });
    }

    /// Every request checked so far: one restart answers them all.
    pub fn take(&self) -> Vec<Checked> {
        std::mem::take(&mut *lock(&self.checked))
    }
}

/// A hand-over of the real format and shape, for the new binary to read in its
/// pre-flight (the descriptors are placeholders: it only reads them).
fn dry_handover() -> Handover {
    Handover {
        format: FORMAT,
        from_version: crate::daemon::version::version().to_string(),
        socket: String::new(),
        fds: Descriptors {
            unix_listener: 3,
            tcp_listener: None,
            lock: 4,
        },
        next_handle: 0,
        next_service: 0,
        paused_at_ns: 0,
        process_token: crate::service::process_token().to_string(),
        next_service_number: 0,
        watchdog_fd: None,
        daemon: Default::default(),
        rollback: None,
    }
}

pub fn refusal_json(refusal: &Refusal) -> Value {
    json!({ "code": refusal.code, "message": refusal.message })
}
