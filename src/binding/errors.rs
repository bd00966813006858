//! Core errors → JS errors whose `code` is the stable code listed in README.md ("Errors").

use napi::bindgen_prelude::{JsObjectValue, ToNapiValue};
use napi::{sys, Env, JsValue};

use native_shell_service::base::error::ServiceError;

/// A JS `Error` with `message` and our `code`, wrapped so napi throws (or rejects
/// with) exactly this object. napi's own errors can only carry its fixed statuses.
pub fn js_error(env: &Env, e: &ServiceError) -> napi::Error {
    let build = || -> napi::Result<napi::Error> {
        let mut error = env.create_error(napi::Error::new(napi::Status::GenericFailure, e.message.clone()))?;
        error.set_named_property("code", e.code.as_str())?;
        Ok(napi::Error::from(error.to_unknown()))
    };
    build().unwrap_or_else(|fallback| fallback)
}

/// `js_error` carrying `result`: what the call answers in place of its value when it
/// fails (`start`'s `SPAWN_FAILED` carries the `failed` `RunResult`, README.md "API").
pub fn js_error_with_result<T: ToNapiValue>(env: &Env, e: &ServiceError, result: T) -> napi::Error {
    let build = || -> napi::Result<napi::Error> {
        let mut error = env.create_error(napi::Error::new(napi::Status::GenericFailure, e.message.clone()))?;
        error.set_named_property("code", e.code.as_str())?;
        error.set_named_property("result", result)?;
        Ok(napi::Error::from(error.to_unknown()))
    };
    build().unwrap_or_else(|fallback| fallback)
}

/// The same error as a JS value, to reject a promise with; napi's own error if even
/// that cannot be built.
pub fn error_object(env: &Env, e: &ServiceError) -> sys::napi_value {
    // SAFETY: `env` is the JS thread's environment, live during this call.
    unsafe { napi::JsError::from(js_error(env, e)).into_value(env.raw()) }
}

/// The outcome of a call, converted on the JS thread: a value, or our error object
/// (thrown by a sync method, the rejection of an async one).
pub enum Settled<T> {
    Ok(T),
    Err(ServiceError),
}

impl<T> From<native_shell_service::base::error::Result<T>> for Settled<T> {
    fn from(r: native_shell_service::base::error::Result<T>) -> Self {
        match r {
            Ok(v) => Settled::Ok(v),
            Err(e) => Settled::Err(e),
        }
    }
}

impl<T: ToNapiValue> ToNapiValue for Settled<T> {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        match val {
            Settled::Ok(v) => unsafe { T::to_napi_value(env, v) },
            Settled::Err(e) => Err(js_error(&Env::from_raw(env), &e)),
        }
    }
}
