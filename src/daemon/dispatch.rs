//! One method per JS method (index.d.ts), same names and arguments: `params` holds
//! the JS call's arguments by name (`{ handle, options }`). What a JS call checks and
//! answers synchronously is done here, in the order the requests came, before the next
//! is read (so `sendInput` then `writeToPty` reach the job in that order, as in
//! process); what it awaits runs on and replies when done, possibly out of order.

use std::sync::Arc;

use serde_json::{json, Value};

use super::conn::{send_reply, Conn};
use super::outbox::Outbox;
use super::params::*;
use super::state::Hosted;
use super::wire;
use crate::base::error::{ErrorCode, Result, ServiceError};
use crate::base::sync::lock;
use crate::service::options::{self, whole};
use crate::service::request::{Launched, ServiceConfig, DEFAULT_KILL_GRACE};
use crate::service::Service;

/// What a method answers now: a value, an error, or nothing yet (a task replies).
enum Now {
    Reply(std::result::Result<Value, Value>),
    Later,
}

fn ok(value: Value) -> Now {
    Now::Reply(Ok(value))
}

impl From<Result<Value>> for Now {
    fn from(r: Result<Value>) -> Self {
        Now::Reply(r.map_err(|e| wire::error(&e)))
    }
}

/// Handles one request frame.
pub fn request(conn: &mut Conn, body: &[u8]) {
    let parsed: std::result::Result<Value, _> = serde_json::from_slice(body);
    let (id, method, params) = match parsed {
        Ok(Value::Object(mut m)) => (
            m.remove("id").unwrap_or(Value::Null),
            m.remove("method").and_then(|v| v.as_str().map(str::to_string)),
            m.remove("params").unwrap_or(Value::Null),
        ),
        _ => {
            let e = ServiceError::invalid("a request must be a JSON object {id, method, params}");
            return send_reply(&conn.out, &Value::Null, Err(wire::error(&e)));
        }
    };
    let Some(method) = method else {
        let e = ServiceError::invalid("the request has no method");
        return send_reply(&conn.out, &id, Err(wire::error(&e)));
    };
    let params = match params {
        Value::Null => Value::Object(Default::default()),
        Value::Object(_) => params,
        other => {
            let e = ServiceError::invalid(format!("params must be an object, got {}", kind(&other)));
            return send_reply(&conn.out, &id, Err(wire::error(&e)));
        }
    };
    if let Now::Reply(reply) = call(conn, &id, &method, &params) {
        send_reply(&conn.out, &id, reply);
    }
}

fn call(conn: &mut Conn, id: &Value, method: &str, p: &Value) -> Now {
    if method == "hello" {
        conn.hello = true;
        return ok(json!({
            "version": super::version::version(),
            "protocol": super::version::PROTOCOL,
            "pid": std::process::id(),
            "image": super::version::image(),
            "jobs": conn.daemon.state.running_jobs(),
        }));
    }
    if !conn.hello {
        return Result::<Value>::Err(ServiceError::invalid("the first request must be `hello`")).into();
    }
    match method {
        "open" => open(conn, p).into(),
        "checkCommand" => check_command(p).into(),
        "restartDaemon" => {
            // Refused at once while a job cannot be carried (no pre-flight run for nothing); else
            // the new binary is checked off this thread and the answer comes from the
            // accept loop when it execs, or with the refusal (src/daemon/upgrade/).
            // (The envd face's record is checked by the restart itself, which holds it.)
            if let Err(refusal) = super::restart::refuse_jobs(&conn.daemon.state, Some(&[])) {
                return Now::Reply(Err(super::upgrade::requests::refusal_json(&refusal)));
            }
            let (out, id) = (conn.out.clone(), id.clone());
            conn.daemon
                .upgrade
                .ask(Box::new(move |reply| send_reply(&out, &id, reply)));
            Now::Later
        }
        "exitDaemon" => {
            // A client replacing a daemon of another version asks when it saw no jobs;
            // one started since by another client is not ended without `killJobs`.
            let kill_jobs = p.get("killJobs").and_then(Value::as_bool).unwrap_or(false);
            let running = conn.daemon.state.running_jobs();
            if running > 0 && !kill_jobs {
                return Now::Reply(Err(json!({
                    "code": "DAEMON_BUSY",
                    "message": format!("the daemon has {running} running job(s): exitDaemon with killJobs: true ends them"),
                    "jobs": running,
                })));
            }
            // The socket is gone before the reply leaves: a daemon the client starts on
            // reading it cannot mistake this one for a live one.
            conn.daemon.request_exit();
            send_reply(&conn.out, id, Ok(Value::Null));
            Now::Later
        }
        _ => match conn.hosted.clone() {
            Some(hosted) => service_call(conn, hosted, id, method, p),
            None => Result::<Value>::Err(ServiceError::invalid(format!(
                "`{method}` needs a service: send `open` first"
            )))
            .into(),
        },
    }
}

