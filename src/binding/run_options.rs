//! `run`'s and `start`'s options, read through a reader shape (`js_shape.rs`): one
//! call of a JS function for the 17 options instead of 17 named-property lookups, most
//! of them misses. Each value is then converted as napi-rs converts an
//! `#[napi(object)]` field (`undefined` is absent; errors name the field), so what a
//! caller sees is the same.

use napi::bindgen_prelude::{from_raw_optional_field, FromNapiValue};
use napi::{sys, ValueType};

use super::js_shape::Shape;
use super::types::RunOptions;

static RUN_OPTIONS: Shape = Shape::reader(&[
    "directory",
    "description",
    "args",
    "mode",
    "shell",
    "cols",
    "rows",
    "scrollback",
    "env",
    "clearEnv",
    "timeoutMs",
    "callbackDelayMs",
    "callbackPattern",
    "maxOutputSize",
    "detectInput",
    "sandbox",
    "keep",
]);

impl FromNapiValue for RunOptions {
    unsafe fn from_napi_value(env: sys::napi_env, object: sys::napi_value) -> napi::Result<Self> {
        // SAFETY: napi-rs calls this on the JS thread with a value of `env`.
        let values = unsafe { RUN_OPTIONS.read(env, object) }?;
        let mut values = values.into_iter();
        let mut next = || values.next().unwrap_or(std::ptr::null_mut());
        // SAFETY: each value was just read from `object` in `env`, on its thread.
        unsafe {
            Ok(Self {
                directory: field(env, next(), "directory")?,
                description: field(env, next(), "description")?,
                args: field(env, next(), "args")?,
                mode: field(env, next(), "mode")?,
                shell: field(env, next(), "shell")?,
                cols: field(env, next(), "cols")?,
                rows: field(env, next(), "rows")?,
                scrollback: field(env, next(), "scrollback")?,
                env: field(env, next(), "env")?,
                clear_env: field(env, next(), "clearEnv")?,
                timeout_ms: field(env, next(), "timeoutMs")?,
                callback_delay_ms: field(env, next(), "callbackDelayMs")?,
                callback_pattern: field(env, next(), "callbackPattern")?,
                max_output_size: field(env, next(), "maxOutputSize")?,
                detect_input: field(env, next(), "detectInput")?,
                sandbox: field(env, next(), "sandbox")?,
                keep: field(env, next(), "keep")?,
            })
        }
    }
}

/// One option: `None` when `undefined`, else converted as napi-rs converts the field
/// (`null` is `None` too, and a wrong type is an error naming `RunOptions.<name>`).
///
/// # Safety
/// `raw` is a value of `env` (or null: absent), on its JS thread.
unsafe fn field<T: FromNapiValue>(env: sys::napi_env, raw: sys::napi_value, name: &str) -> napi::Result<Option<T>> {
    if raw.is_null() {
        return Ok(None);
    }
    let mut kind = 0;
    // SAFETY: as this function's contract says; an out-pointer to a local.
    napi::check_status!(unsafe { sys::napi_typeof(env, raw, &mut kind) })?;
    if ValueType::from(kind) == ValueType::Undefined {
        return Ok(None);
    }
    // SAFETY: as above.
    unsafe { from_raw_optional_field(env, Some(raw), "RunOptions", name) }
}
