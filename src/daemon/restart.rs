//! The old image's side of a restart, run by the accept loop (server.rs) once a
//! request's new binary passed its pre-flight (upgrade/requests.rs): the last checks, the
//! pause, the `execve` (upgrade/exec.rs), and the way back when it fails.
//!
//! Format 2 carries the jobs (src/daemon/carry.rs): after the last checks, every
//! job's reader is stopped where nothing it read is held (the freeze point), the
//! jobs are written into the hand-over with copies of their descriptors, and exactly
//! those copies lose close-on-exec. A restart that does not happen lets every reader
//! go on where it stood.
//!
//! The pause is short and everything in it waits rather than fails: the accept loop
//! is not polled and the HTTP face's accept task is stopped, so new connections wait
//! in the listeners' backlogs (the sockets stay open and listening throughout: the
//! HTTP one through a descriptor of its own, `HttpFace::listener`), and the connected
//! clients are told `bye` with the reason before their connections close at the exec.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::conn::Daemon;
use super::http::Face;
use super::state::State;
use super::upgrade::exec::{exec, handover_file, monotonic_ns, still_checked, Image, Refusal};
use super::upgrade::format::{Descriptors, Handover, Rollback, FORMAT};
use super::upgrade::requests::{refusal_json, Checked};

/// Lets the replies and `bye`s queued for a slow socket leave before the exec.
const FLUSH: Duration = Duration::from_millis(10);

/// The HTTP face's accepting, which a restart stops and (on failure) starts again.
pub struct HttpFace {
    /// The listening socket, held apart from the accept task's own descriptor, so
    /// stopping the task never closes the socket: what the new image inherits.
    listener: OwnedFd,
    face: Arc<Face>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl HttpFace {
    pub fn start(listener: std::net::TcpListener, face: Arc<Face>) -> Result<Self, String> {
        let mut http = Self {
            listener: listener.into(),
            face,
            task: None,
        };
        http.resume()?;
        Ok(http)
    }

    fn resume(&mut self) -> Result<(), String> {
        let copy = self
            .listener
            .try_clone()
            .map_err(|e| format!("cannot share the HTTP listener: {e}"))?;
        let std = std::net::TcpListener::from(copy);
        std.set_nonblocking(true)
            .map_err(|e| format!("cannot make the HTTP listener non-blocking: {e}"))?;
        let listener =
            tokio::net::TcpListener::from_std(std).map_err(|e| format!("cannot serve the HTTP listener: {e}"))?;
        self.task = Some(tokio::spawn(super::http::serve(listener, self.face.clone())));
        Ok(())
    }

    fn pause(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.listener.as_fd()
    }
}

/// What the accept loop holds that the new image takes over.
pub struct Holdings<'a> {
    pub daemon: &'a Arc<Daemon>,
    pub image: &'a Image,
    pub socket: &'a Path,
    pub unix: BorrowedFd<'a>,
    pub lock: BorrowedFd<'a>,
    pub http: Option<&'a mut HttpFace>,
}

/// What a restart checks before it stops anything: every job the daemon holds can be
/// carried (src/daemon/carry.rs says which cannot).
pub fn refuse_jobs(state: &State, face_started: Option<&[super::envd::carried::CarriedStart]>) -> Result<(), Refusal> {
    super::carry::precheck(state, face_started).map_err(|why| Refusal::new("DAEMON_RESTART_REFUSED", why))
}

/// What the envd face's `Start`s asked for, when this image has the face.
fn face_started(held: &Holdings<'_>) -> Option<Vec<super::envd::carried::CarriedStart>> {
    held.http.as_deref().map(|http| http.face.envd.carry_started())
}

fn refuse_all(checked: Vec<Checked>, refusal: &Refusal) {
    eprintln!("native-shell-daemon: restart refused: {}", refusal.message);
    for request in checked {
        (request.answer)(Err(refusal_json(refusal)));
    }
}