fn service_call(conn: &mut Conn, hosted: Arc<Hosted>, id: &Value, method: &str, p: &Value) -> Now {
    let state = &conn.daemon.state;
    match method {
        "run" => run(conn, hosted, id, p),
        "start" => start(conn, &hosted, p),
        "sendInput" => later(conn, id, |out, id| {
            let handle = handle_param(p)?;
            let (target, local) = state.resolve(handle)?;
            let input = string_param(p, "input")?;
            let req = options::input_request(input, options(p, "options")?)?;
            let prepared = target.service.prepare_input(local, req)?;
            target.service.finish_input(
                prepared,
                Box::new(move |r| {
                    send_reply(
                        &out,
                        &id,
                        r.map(|r| wire::interaction(r, handle)).map_err(|e| wire::error(&e)),
                    )
                }),
            );
            Ok(())
        }),
        "waitFor" => later(conn, id, |out, id| {
            let handle = handle_param(p)?;
            let (target, local) = state.resolve(handle)?;
            let args = options::wait_args(options(p, "options")?)?;
            let prepared = target.service.prepare_wait(local, args.request())?;
            prepared.finish_with(Box::new(move |r| {
                send_reply(&out, &id, Ok(wire::interaction(r, handle)))
            }));
            Ok(())
        }),
        "writeToPty" => {
            let write = || -> Result<Value> {
                let (target, local) = state.resolve(handle_param(p)?)?;
                let bytes = match (p.get("data"), p.get("base64")) {
                    (Some(Value::String(s)), None) => s.clone().into_bytes(),
                    (None, Some(Value::String(b))) => decode_base64(b)?,
                    _ => return Err(ServiceError::invalid("writeToPty takes `data` (a string) or `base64`")),
                };
                target.service.write_input(local, bytes)?;
                Ok(Value::Null)
            };
            write().into()
        }
        "getResult" => {
            let get = || -> Result<Value> {
                let handle = handle_param(p)?;
                let (target, local) = state.resolve(handle)?;
                let o: Option<ResultArgs> = options(p, "options")?;
                let max = options::max_output(o.and_then(|o| o.max_output_size))?;
                Ok(wire::run_result(target.service.result(local, max)?, handle))
            };
            get().into()
        }
        "isPtyActive" => {
            let active = handle_param(p)
                .and_then(|h| state.resolve(h))
                .map(|(target, local)| target.service.is_active(local))
                .unwrap_or(false);
            ok(Value::Bool(active))
        }
        "getActiveProcesses" => ok(active_processes(conn, &hosted)),
        "getProcessOutput" => {
            let get = || -> Result<Value> {
                let (target, local) = state.resolve(handle_param(p)?)?;
                let o: Option<OutputArgs> = options(p, "options")?;
                let (view, tail) = o.map_or((None, None), |o| (o.view, o.tail_bytes));
                let view = options::view_arg(view.as_deref())?;
                let tail = whole("tailBytes", tail, 1e12)?.map(|v| v as usize);
                Ok(Value::String(target.service.output(local, view, tail)?))
            };
            get().into()
        }
        "readOutput" => {
            let read = || -> Result<Value> {
                let (target, local) = state.resolve(handle_param(p)?)?;
                // The JS call's options object, or its two fields given at the top.
                let o: ReadArgs = options(p, "options")?.unwrap_or(ReadArgs {
                    since: number_param(p, "since")?,
                    max_bytes: number_param(p, "maxBytes")?,
                });
                let (since, max) = options::read_args(o.since, o.max_bytes)?;
                // Checked and clamped as in process (`MAX_READ_BYTES`): its reply, even
                // all in six-byte escapes, fits a reply message (`frame::MAX_REPLY`).
                Ok(wire::output_chunk(target.service.read_output(local, since, max)?))
            };
            read().into()
        }
        "getScreen" | "getScreenPacked" | "readScreenPacked" => {
            let packed = method != "getScreen";
            later(conn, id, |out, id| {
                let (target, local) = state.resolve(handle_param(p)?)?;
                let o: Option<ScreenArgs> = options(p, "options")?;
                let scrollback = options::scrollback_arg(o.and_then(|o| o.scrollback))?;
                // Emulating a flood's pending output takes a while: off the connection's task.
                tokio::task::spawn_blocking(move || {
                    let reply = target.service.screen(local, scrollback).map(|cells| {
                        if packed {
                            wire::packed_screen(cells)
                        } else {
                            wire::screen(cells)
                        }
                    });
                    send_reply(&out, &id, reply.map_err(|e| wire::error(&e)));
                });
                Ok(())
            })
        }
        "subscribe" => subscribe(conn, p).into(),
        "unsubscribe" => {
            let sub = number_param(p, "sub").and_then(|s| whole("sub", s, f64::from(u32::MAX)));
            if let Ok(Some(sub)) = sub {
                if let Some((subscription, _)) = lock(&conn.subs).remove(&(sub as u32)) {
                    subscription.cancel();
                }
            }
            ok(Value::Null)
        }
        "resizePty" => {
            let resize = || -> Result<Value> {
                let (target, local) = state.resolve(handle_param(p)?)?;
                let cols = whole(
                    "cols",
                    Some(number_param(p, "cols")?.unwrap_or(-1.0)),
                    f64::from(u16::MAX),
                )?;
                let rows = whole(
                    "rows",
                    Some(number_param(p, "rows")?.unwrap_or(-1.0)),
                    f64::from(u16::MAX),
                )?;
                target
                    .service
                    .resize(local, cols.unwrap_or(0) as u16, rows.unwrap_or(0) as u16)?;
                Ok(Value::Null)
            };
            resize().into()
        }
        "kill" => later(conn, id, |out, id| {
            let handle = handle_param(p)?;
            let (target, local) = state.resolve(handle)?;
            let o: Option<KillArgs> = options(p, "options")?;
            let (grace, reason) = o.map_or((None, None), |o| (o.grace_ms, o.reason));
            let grace = options::millis("graceMs", grace)?.unwrap_or(DEFAULT_KILL_GRACE);
            tokio::spawn(async move {
                let reply = target.service.kill_noted(local, grace, reason).await;
                send_reply(
                    &out,
                    &id,
                    reply.map(|r| wire::kill_result(r, handle)).map_err(|e| wire::error(&e)),
                );
            });
            Ok(())
        }),
        "removeProcess" => handle_param(p)
            .and_then(|h| state.remove(h))
            .map(|()| Value::Null)
            .into(),
        "getEndedJobs" => {
            let ended = || -> Result<Value> {
                let handle = match p.get("handle") {
                    None | Some(Value::Null) => None,
                    Some(_) => Some(handle_param(p)?),
                };
                let limit = whole("limit", number_param(p, "limit")?, 1e9)?.map_or(usize::MAX, |v| v as usize);
                Ok(Value::Array(state.ended(&hosted.root, handle, limit)))
            };
            ended().into()
        }
        "getExecutionHistory" => {
            let history = || -> Result<Value> {
                let limit = whole("limit", number_param(p, "limit")?, 1e9)?.map(|v| v as usize);
                let entries = hosted.service.history(limit);
                Ok(Value::Array(
                    entries
                        .into_iter()
                        .map(|e| {
                            let handle = state.global(&hosted, e.handle, None);
                            wire::history_entry(e, handle)
                        })
                        .collect(),
                ))
            };
            history().into()
        }
        "clearExecutionHistory" => ok(json!(hosted.service.clear_history())),
        "shutdown" => {
            let kill_jobs = p.get("killJobs").and_then(Value::as_bool).unwrap_or(false);
            if !kill_jobs {
                return ok(Value::Null);
            }
            let out = conn.out.clone();
            let id = id.clone();
            let shutdown = hosted.service.clone().shutdown_owned();
            tokio::spawn(async move {
                shutdown.await;
                send_reply(&out, &id, Ok(Value::Null));
            });
            Now::Later
        }
        other => Result::<Value>::Err(ServiceError::invalid(format!("no method `{other}`"))).into(),
    }
}

