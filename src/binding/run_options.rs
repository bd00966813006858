//! `run`'s and `start`'s options, read through a reader shape (`js_shape.rs`): one
//! call of a JS function for the 17 options instead of 17 named-property lookups, most
//! of them misses. Each value is then converted as napi-rs converts an
//! `#[napi(object)]` field (`undefined` is absent; errors name the field), so what a
//! caller sees is the same (`__test__/spawn-fast-paths.test.ts`).

use napi::bindgen_prelude::{from_raw_optional_field, FromNapiValue};
use napi::{sys, ValueType};

use super::js_shape::Shape;
use super::types::RunOptions;

/// Each option once: its field and its JS name, in the order the shape reads them. A
/// field added to `RunOptions` and not here fails to compile (the struct is built
/// whole).
macro_rules! run_options {
    ($($field:ident: $name:literal),* $(,)?) => {
        static RUN_OPTIONS: Shape = Shape::reader(&[$($name),*]);

        impl FromNapiValue for RunOptions {
            unsafe fn from_napi_value(env: sys::napi_env, object: sys::napi_value) -> napi::Result<Self> {
                // SAFETY: napi-rs calls this on the JS thread with a value of `env`.
                let mut values = unsafe { RUN_OPTIONS.read(env, object) }?.into_iter();
                // SAFETY: each value was just read from `object` in `env`, on its thread;
                // the shape gives one per key.
                unsafe {
                    Ok(Self {
                        $($field: field(env, values.next(), $name)?,)*
                    })
                }
            }
        }
    };
}

run_options! {
    directory: "directory",
    description: "description",
    args: "args",
    mode: "mode",
    shell: "shell",
    cols: "cols",
    rows: "rows",
    scrollback: "scrollback",
    env: "env",
    clear_env: "clearEnv",
    timeout_ms: "timeoutMs",
    callback_delay_ms: "callbackDelayMs",
    callback_pattern: "callbackPattern",
    max_output_size: "maxOutputSize",
    detect_input: "detectInput",
    sandbox: "sandbox",
    keep: "keep",
}

/// One option: `None` when `undefined` (or missing), else converted as napi-rs
/// converts the field (`null` is `None` too, and a wrong type is an error naming
/// `RunOptions.<name>`).
///
/// # Safety
/// `raw` is a value of `env`, on its JS thread.
unsafe fn field<T: FromNapiValue>(
    env: sys::napi_env,
    raw: Option<sys::napi_value>,
    name: &str,
) -> napi::Result<Option<T>> {
    let Some(raw) = raw.filter(|raw| !raw.is_null()) else {
        return Ok(None);
    };
    let mut kind = 0;
    // SAFETY: as this function's contract says; an out-pointer to a local.
    napi::check_status!(unsafe { sys::napi_typeof(env, raw, &mut kind) })?;
    if ValueType::from(kind) == ValueType::Undefined {
        return Ok(None);
    }
    // SAFETY: as above.
    unsafe { from_raw_optional_field(env, Some(raw), "RunOptions", name) }
}
