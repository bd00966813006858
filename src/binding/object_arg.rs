//! An options argument, as a caller gives it: an object, or nothing.
//!
//! napi converts an `#[napi(object)]` struct from any value: a number, a string or an
//! array reads as an object with no fields, so `run('make', 42)` ran with the defaults
//! without a word. Here the value's type is checked first, and a wrong one is kept as a
//! message for the call to refuse with `INVALID_ARGUMENT` (a conversion error could
//! carry only napi's own codes). The fields are still converted by napi, whose errors
//! (`StringExpected` on `RunOptions.directory`, …) name the field.
//!
//! napi's typings would name this wrapper, so each argument that uses it states its
//! TypeScript type (`ts_arg_type`).

use napi::bindgen_prelude::{FromNapiValue, Object, Unknown};
use napi::{sys, JsValue, ValueType};

use native_shell_service::base::error::{Result, ServiceError};

/// `Some(ObjectArg)` is a value that was neither `null` nor `undefined` (napi's
/// `Option` reads those as `None`): an object converted to `T`, or what was wrong.
/// Any object is read by its properties, so a class instance works; a `Map`'s entries
/// are not properties and read as no options.
pub struct ObjectArg<T>(std::result::Result<T, String>);

impl<T> ObjectArg<T> {
    /// The options, `None` when not given, or `INVALID_ARGUMENT` naming what was given.
    pub fn open(arg: Option<ObjectArg<T>>) -> Result<Option<T>> {
        match arg {
            None => Ok(None),
            Some(ObjectArg(Ok(options))) => Ok(Some(options)),
            Some(ObjectArg(Err(message))) => Err(ServiceError::invalid(message)),
        }
    }
}

impl<T: FromNapiValue> FromNapiValue for ObjectArg<T> {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> napi::Result<Self> {
        // SAFETY: `env` and `value` are this call's, on the JS thread.
        let unknown = unsafe { Unknown::from_raw_unchecked(env, value) };
        if let Some(given) = not_an_object(unknown)? {
            return Ok(ObjectArg(Err(format!("options must be an object, got {given}"))));
        }
        // SAFETY: as above; the value is an object.
        unsafe { T::from_napi_value(env, value) }.map(|options| ObjectArg(Ok(options)))
    }
}

/// What `value` is, in words ("a number", "an array"), when it is not an object that
/// options can be read from; `None` when it is one.
pub(super) fn not_an_object(value: Unknown<'_>) -> napi::Result<Option<&'static str>> {
    let kind = value.get_type()?;
    if kind != ValueType::Object {
        return Ok(Some(type_word(kind)));
    }
    // SAFETY: checked to be an object just above.
    let object: Object<'_> = unsafe { value.cast() }?;
    Ok(object.is_array()?.then_some("an array"))
}

pub(super) fn type_word(kind: ValueType) -> &'static str {
    match kind {
        ValueType::Undefined => "undefined",
        ValueType::Null => "null",
        ValueType::Boolean => "a boolean",
        ValueType::Number => "a number",
        ValueType::String => "a string",
        ValueType::Symbol => "a symbol",
        ValueType::Object => "an object",
        ValueType::Function => "a function",
        ValueType::External => "an external",
        ValueType::BigInt => "a bigint",
        _ => "an unknown value",
    }
}