/// A method that replies later: `work` checks and starts it (its error is the reply
/// now) and is given the reply's queue and id.
fn later(conn: &Conn, id: &Value, work: impl FnOnce(Arc<Outbox>, Value) -> Result<()>) -> Now {
    match work(conn.out.clone(), id.clone()) {
        Ok(()) => Now::Later,
        Err(e) => Now::Reply(Err(wire::error(&e))),
    }
}

fn open(conn: &mut Conn, p: &Value) -> Result<Value> {
    if conn.hosted.is_some() {
        return Err(ServiceError::invalid("this connection has opened its service already"));
    }
    let mut args: options::ServiceArgs = parse("options", p.clone())?;
    if args.project_root.is_none() {
        args.project_root = conn
            .daemon
            .default_project_root
            .as_ref()
            .map(|p| p.display().to_string());
    }
    // Every daemon job may be streamed by the network face's envd calls (Connect).
    let config = ServiceConfig {
        keep_streams: true,
        ..args.into_config()?
    };
    let service = Service::new(config, conn.daemon.jobs.clone())?;
    let hosted = conn.daemon.state.add_service(service, conn.id, p.clone());
    let s = &hosted.service;
    let reply = json!({
        "sessionId": s.session_id(),
        "outputDir": s.session_dir().display().to_string(),
        "projectRoot": s.project_root().display().to_string(),
        "containment": s.containment().as_str(),
    });
    conn.hosted = Some(hosted);
    Ok(reply)
}