/// Replaces the image. Returns only when the restart was refused or the exec failed;
/// the daemon serves on as before then, its jobs' readers going on where they stood.
pub async fn restart(mut held: Holdings<'_>, checked: Vec<Checked>) {
    if let Err(refusal) = refuse_jobs(&held.daemon.state, face_started(&held).as_deref()) {
        return refuse_all(checked, &refusal);
    }
    let Some(first) = checked.first() else { return };
    let (binary, to_version, identity) = (first.binary.clone(), first.to_version.clone(), first.identity);
    if let Err(refusal) = still_checked(&binary, identity) {
        return refuse_all(checked, &refusal);
    }
    // From here on nothing is accepted until the new image serves.
    let paused_at_ns = monotonic_ns();
    if let Some(http) = held.http.as_deref_mut() {
        http.pause();
    }
    // The freeze point: every job's reader stands still with all it read in the job;
    // a job started from now on is ended at once (src/service/carry.rs).
    held.daemon.restarting.store(true, Ordering::SeqCst);
    if let Err(why) = super::carry::freeze(&held.daemon.state).await {
        abandon(&mut held);
        return refuse_all(checked, &Refusal::new("DAEMON_RESTART_FAILED", why));
    }
    let from = super::version::version();
    eprintln!(
        "native-shell-daemon: restarting in place: {from} -> {to_version} ({})",
        binary.display()
    );
    for request in checked {
        (request.answer)(Ok(json!({ "pid": std::process::id(), "from": from, "to": to_version })));
    }
    held.daemon.bye_all(&format!(
        "the daemon restarts in place ({from} -> {to_version}); connect again"
    ));
    tokio::time::sleep(FLUSH).await;
    super::upgrade::test_hold::hold_if_asked("NATIVE_SHELL_TEST_HOLD_FREEZE").await;
    let failed = match super::carry::carry(&held.daemon.state, face_started(&held)) {
        Err(why) => why,
        Ok((carried, kept)) => {
            super::upgrade::test_hold::hold_if_asked("NATIVE_SHELL_TEST_HOLD_EXEC").await;
            let jobs = carried.job_count();
            let carried_input = carried.unwritten_input();
            let (next_handle, next_service) = held.daemon.state.counters();
            let watchdog = super::carry::watchdog_fd();
            // This image's binary, open: the way back if the new image finds the
            // hand-over wrong after the exec (upgrade/resume.rs).
            let this_exe = std::fs::File::open("/proc/self/exe").ok();
            let args: Option<Vec<String>> = held.image.args.iter().map(|a| a.to_str().map(str::to_string)).collect();
            let rollback = this_exe.as_ref().zip(args).map(|(exe, args)| Rollback {
                exe_fd: std::os::fd::AsRawFd::as_raw_fd(exe),
                args,
            });
            let handover = Handover {
                format: FORMAT,
                from_version: from.to_string(),
                socket: held.socket.to_string_lossy().into_owned(),
                fds: Descriptors {
                    unix_listener: raw(held.unix),
                    tcp_listener: held.http.as_deref().map(|h| raw(h.fd())),
                    lock: raw(held.lock),
                },
                next_handle,
                next_service,
                paused_at_ns,
                process_token: crate::service::process_token().to_string(),
                next_service_number: crate::service::next_service_number(),
                watchdog_fd: watchdog,
                daemon: carried,
                rollback,
            };
            match handover_file(&handover) {
                Err(e) => format!("cannot write the hand-over: {e}"),
                // Checked once more just before the exec (the flush gave time to swap it).
                Ok(_) if still_checked(&binary, identity).is_err() => {
                    format!("{} changed after its pre-flight", binary.display())
                }
                Ok(file) => {
                    let mut inherit = vec![held.unix, held.lock];
                    if let Some(http) = held.http.as_deref() {
                        inherit.push(http.fd());
                    }
                    // SAFETY: the watchdog's pipe stays open for the life of the process.
                    inherit.extend(watchdog.map(|fd| unsafe { BorrowedFd::borrow_raw(fd) }));
                    inherit.extend(kept.iter().map(AsFd::as_fd));
                    inherit.extend(this_exe.as_ref().map(AsFd::as_fd));
                    let (inputs, bytes) = carried_input;
                    eprintln!(
                        "native-shell-daemon: handing over {jobs} job(s); {inputs} with {bytes} byte(s) of input not yet written"
                    );
                    let error = exec(held.image, &binary, &inherit, &file);
                    format!("execve {} failed: {error}", binary.display())
                }
            }
        }
    };
    // Still this image: it serves on with everything it had.
    eprintln!("native-shell-daemon: restart abandoned, serving on: {failed}");
    abandon(&mut held);
}

/// The restart did not happen: the readers go on, the HTTP face accepts again.
fn abandon(held: &mut Holdings<'_>) {
    super::carry::thaw(&held.daemon.state);
    held.daemon.restarting.store(false, Ordering::SeqCst);
    if let Some(http) = held.http.as_deref_mut() {
        if let Err(e) = http.resume() {
            eprintln!("native-shell-daemon: {e}");
        }
    }
}

fn raw(fd: BorrowedFd<'_>) -> i32 {
    std::os::fd::AsRawFd::as_raw_fd(&fd)
}
