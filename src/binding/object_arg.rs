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

use napi::bindgen_prelude::{FromNapiValue, TypeName, ValidateNapiValue};
use napi::{sys, ValueType};

use super::env_arg::type_word;
use crate::error::{Result, ServiceError};

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

impl<T: TypeName> TypeName for ObjectArg<T> {
    fn type_name() -> &'static str {
        T::type_name()
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl<T: TypeName> ValidateNapiValue for ObjectArg<T> {}

impl<T: FromNapiValue + TypeName> FromNapiValue for ObjectArg<T> {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> napi::Result<Self> {
        let mut kind = 0;
        // SAFETY: `env` and `value` are this call's, on the JS thread.
        napi::check_status!(unsafe { sys::napi_typeof(env, value, &mut kind) })?;
        let kind = ValueType::from(kind);
        let mut is_array = false;
        if kind == ValueType::Object {
            // SAFETY: as above.
            napi::check_status!(unsafe { sys::napi_is_array(env, value, &mut is_array) })?;
        }
        if kind != ValueType::Object || is_array {
            let given = if is_array { "an array" } else { type_word(kind) };
            return Ok(ObjectArg(Err(format!("options must be an object, got {given}"))));
        }
        // SAFETY: as above; the value is an object.
        unsafe { T::from_napi_value(env, value) }.map(|options| ObjectArg(Ok(options)))
    }
}