/// `RunOptions.keep` (daemon only): `false` kills the job when this connection closes.
fn keep_option(p: &Value) -> Result<bool> {
    match p.get("options").and_then(|o| o.get("keep")) {
        None | Some(Value::Null) => Ok(true),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(ServiceError::invalid(format!(
            "keep must be a boolean, got {}",
            kind(other)
        ))),
    }
}

fn run(conn: &Conn, hosted: Arc<Hosted>, id: &Value, p: &Value) -> Now {
    let prepared = || -> Result<_> {
        let keep = keep_option(p)?;
        let req = options::run_request(string_param(p, "command")?, options(p, "options")?)?;
        Ok((keep, req))
    };
    let (keep, req) = match prepared() {
        Ok(v) => v,
        Err(e) => return Now::Reply(Err(wire::error(&e))),
    };
    // Started here, in request order: a `shutdown` sent after this ends its job. The job
    // gets its daemon handle as it starts, with its `keep`, so a job list or this
    // connection's end meanwhile treats it as it treats a started one.
    let (daemon, target) = (conn.daemon.clone(), hosted.clone());
    let started: Box<dyn FnOnce(u32) + Send> = Box::new(move |local| {
        daemon.state.global(&target, local, Some(keep));
        // The connection went before the handle was known (`state::disconnected`
        // reads the entries and clears `conn` under one lock): its end did not see it.
        if !keep && lock(&target.conn).is_none() {
            let service = target.service.clone();
            tokio::spawn(async move {
                let _ = service.kill(local, DEFAULT_KILL_GRACE).await;
            });
        }
    });
    let (out, id, daemon) = (conn.out.clone(), id.clone(), conn.daemon.clone());
    // The job starts now, on this thread (the launch is work, not a wake-up:
    // src/daemon/latency.rs); its reply is made by whichever thread ends the wait (the
    // job's reader, a `jobs` thread, at the exit), with no task of the daemon's own in
    // between: a task spawned on the jobs' runtime here woke a `jobs` thread to poll
    // it once and park it, one more wake-up per `run` on a busy machine than in
    // process, where the binding calls the same `run_then` (docs/daemon.md, "Round trips").
    let _launching = super::latency::long_turn();
    hosted.service.clone().run_then_reporting(
        req,
        Some(started),
        Box::new(move |result| {
            // A program that could not start has a handle only in its result.
            let reply = result.map(|r| {
                let handle = daemon.state.global(&hosted, r.handle, Some(keep));
                wire::run_result(r, handle)
            });
            send_reply(&out, &id, reply.map_err(|e| wire::error(&e)));
        }),
    );
    Now::Later
}

