//! `ShellExecutionService`, the JS class: argument conversion around `native_shell_service::service`.

use std::sync::Arc;

use napi::bindgen_prelude::{Buffer, Either, Function, PromiseRaw};
use napi::Env;
use napi_derive::napi;

use super::errors::{js_error, js_error_with_result, Settled};
use super::events::{self, OutputChunk, OutputEvent, ReadOutputOptions};
use super::object_arg::ObjectArg;
use super::owner::environment_owner;
use super::reply::Reply;
use super::screen::{self, PackedScreen, Screen, ScreenOptions};
use super::settle::Settler;
use super::types::*;
use native_shell_service::base::error::{self as core_error, ErrorCode, ServiceError};
use native_shell_service::service::request::{Launched, DEFAULT_KILL_GRACE};
use native_shell_service::service::Service;

// Owns its service; every promise's work owns a clone of it (see `owner.rs`).
#[napi(js_name = "ShellExecutionService")]
pub struct JsShellExecutionService {
    inner: Arc<Service>,
    /// Settles every promise of this service (see `settle.rs`).
    replies: Settler<Reply>,
}

#[napi]
impl JsShellExecutionService {
    #[napi(constructor, catch_unwind)]
    pub fn new(
        env: Env,
        #[napi(ts_arg_type = "ServiceOptions | undefined | null")] options: Option<ObjectArg<ServiceOptions>>,
    ) -> napi::Result<Self> {
        let owner = environment_owner(&env)?;
        let create = || -> core_error::Result<Service> {
            let config = match ObjectArg::open(options)? {
                Some(o) => o.into_config()?,
                None => Default::default(),
            };
            let runtime = napi::bindgen_prelude::within_runtime_if_available(tokio::runtime::Handle::try_current)
                .map_err(|e| ServiceError::invalid(format!("no async runtime: {e}")))?;
            Service::new(config, runtime)
        };
        match create() {
            Ok(service) => {
                service.join(&owner);
                Ok(Self {
                    inner: Arc::new(service),
                    replies: Settler::new(&env, "settleReply")?,
                })
            }
            Err(e) => Err(js_error(&env, &e)),
        }
    }

    /// The session's output directory (`<ioDir>/<sessionId>`).
    #[napi(getter)]
    pub fn output_dir(&self) -> String {
        self.inner.session_dir().display().to_string()
    }

    /// The canonical project root every `directory` is relative to.
    #[napi(getter)]
    pub fn project_root(&self) -> String {
        self.inner.project_root().display().to_string()
    }

    /// What holds each new job's processes together here: `'cgroup'`, `'process-tree'`
    /// (no cgroup could be had: docs/reliability.md says which escapes that lets
    /// through) or `'job-object'` (Windows). Finding a cgroup is done once per process,
    /// on first use: this getter may do it.
    #[napi(getter)]
    pub fn containment(&self) -> ContainmentMode {
        self.inner.containment().into()
    }

    #[napi(getter)]
    pub fn session_id(&self) -> String {
        self.inner.session_id().to_string()
    }

