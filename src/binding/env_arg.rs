//! `env`, as a caller gives it: a plain object of strings, or nothing.
//!
//! napi's own conversion to a map takes whatever it is given: a number, a string, an
//! array or a `Map` became an empty (or odd) environment without a word. Here the value
//! is checked, and what is wrong is kept as a message for the call to refuse with
//! `INVALID_ARGUMENT` (a conversion error could carry only napi's own codes).

use napi::bindgen_prelude::{FromNapiValue, JsObjectValue, Object, Unknown};
use napi::{sys, Env, JsValue, ValueType};

use super::object_arg::{not_an_object, type_word};
use native_shell_service::base::error::{Result, ServiceError};

/// `null` and `undefined` are no variables; anything else must be a plain object (its
/// prototype `Object.prototype` or `null`) whose every own enumerable value is a string.
pub struct EnvArg(std::result::Result<Vec<(String, String)>, String>);

impl EnvArg {
    /// The variables, sorted by name, or `INVALID_ARGUMENT` naming what was wrong.
    pub fn pairs(arg: Option<EnvArg>) -> Result<Vec<(String, String)>> {
        match arg {
            None => Ok(Vec::new()),
            Some(EnvArg(Ok(mut pairs))) => {
                pairs.sort();
                Ok(pairs)
            }
            Some(EnvArg(Err(message))) => Err(ServiceError::invalid(message)),
        }
    }
}

impl FromNapiValue for EnvArg {
    unsafe fn from_napi_value(raw_env: sys::napi_env, value: sys::napi_value) -> napi::Result<Self> {
        let env = Env::from_raw(raw_env);
        // SAFETY: `value` is a live value of this call, on the JS thread.
        let value = unsafe { Unknown::from_raw_unchecked(raw_env, value) };
        Ok(EnvArg(read(&env, value)))
    }
}

fn read(env: &Env, value: Unknown<'_>) -> std::result::Result<Vec<(String, String)>, String> {
    let kind = value.get_type().map_err(|e| e.reason.clone())?;
    if matches!(kind, ValueType::Null | ValueType::Undefined) {
        return Ok(Vec::new());
    }
    if let Some(given) = not_an_object(value).map_err(|e| e.reason.clone())? {
        return Err(format!("env must be an object of strings, got {given}"));
    }
    // SAFETY: checked to be an object just above.
    let object: Object<'_> = unsafe { value.cast() }.map_err(|e| e.reason.clone())?;
    if !is_plain(&object).unwrap_or(false) {
        return Err("env must be a plain object of strings (not a Map or a class instance)".into());
    }
    let names = object.get_property_names().map_err(|e| e.reason.clone())?;
    let count = names.get_array_length().map_err(|e| e.reason.clone())?;
    let mut pairs = Vec::with_capacity(count as usize);
    for i in 0..count {
        let name: String = names.get_element(i).map_err(|e| e.reason.clone())?;
        if name.contains('\0') {
            // A property lookup by this name would fail on the NUL, with napi's words.
            return Err(format!("invalid environment variable name {name:?}"));
        }
        let entry: Unknown<'_> = object.get_named_property(&name).map_err(|e| e.reason.clone())?;
        let kind = entry.get_type().map_err(|e| e.reason.clone())?;
        if kind != ValueType::String {
            return Err(format!("env.{name} must be a string, got {}", type_word(kind)));
        }
        // SAFETY: checked to be a string just above.
        let text: String = unsafe { String::from_napi_value(env.raw(), entry.raw()) }.map_err(|e| e.reason.clone())?;
        pairs.push((name, text));
    }
    Ok(pairs)
}

/// `Object.getPrototypeOf(object)` is `null` or an `Object.prototype`: the one object
/// whose own prototype is `null`. Compared by shape, not identity, so a plain object made
/// in another realm (a `vm` context, a test runner's sandbox) passes; a `Map` or a class
/// instance has a prototype with a prototype of its own.
fn is_plain(object: &Object<'_>) -> napi::Result<bool> {
    let prototype = object.get_prototype()?;
    if prototype.get_type()? == ValueType::Null {
        return Ok(true);
    }
    // SAFETY: a prototype that is not null is an object.
    let prototype: Object<'_> = unsafe { prototype.cast() }?;
    Ok(prototype.get_prototype()?.get_type()? == ValueType::Null)
}