fn start(conn: &Conn, hosted: &Arc<Hosted>, p: &Value) -> Now {
    let state = &conn.daemon.state;
    let launched = || -> Result<(bool, Launched)> {
        let keep = keep_option(p)?;
        let req = options::run_request(string_param(p, "command")?, options(p, "options")?)?;
        // The launch is work, not a wake-up: src/daemon/latency.rs.
        let _launching = super::latency::long_turn();
        Ok((keep, hosted.service.launch(req)?))
    };
    match launched() {
        Ok((keep, Launched::Running { handle, pid })) => {
            let handle = state.global(hosted, handle, Some(keep));
            ok(json!({ "handle": handle, "pid": pid }))
        }
        Ok((keep, Launched::Failed(failed))) => {
            let handle = state.global(hosted, failed.handle, Some(keep));
            let e = ServiceError::new(ErrorCode::SpawnFailed, failed.error.clone().unwrap_or_default());
            let mut error = wire::error(&e);
            error["result"] = wire::run_result(*failed, handle);
            Now::Reply(Err(error))
        }
        Err(e) => Now::Reply(Err(wire::error(&e))),
    }
}

/// Every job of every service of this project root, whoever started it.
fn active_processes(conn: &Conn, hosted: &Arc<Hosted>) -> Value {
    let state = &conn.daemon.state;
    let mut all = Vec::new();
    for other in state.services_of(&hosted.root) {
        let attached = match *lock(&other.conn) {
            Some(c) if c == conn.id => "this",
            Some(_) => "other",
            None => "none",
        };
        for info in other.service.list() {
            let handle = state.global(&other, info.handle, None);
            all.push((handle, wire::process_info(info, handle, attached)));
        }
    }
    all.sort_by_key(|(h, _)| *h);
    Value::Array(all.into_iter().map(|(_, v)| v).collect())
}

fn subscribe(conn: &mut Conn, p: &Value) -> Result<Value> {
    let handle = handle_param(p)?;
    let (target, local) = conn.daemon.state.resolve(handle)?;
    let sub = conn.next_sub;
    conn.next_sub = conn.next_sub.wrapping_add(1).max(1);
    let events = conn.events.clone();
    // Coalesced by the core: at most one wake-up queued per subscription.
    let subscription = target.service.subscribe(
        local,
        Box::new(move || {
            let _ = events.send(sub);
        }),
    )?;
    lock(&conn.subs).insert(sub, (subscription, handle));
    Ok(json!({ "sub": sub }))
}

fn check_command(p: &Value) -> Result<Value> {
    let command = string_param(p, "command")?;
    let policy: Option<PolicyArgs> = options(p, "policy")?;
    let policy = policy.map_or_else(crate::policy::CommandPolicy::default, |p| {
        crate::policy::CommandPolicy {
            exclude_tools: p.exclude_tools.unwrap_or_default(),
            core_tools: p.core_tools.unwrap_or_default(),
            session_approvals: p.session_approvals.unwrap_or_default(),
        }
    });
    crate::policy::check_command(&command, &policy)
        .map(wire::command_check)
        .map_err(|e| ServiceError::invalid(e.to_string()))
}

/// The connection closed (any way, its client killed included): its `keep: false`
/// jobs are killed, the rest run on with nobody attached.
pub fn closed(conn: &Conn) {
    let unkept = conn.daemon.state.disconnected(conn.hosted.as_ref());
    let Some(hosted) = conn.hosted.clone() else { return };
    if conn.daemon.restarting.load(std::sync::atomic::Ordering::SeqCst) {
        // Closed by a restart in place, which carries these jobs running.
        return;
    }
    for local in unkept {
        let service = hosted.service.clone();
        tokio::spawn(async move {
            let _ = service.kill(local, DEFAULT_KILL_GRACE).await;
        });
    }
}
