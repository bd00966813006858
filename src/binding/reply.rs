//! What a service's promises settle with: one type, so one `Settler` (one threadsafe
//! function, `settle.rs`) serves every promise of a service.

use napi::bindgen_prelude::ToNapiValue;
use napi::sys;

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
                Reply::Run(r) => RunResult::to_napi_value(env, *r),
                Reply::Interaction(r) => InteractionResult::to_napi_value(env, r),
                Reply::Kill(r) => KillResult::to_napi_value(env, r),
                Reply::Screen(c) => PackedScreen::to_napi_value(env, PackedScreen::from(*c)),
                Reply::Done => <()>::to_napi_value(env, ()),
            }
        }
    }
}
