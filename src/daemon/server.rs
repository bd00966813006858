//! Accepting connections: the lock and the socket, the peer check, one task per
//! connection (session.rs serves it), the idle exit.

use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::{UnixListener, UnixStream};

use super::config::{Config, Ended};
use super::conn::Daemon;
use super::place::{prepare_dir, take_lock};
use super::session::connection;
use super::state::State;

pub async fn serve(
    mut config: Config,
    abilities: super::startup::Abilities,
    jobs: tokio::runtime::Handle,
) -> Result<Ended, String> {
    // The MCP server the daemon starts as its child listens on a socket beside the
    // daemon's (mcp_child.rs): `/mcp` forwards there.
    if let (Some(_), Some(listen)) = (&config.mcp_server, config.listen.as_mut()) {
        listen.mcp_upstream = Some(super::mcp_child::upstream_socket(&config.socket));
    }
    // An image that replaces the daemon's previous one in place takes over its
    // listeners and lock (src/daemon/upgrade/): nothing is bound or locked anew.
    if let Some(handover) = config.handover.take() {
        // Everything checked before anything is taken: a hand-over this image finds
        // wrong goes back to the previous image, every job untouched.
        if let Err(why) = super::upgrade::resume::check(&handover, &config.socket) {
            eprintln!("native-shell-daemon: HANDOVER_INVALID: {why}; rolling back to the previous image");
            let failed = super::upgrade::resume::roll_back(&handover);
            return Err(format!("HANDOVER_INVALID: {why}; {failed}"));
        }
        // Before anything asks for the token (a service's making does): the carried
        // jobs' owner marker, the one the watchdog kills by.
        super::upgrade::resume::own_jobs(&handover)?;
        let resumed = super::upgrade::resume::take(handover, &config.socket)?;
        let tcp = match (resumed.tcp, &config.listen) {
            (Some(tcp), Some(_)) => Some(tcp),
            // The previous image listened and this one is told not to: it stops.
            (Some(_), None) => None,
            (None, Some(listen)) => Some(super::http::bind(listen).await?.into_std().map_err(|e| e.to_string())?),
            (None, None) => None,
        };
        let unix =
            UnixListener::from_std(resumed.unix).map_err(|e| format!("cannot serve the inherited socket: {e}"))?;
        let handover = resumed.handover;
        return serve_on(config, abilities, jobs, resumed.lock, unix, tcp, Some(handover)).await;
    }
    let dir = prepare_dir(&config.socket)?;
    let Some(lock) = wait_for_lock(&dir, &config.socket).await? else {
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
    // Bound before the socket: an address refused (exposure rules) or busy ends the
    // daemon with its reason before any client can reach it.
    let tcp = match &config.listen {
        Some(listen) => Some(super::http::bind(listen).await?.into_std().map_err(|e| e.to_string())?),
        None => None,
    };
    let listener =
        UnixListener::bind(&config.socket).map_err(|e| format!("cannot bind {}: {e}", config.socket.display()))?;
    serve_on(config, abilities, jobs, lock, listener, tcp, None).await
}

/// Serves on listeners bound here or handed over by a previous image.
async fn serve_on(
    config: Config,
    abilities: super::startup::Abilities,
    jobs: tokio::runtime::Handle,
    lock: std::fs::File,
    listener: UnixListener,
    tcp: Option<std::net::TcpListener>,
    resumed: Option<super::upgrade::Handover>,
) -> Result<Ended, String> {
    // Whatever a job leaves behind stays a descendant of the daemon, so its processes
    // can be told from other clients however they detach (src/daemon/peer.rs); the
    // orphans adopted so are reaped on each SIGCHLD, by a thread of their own
    // (child_exits.rs: a job's exit wakes no other thread of the daemon).
    if let Err(e) = crate::platform::become_subreaper() {
        return Err(format!("cannot become a subreaper: {e}"));
    }
    super::child_exits::reap_orphans_on_each()?;
    let daemon = Arc::new(Daemon {
        default_project_root: config.listen.as_ref().and_then(|l| l.project_root.clone()),
        ..Daemon::new(
            State::default(),
            rustix::process::getuid().as_raw(),
            jobs,
            config.socket.clone(),
        )
    });
    let mut resumed = resumed;
    if let Some(handover) = resumed.as_mut() {
        daemon
            .state
            .resume_counters(handover.next_handle, handover.next_service);
        // The jobs, before the orphan reaper first runs (their exits are their
        // readers'), and before any client is accepted.
        let carried = std::mem::take(&mut handover.daemon);
        super::carry::resume(
            &daemon.state,
            carried,
            &daemon.jobs,
            &mut super::upgrade::exec::take_inherited,
        )
        .map_err(|e| format!("HANDOVER_INVALID: the hand-over's jobs: {e}"))?;
    }
    // What a restart runs again (the path, so a binary replaced on disk is the one run).
    let image = super::upgrade::Image::current();
    #[cfg(target_os = "linux")]
    let _ = daemon.upgrade.image.set(image.clone());
    eprintln!(
        "native-shell-daemon {} (pid {}) serving {}",
        super::version::version(),
        std::process::id(),
        config.socket.display()
    );
    let described = match (&tcp, &config.listen) {
        (Some(tcp), Some(listen)) => Some(super::startup::Face {
            addr: tcp.local_addr().unwrap_or(listen.addr),
            token: listen.token.is_some(),
            mcp: listen.mcp_upstream.is_some(),
        }),
        _ => None,
    };
    // The one line that says what this daemon enforces (startup.rs).
    eprintln!("{}", abilities.line(described.as_ref()));
    if let (Some(server), Some(listen)) = (config.mcp_server.clone(), config.listen.as_ref()) {
        if let Some(upstream) = listen.mcp_upstream.clone() {
            super::mcp_child::supervise(server, config.socket.clone(), upstream, listen.project_root.clone());
        }
    }
    let mut http = None;
    if let (Some(tcp), Some(listen)) = (tcp, config.listen.clone()) {
        let envd = Arc::new(super::envd::Envd::new(&daemon, listen.project_root.clone())?);
        let face = Arc::new(super::http::Face {
            daemon: daemon.clone(),
            listen,
            envd,
            health: super::http::health::Health::new(abilities.json(described.as_ref())),
            session: |daemon, stream| {
                tokio::spawn(connection(daemon, stream));
            },
        });
        http = Some(super::restart::HttpFace::start(tcp, face)?);
    }
    if let Some(handover) = &resumed {
        super::upgrade::resume::done(handover);
        eprintln!(
            "native-shell-daemon: took over from {} in place: {:.1} ms without service",
            handover.from_version,
            super::upgrade::resume::paused_ms(handover)
        );
    }
    let tick = (config.idle_exit / 2).clamp(Duration::from_millis(10), Duration::from_secs(1));
    let mut ticks = tokio::time::interval(tick);
    let mut idle_since: Option<Instant> = None;
    let mut term = signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut int = signal(tokio::signal::unix::SignalKind::interrupt())?;
    // Its terminal closed (`native-shell-service daemon` in a window that went away).
    let mut hup = signal(tokio::signal::unix::SignalKind::hangup())?;
    let parent_gone = super::parent::stdin_closed(config.exit_with_stdin);
    tokio::pin!(parent_gone);
    let reason = loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => accept(&daemon, stream),
                Err(e) => eprintln!("native-shell-daemon: accept failed: {e}"),
            },
            _ = ticks.tick() => {
                if daemon.state.connections() > 0 || config.listen.is_some() {
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
            _ = daemon.upgrade.asked.notified() => {
                let checked = daemon.upgrade.take();
                if !checked.is_empty() {
                    let held = super::restart::Holdings {
                        daemon: &daemon,
                        image: &image,
                        socket: &config.socket,
                        unix: listener.as_fd(),
                        lock: lock.as_fd(),
                        http: http.as_mut(),
                    };
                    super::restart::restart(held, checked).await;
                }
            },
            _ = daemon.exit.notified() => break "asked to exit",
            _ = term.recv() => break "SIGTERM",
            _ = int.recv() => break "SIGINT",
            _ = hup.recv() => break "SIGHUP",
            _ = &mut parent_gone => break "stdin closed: the process that started it is gone",
        }
    };
    eprintln!("native-shell-daemon: exiting ({reason})");
    // Removed while the lock is held, before anyone is told (a new daemon binds its own
    // after taking the lock; `Daemon::request_exit` says why first).
    let _ = std::fs::remove_file(&config.socket);
    drop(listener);
    daemon.bye_all(&format!("the daemon exits ({reason})"));
    // The byes get a moment to leave.
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok(Ended::Done)
}