    #[napi(ts_return_type = "Promise<RunResult>")]
    pub fn run<'env>(
        &self,
        env: &'env Env,
        command: String,
        #[napi(ts_arg_type = "RunOptions | undefined | null")] options: Option<ObjectArg<RunOptions>>,
    ) -> napi::Result<PromiseRaw<'env, RunResult>> {
        // Started here, on the JS thread (`Service::run_then`): the program runs before
        // the promise is made, a `shutdown` called after this ends its job, and the
        // reader that ends the wait settles the promise.
        let (promise, pending) = self.replies.promise(env)?;
        match run_request(command, options) {
            Ok(req) => self.inner.clone().run_then(
                req,
                Box::new(move |result| pending.settle(result.map(|r| Reply::Run(Box::new(RunResult::from(r)))).into())),
            ),
            Err(e) => pending.settle(Settled::Err(e)),
        }
        Ok(PromiseRaw::new(env.raw(), promise))
    }

    /// Starts a job and returns at once with `{ handle, pid }`; a program that
    /// cannot be started throws `SPAWN_FAILED`, whose `result` is the `RunResult` `run`
    /// would have returned (status `failed`). Callback options do not apply: wait
    /// with `waitFor(handle, { pattern, fromStart: true })`. `timeoutMs` does: the job
    /// is killed when it runs that long (status `timed_out`).
    #[napi(ts_return_type = "StartedJob", catch_unwind)]
    pub fn start(
        &self,
        env: &Env,
        command: String,
        #[napi(ts_arg_type = "RunOptions | undefined | null")] options: Option<ObjectArg<RunOptions>>,
    ) -> napi::Result<StartedJob> {
        match run_request(command, options).and_then(|req| self.inner.launch(req)) {
            Ok(Launched::Running { handle, pid }) => Ok(StartedJob { handle, pid }),
            Ok(Launched::Failed(failed)) => {
                let error = ServiceError::new(ErrorCode::SpawnFailed, failed.error.clone().unwrap_or_default());
                Err(js_error_with_result(env, &error, RunResult::from(*failed)))
            }
            Err(e) => Err(js_error(env, &e)),
        }
    }

    /// The job is found and the request checked (and, when the job's turn is free, the
    /// input written) on this (the JS) thread; the wait runs on the reactor.
    #[napi(ts_return_type = "Promise<InteractionResult>")]
    pub fn send_input<'env>(
        &self,
        env: &'env Env,
        handle: f64,
        input: String,
        #[napi(ts_arg_type = "SendInputOptions | undefined | null")] options: Option<ObjectArg<SendInputOptions>>,
    ) -> napi::Result<PromiseRaw<'env, InteractionResult>> {
        // Prepared first: the program gets its input before the promise is made.
        let prepared = input_request(input, options).and_then(|req| self.inner.prepare_input(handle_arg(handle)?, req));
        let (promise, pending) = self.replies.promise(env)?;
        match prepared {
            Ok(prepared) => self.inner.finish_input(
                prepared,
                Box::new(move |result| pending.settle(result.map(|r| Reply::Interaction(r.into())).into())),
            ),
            Err(e) => pending.settle(Settled::Err(e)),
        }
        Ok(PromiseRaw::new(env.raw(), promise))
    }

    /// The wait's cursor is taken on this (the JS) thread, so a `writeToPty` made right
    /// after this call cannot be answered before the wait begins.
    #[napi(ts_return_type = "Promise<InteractionResult>")]
    pub fn wait_for<'env>(
        &self,
        env: &'env Env,
        handle: f64,
        #[napi(ts_arg_type = "WaitOptions | undefined | null")] options: Option<ObjectArg<WaitOptions>>,
    ) -> napi::Result<PromiseRaw<'env, InteractionResult>> {
        let (promise, pending) = self.replies.promise(env)?;
        match wait_args(options).and_then(|args| self.inner.prepare_wait(handle_arg(handle)?, args.request())) {
            Ok(prepared) => {
                prepared.finish_with(Box::new(move |result| {
                    pending.settle(Settled::Ok(Reply::Interaction(result.into())))
                }));
            }
            Err(e) => pending.settle(Settled::Err(e)),
        }
        Ok(PromiseRaw::new(env.raw(), promise))
    }

    #[napi(ts_return_type = "void", catch_unwind)]
    pub fn write_to_pty(&self, handle: f64, data: Either<String, Buffer>) -> Settled<()> {
        let bytes = match data {
            Either::A(s) => s.into_bytes(),
            Either::B(b) => b.to_vec(),
        };
        handle_arg(handle).and_then(|h| self.inner.write_input(h, bytes)).into()
    }

    /// The job's `RunResult` as of now — what `run` would return at this moment.
    #[napi(ts_return_type = "RunResult", catch_unwind)]
    pub fn get_result(
        &self,
        handle: f64,
        #[napi(ts_arg_type = "ResultOptions | undefined | null")] options: Option<ObjectArg<ResultOptions>>,
    ) -> Settled<RunResult> {
        let result = || -> core_error::Result<RunResult> {
            let max = max_output(ObjectArg::open(options)?.and_then(|o| o.max_output_size))?;
            self.inner.result(handle_arg(handle)?, max).map(RunResult::from)
        };
        result().into()
    }

    #[napi(catch_unwind)]
    pub fn is_pty_active(&self, handle: f64) -> bool {
        handle_arg(handle).map(|h| self.inner.is_active(h)).unwrap_or(false)
    }

    #[napi(catch_unwind)]
    pub fn get_active_processes(&self) -> Vec<ProcessInfo> {
        self.inner.list().into_iter().map(ProcessInfo::from).collect()
    }

    #[napi(ts_return_type = "string", catch_unwind)]
    pub fn get_process_output(
        &self,
        handle: f64,
        #[napi(ts_arg_type = "OutputOptions | undefined | null")] options: Option<ObjectArg<OutputOptions>>,
    ) -> Settled<String> {
        let get = || -> core_error::Result<String> {
            let (view, tail) = match ObjectArg::open(options)? {
                Some(o) => (o.view, o.tail_bytes),
                None => (None, None),
            };
            let view = native_shell_service::service::options::view_arg(view.as_deref())?;
            let tail = whole("tailBytes", tail, 1e12)?.map(|v| v as usize);
            self.inner.output(handle_arg(handle)?, view, tail)
        };
        get().into()
    }

    /// Calls `listener` when the job has new output (coalesced: at most one call is
    /// queued per subscription, however much arrives) and once more at its exit
    /// (`exited: true`, the last call). Returns the function that stops the calls. A
    /// listener that throws is reported with `process.emitWarning`; the calls go on.
    /// Until then the subscription keeps Node alive, like a stream's `data` listener.
    #[napi(
        ts_args_type = "handle: number, listener: (event: OutputEvent) => void",
        ts_return_type = "() => void"
    )]
    pub fn on_output<'env>(
        &self,
        env: &'env Env,
        handle: f64,
        listener: Function<'env, OutputEvent, ()>,
    ) -> napi::Result<Function<'env, (), ()>> {
        events::on_output(&self.inner, env, handle, listener)
    }

    /// Committed text from byte `since` on: `{ text, next, omitted }`. A reader that
    /// passes back `next` reads every line once; the middle that left memory comes back
    /// from the job's output file, and only what is in neither is counted in `omitted`.
    #[napi(ts_return_type = "OutputChunk", catch_unwind)]
    pub fn read_output(
        &self,
        handle: f64,
        #[napi(ts_arg_type = "ReadOutputOptions | undefined | null")] options: Option<ObjectArg<ReadOutputOptions>>,
    ) -> Settled<OutputChunk> {
        events::read_output(&self.inner, handle, options).into()
    }

    /// The emulated terminal of a PTY job as cells: `{ cols, rows, cursor, alternateScreen,
    /// lines }`, each line its runs of equal attributes (text, colours, bold, italic,
    /// underline, dim, inverse); `scrollback` lines above the screen come first. A pipes
    /// job has no screen: `INVALID_ARGUMENT`.
    #[napi(ts_return_type = "Screen", catch_unwind)]
    pub fn get_screen(
        &self,
        handle: f64,
        #[napi(ts_arg_type = "ScreenOptions | undefined | null")] options: Option<ObjectArg<ScreenOptions>>,
    ) -> Settled<Screen> {
        handle_arg(handle)
            .and_then(|h| screen::get_screen(&self.inner, h, options))
            .into()
    }

    /// `getScreen` packed: the same lines as one string of all the runs' text and typed
    /// arrays of their lengths (UTF-16 units), attributes and colours (indices into
    /// `colors`), and each line's count of runs. Much cheaper to return than one object
    /// per run; for a client that reads many lines per call (the drop-in's renders).
    #[napi(ts_return_type = "PackedScreen", catch_unwind)]
    pub fn get_screen_packed(
        &self,
        handle: f64,
        #[napi(ts_arg_type = "ScreenOptions | undefined | null")] options: Option<ObjectArg<ScreenOptions>>,
    ) -> Settled<PackedScreen> {
        handle_arg(handle)
            .and_then(|h| screen::get_screen_packed(&self.inner, h, options))
            .into()
    }

    #[napi(ts_return_type = "void", catch_unwind)]
    pub fn resize_pty(&self, handle: f64, cols: f64, rows: f64) -> Settled<()> {
        let resize = || -> core_error::Result<()> {
            let cols = whole("cols", Some(cols), f64::from(u16::MAX))?.unwrap_or(0) as u16;
            let rows = whole("rows", Some(rows), f64::from(u16::MAX))?.unwrap_or(0) as u16;
            self.inner.resize(handle_arg(handle)?, cols, rows)
        };
        resize().into()
    }

    #[napi(ts_return_type = "Promise<KillResult>")]
    pub fn kill<'env>(
        &self,
        env: &'env Env,
        handle: f64,
        #[napi(ts_arg_type = "KillOptions | undefined | null")] options: Option<ObjectArg<KillOptions>>,
    ) -> napi::Result<PromiseRaw<'env, KillResult>> {
        let args = ObjectArg::open(options).and_then(|o| {
            let (grace, reason) = o.map_or((None, None), |o| (o.grace_ms, o.reason));
            let grace = millis("graceMs", grace)?.unwrap_or(DEFAULT_KILL_GRACE);
            Ok((handle_arg(handle)?, grace, reason))
        });
        self.settle_later(env, |service: Arc<Service>| async move {
            let (handle, grace, reason) = args?;
            let report = service.kill_noted(handle, grace, reason).await?;
            Ok(Reply::Kill(KillResult::from_report(handle, report)))
        })
    }

    /// `getScreenPacked` read off the JS thread: the screen's pending output is
    /// emulated and its cells read on a worker, so a client that renders while the job
    /// floods (the drop-in) does not wait for either on the event loop. Settles with
    /// the screen as it was when the worker read it.
    #[napi(ts_return_type = "Promise<PackedScreen>")]
    pub fn read_screen_packed<'env>(
        &self,
        env: &'env Env,
        handle: f64,
        #[napi(ts_arg_type = "ScreenOptions | undefined | null")] options: Option<ObjectArg<ScreenOptions>>,
    ) -> napi::Result<PromiseRaw<'env, PackedScreen>> {
        let args = screen::screen_args(handle, options);
        self.settle_later(env, |service: Arc<Service>| async move {
            let (handle, scrollback) = args?;
            let cells = tokio::task::spawn_blocking(move || service.screen(handle, scrollback))
                .await
                // The worker is cancelled only when the runtime shuts down with the service:
                // its jobs are gone then.
                .map_err(|e| {
                    ServiceError::new(
                        ErrorCode::ProcessNotFound,
                        format!("the screen read was cancelled: {e}"),
                    )
                })??;
            Ok(Reply::Screen(Box::new(cells)))
        })
    }

    #[napi(ts_return_type = "void", catch_unwind)]
    pub fn remove_process(&self, handle: f64) -> Settled<()> {
        handle_arg(handle).and_then(|h| self.inner.remove(h)).into()
    }

    #[napi(ts_return_type = "Array<HistoryEntry>", catch_unwind)]
    pub fn get_execution_history(&self, limit: Option<f64>) -> Settled<Vec<HistoryEntry>> {
        let limit = whole("limit", limit, 1e9).map(|l| l.map(|v| v as usize));
        limit
            .map(|l| self.inner.history(l).into_iter().map(HistoryEntry::from).collect())
            .into()
    }

    #[napi(catch_unwind)]
    pub fn clear_execution_history(&self) -> u32 {
        self.inner.clear_history() as u32
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn shutdown<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let shutdown = self.inner.clone().shutdown_owned();
        self.settle_later(env, |_| async move {
            shutdown.await;
            Ok(Reply::Done)
        })
    }
}

impl JsShellExecutionService {
    /// A promise settled by `work`, which runs on the service's runtime and owns its
    /// service: never a borrow of this object, which a worker's teardown frees
    /// whatever is pending (see `owner.rs`).
    fn settle_later<'env, T, F, W>(&self, env: &'env Env, work: F) -> napi::Result<PromiseRaw<'env, T>>
    where
        F: FnOnce(Arc<Service>) -> W,
        W: std::future::Future<Output = core_error::Result<Reply>> + Send + 'static,
    {
        let (promise, pending) = self.replies.promise(env)?;
        let work = work(self.inner.clone());
        self.inner.spawn(async move {
            let reply = work.await;
            pending.settle(reply.into());
        });
        Ok(PromiseRaw::new(env.raw(), promise))
    }
}
