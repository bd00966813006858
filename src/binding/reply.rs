//! What a service's promises settle with: one type, so one `Settler` (one threadsafe
//! function, `settle.rs`) serves every promise of a service.

use napi::bindgen_prelude::ToNapiValue;
use napi::sys;

use super::js_shape::Shape;
use super::screen::PackedScreen;
use super::types::{InteractionResult, KillResult, RunResult};
use native_shell_service::output::cells::ScreenCells;

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

/// `run`'s result through a shape (src/binding/js_shape.rs): the object napi-rs makes
/// for `RunResult`, made faster. Each field and its JS name are listed once, in the
/// struct's order (napi-rs's, which `__test__/spawn-fast-paths.test.ts` compares key by
/// key); a field added to `RunResult` and not listed here is not converted, which the
/// test finds.
macro_rules! run_result {
    ($($field:ident: $name:literal),* $(,)?) => {
        static RUN_RESULT: Shape = Shape::new(&[$($name),*]);

        /// # Safety
        /// On the JS thread of the live `env`.
        unsafe fn run_result(env: sys::napi_env, r: RunResult) -> napi::Result<sys::napi_value> {
            // SAFETY: as this function's contract says; each value is made in `env`.
            unsafe {
                let values = [$(ToNapiValue::to_napi_value(env, r.$field)?),*];
                RUN_RESULT.build(env, &values)
            }
        }
    };
}

run_result! {
    handle: "handle",
    pid: "pid",
    command: "command",
    directory: "directory",
    status: "status",
    stdout: "stdout",
    stderr: "stderr",
    output: "output",
    exit_code: "exitCode",
    signal: "signal",
    error: "error",
    background_pids: "backgroundPids",
    matched: "matched",
    truncated: "truncated",
    total_bytes: "totalBytes",
    output_dir: "outputDir",
    persist_error: "persistError",
    started_at: "startedAt",
    duration_ms: "durationMs",
    awaiting_input: "awaitingInput",
    sandbox: "sandbox",
}
