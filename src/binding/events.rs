//! `onOutput` and `readOutput`: output as events and offsets instead of polling.
//!
//! A notification crosses to the JS thread through a `ThreadsafeFunction`. It keeps
//! Node alive, as a stream's `data` listener does, until the exit has been delivered or
//! the listener unsubscribed: then the core drops it (`events::Subscription::detach`). The function it calls is a native no-op: the real work —
//! taking the event from the core's subscription and calling the listener — happens in
//! the call-back that runs just before it, on the JS thread. That lets a delivery with
//! nothing to report (the subscription ended meanwhile) call nobody, and lets a
//! listener that throws be contained here: napi-rs would otherwise hand the exception
//! to `napi_fatal_exception`, which ends the process.

use std::sync::{Arc, OnceLock};

use napi::bindgen_prelude::{Function, JsObjectValue, Object};
use napi::threadsafe_function::{ThreadsafeCallContext, ThreadsafeFunctionCallMode};
use napi::Env;
use napi_derive::napi;

use super::errors::js_error;
use super::object_arg::ObjectArg;
use super::types::{handle_arg, JobStatus};
use native_shell_service::base::error::{self as core_error, ServiceError};
use native_shell_service::job::events::{self as core_events, Notify, Subscription};
use native_shell_service::output::read::OutputChunk as CoreOutputChunk;
use native_shell_service::service::Service;

/// What an `onOutput` listener is called with: the job's output position now.
#[napi(object, use_nullable = true)]
pub struct OutputEvent {
    pub handle: u32,
    /// Bytes the process has written so far (all streams).
    pub total_bytes: f64,
    /// Bytes of committed text so far: `readOutput({ since })` reads up to here.
    pub text_length: f64,
    /// The job has ended; this is the last call.
    pub exited: bool,
    pub status: JobStatus,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
}

impl From<core_events::OutputEvent> for OutputEvent {
    fn from(e: core_events::OutputEvent) -> Self {
        Self {
            handle: e.handle,
            total_bytes: e.total_bytes as f64,
            text_length: e.text_length as f64,
            exited: e.exited,
            status: e.status.into(),
            exit_code: e.exit_code,
            signal: e.signal,
        }
    }
}

#[napi(object)]
pub struct ReadOutputOptions {
    /// Byte offset into the committed text (a `next` or `textLength` seen before); 0 by
    /// default. An offset inside a character is refused (`INVALID_ARGUMENT`).
    pub since: Option<f64>,
    /// At most this many bytes (1 MiB by default, 16 MiB at most).
    pub max_bytes: Option<f64>,
}

#[napi(object)]
pub struct OutputChunk {
    pub text: String,
    /// Pass as `since` to read on.
    pub next: f64,
    /// Bytes between `since` and `next` that neither memory nor the output file still holds.
    pub omitted: f64,
}

impl From<CoreOutputChunk> for OutputChunk {
    fn from(c: CoreOutputChunk) -> Self {
        Self {
            text: c.text,
            next: c.next as f64,
            omitted: c.omitted as f64,
        }
    }
}

/// `onOutput`: subscribes `listener` to the job's output events (see the module doc).
pub fn on_output<'env>(
    service: &Service,
    env: &'env Env,
    handle: f64,
    listener: Function<'env, OutputEvent, ()>,
) -> napi::Result<Function<'env, (), ()>> {
    let handle = handle_arg(handle).map_err(|e| js_error(env, &e))?;
    // A non-function passes napi's conversion and fails here.
    let listener = listener
        .create_ref()
        .map_err(|_| js_error(env, &ServiceError::invalid("listener must be a function")))?;
    let subscription: Arc<OnceLock<Arc<Subscription>>> = Arc::new(OnceLock::new());
    let delivered_to = subscription.clone();
    let dispatch = env.create_function_from_closure::<(), (), _>("onOutputDelivery", |_| Ok(()))?;
    let tsfn = dispatch
        .build_threadsafe_function::<()>()
        .weak::<false>()
        .callee_handled::<false>()
        .build_callback(move |ctx: ThreadsafeCallContext<()>| {
            let event = delivered_to.get().and_then(|s| s.take_event());
            if let Some(event) = event {
                let called = listener
                    .borrow_back(&ctx.env)
                    .and_then(|f| f.call(OutputEvent::from(event)));
                if let Err(error) = called {
                    warn(&ctx.env, &format!("an onOutput listener threw: {}", error.reason));
                }
            }
            Ok(())
        })?;
    let notify: Notify = Box::new(move || {
        let _ = tsfn.call((), ThreadsafeFunctionCallMode::NonBlocking);
    });
    let attached = service.subscribe(handle, notify).map_err(|e| js_error(env, &e))?;
    // Set before any delivery can run: deliveries run on this thread, after this call.
    let _ = subscription.set(attached.clone());
    env.create_function_from_closure("unsubscribe", move |_| {
        attached.cancel();
        Ok(())
    })
}

/// `readOutput`: committed text from `since` (see `native_shell_service::output::read`).
pub fn read_output(
    service: &Service,
    handle: f64,
    options: Option<ObjectArg<ReadOutputOptions>>,
) -> core_error::Result<OutputChunk> {
    let (since, max) = match ObjectArg::open(options)? {
        Some(o) => (o.since, o.max_bytes),
        None => (None, None),
    };
    let (since, max) = native_shell_service::service::options::read_args(since, max)?;
    let handle = handle_arg(handle)?;
    service.read_output(handle, since, max).map(OutputChunk::from)
}

/// `process.emitWarning(message)`, best effort: a warning that cannot be shown must not
/// become a second failure.
fn warn(env: &Env, message: &str) {
    let emit = || -> napi::Result<()> {
        let process: Object = env.get_global()?.get_named_property("process")?;
        let emit_warning: Function<'_, String, ()> = process.get_named_property("emitWarning")?;
        emit_warning.apply(process, message.to_string())?;
        Ok(())
    };
    let _ = emit();
}