/// The lock, or `None` when another daemon serves the socket. A held lock whose socket
/// does not answer belongs to a daemon that is starting (it binds within moments) or
/// exiting (a client replacing a daemon of another version starts us as the old one
/// goes): waited for, so the client that started us finds a daemon either way.
async fn wait_for_lock(dir: &std::path::Path, socket: &std::path::Path) -> Result<Option<std::fs::File>, String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(lock) = take_lock(dir)? {
            return Ok(Some(lock));
        }
        if std::os::unix::net::UnixStream::connect(socket).is_ok() || Instant::now() >= deadline {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

fn signal(kind: tokio::signal::unix::SignalKind) -> Result<tokio::signal::unix::Signal, String> {
    tokio::signal::unix::signal(kind).map_err(|e| format!("cannot handle signals: {e}"))
}

/// The peer check, then the connection's task. A connection of another user, or of a
/// process of one of the daemon's jobs (src/daemon/peer.rs), is closed before anything
/// is read or written: it learns nothing, not even the job list.
fn accept(daemon: &Arc<Daemon>, stream: UnixStream) {
    let daemon = daemon.clone();
    tokio::spawn(async move {
        // Fails closed: credentials that cannot be read are refused too.
        if let Err(why) = super::peer::unix_client(&stream, daemon.uid).await {
            eprintln!("native-shell-daemon: refused a connection: {why}");
            return;
        }
        connection(daemon, stream).await;
    });
}
