//! A request's `params`, read as the JS call's arguments by name: the option objects
//! of the methods whose options are not the core's (`service::options` has those), and
//! the checks of single arguments, each refusal an `INVALID_ARGUMENT` that names it.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::base::error::{Result, ServiceError};
use crate::service::options::handle_arg;

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultArgs {
    pub max_output_size: Option<f64>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputArgs {
    pub view: Option<String>,
    pub tail_bytes: Option<f64>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadArgs {
    pub since: Option<f64>,
    pub max_bytes: Option<f64>,
}

#[derive(serde::Deserialize)]
pub struct ScreenArgs {
    pub scrollback: Option<f64>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KillArgs {
    pub grace_ms: Option<f64>,
    /// Kept with the job as its `killReason` (`Service::kill_noted`).
    pub reason: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyArgs {
    pub exclude_tools: Option<Vec<String>>,
    pub core_tools: Option<Vec<String>>,
    pub session_approvals: Option<Vec<String>>,
}

pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `params[name]` as options: absent or null is none; anything but an object is
/// refused as the binding refuses it.
pub fn options<T: DeserializeOwned>(p: &Value, name: &str) -> Result<Option<T>> {
    match p.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => parse(name, v.clone()).map(Some),
    }
}

pub fn parse<T: DeserializeOwned>(name: &str, v: Value) -> Result<T> {
    let v = match v {
        Value::Null => Value::Object(Default::default()),
        Value::Object(_) => v,
        other => {
            return Err(ServiceError::invalid(format!(
                "{name} must be an object, got {}",
                kind(&other)
            )))
        }
    };
    serde_json::from_value(v).map_err(|e| ServiceError::invalid(format!("{name}: {e}")))
}

pub fn handle_param(p: &Value) -> Result<u32> {
    match p.get("handle") {
        Some(Value::Number(n)) => handle_arg(n.as_f64().unwrap_or(-1.0)),
        other => Err(ServiceError::invalid(format!(
            "handle must be a number, got {}",
            other.map_or("nothing", kind)
        ))),
    }
}

pub fn number_param(p: &Value, name: &str) -> Result<Option<f64>> {
    match p.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(other) => Err(ServiceError::invalid(format!(
            "{name} must be a number, got {}",
            kind(other)
        ))),
    }
}

pub fn string_param(p: &Value, name: &str) -> Result<String> {
    match p.get(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        other => Err(ServiceError::invalid(format!(
            "{name} must be a string, got {}",
            other.map_or("nothing", kind)
        ))),
    }
}

/// Standard base64, padded or not: `writeToPty`'s bytes that are not text.
pub fn decode_base64(text: &str) -> Result<Vec<u8>> {
    use base64::Engine;
    // Padding is optional: a client may strip it, as some encoders do.
    const LENIENT: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    LENIENT
        .decode(text)
        .map_err(|e| ServiceError::invalid(format!("base64 that cannot be decoded: {e}")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_decodes() {
        assert_eq!(super::decode_base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(super::decode_base64("AP8=").unwrap(), [0u8, 255]);
        assert!(super::decode_base64("a*b").is_err());
    }
}
