//! What a service's promises settle with: one type, so one `Settler` (one threadsafe
//! function, `settle.rs`) serves every promise of a service.

use napi::bindgen_prelude::ToNapiValue;
use napi::sys;

use super::js_shape::Shape;
use super::screen::PackedScreen;
use super::types::{InteractionResult, KillResult, RunResult};
use crate::output::cells::ScreenCells;

pub enum Reply {
    Run(Box<RunResult>),
    Interaction(InteractionResult),
    Kill(KillResult),
    /// `readScreenPacked`: the cells, read off the JS thread, packed on it.
    Screen(Box<ScreenCells>),
    /// `undefined` (`shutdown`).
    Done,
}

impl ToNapiValue for Reply {
    unsafe fn to_napi_value(env: sys::napi_env, reply: Self) -> napi::Result<sys::napi_value> {
        // SAFETY: called by the settler on the JS thread with its live environment.
        unsafe {
            match reply {
                Reply::Run(r) => run_result(env, *r),
                Reply::Interaction(r) => InteractionResult::to_napi_value(env, r),
                Reply::Kill(r) => KillResult::to_napi_value(env, r),
                Reply::Screen(c) => PackedScreen::to_napi_value(env, PackedScreen::from(*c)),
                Reply::Done => <()>::to_napi_value(env, ()),
            }
        }
    }
}

/// `RunResult`'s keys, in its fields' order: the object napi-rs would make.
static RUN_RESULT: Shape = Shape::new(&[
    "handle",
    "pid",
    "command",
    "directory",
    "status",
    "stdout",
    "stderr",
    "output",
    "exitCode",
    "signal",
    "error",
    "backgroundPids",
    "matched",
    "truncated",
    "totalBytes",
    "outputDir",
    "persistError",
    "startedAt",
    "durationMs",
    "awaitingInput",
    "sandbox",
]);

/// `run`'s result through its shape (src/binding/js_shape.rs): the object napi-rs
/// makes, made faster.
///
/// # Safety
/// On the JS thread of the live `env`.
unsafe fn run_result(env: sys::napi_env, r: RunResult) -> napi::Result<sys::napi_value> {
    // SAFETY: as this function's contract says; each value is made in `env`.
    unsafe {
        let values = [
            ToNapiValue::to_napi_value(env, r.handle)?,
            ToNapiValue::to_napi_value(env, r.pid)?,
            ToNapiValue::to_napi_value(env, &r.command)?,
            ToNapiValue::to_napi_value(env, &r.directory)?,
            ToNapiValue::to_napi_value(env, r.status)?,
            ToNapiValue::to_napi_value(env, &r.stdout)?,
            ToNapiValue::to_napi_value(env, &r.stderr)?,
            ToNapiValue::to_napi_value(env, &r.output)?,
            ToNapiValue::to_napi_value(env, r.exit_code)?,
            ToNapiValue::to_napi_value(env, r.signal)?,
            ToNapiValue::to_napi_value(env, r.error.as_ref())?,
            ToNapiValue::to_napi_value(env, &r.background_pids)?,
            ToNapiValue::to_napi_value(env, r.matched.as_ref())?,
            ToNapiValue::to_napi_value(env, r.truncated)?,
            ToNapiValue::to_napi_value(env, r.total_bytes)?,
            ToNapiValue::to_napi_value(env, r.output_dir.as_ref())?,
            ToNapiValue::to_napi_value(env, r.persist_error.as_ref())?,
            ToNapiValue::to_napi_value(env, r.started_at)?,
            ToNapiValue::to_napi_value(env, r.duration_ms)?,
            ToNapiValue::to_napi_value(env, r.awaiting_input)?,
            ToNapiValue::to_napi_value(env, r.sandbox)?,
        ];
        RUN_RESULT.build(env, &values)
    }
}
