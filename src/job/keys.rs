//! Key names a model can write (`C-c`, `Enter`, `Up`, ...) and the bytes a terminal
//! sends for them.

use crate::base::error::{Result, ServiceError};

/// What a key does: bytes for the process, or (pipes mode) closing its stdin.
#[derive(Debug, PartialEq, Eq)]
pub enum Key {
    Bytes(Vec<u8>),
    /// `C-d` in pipes mode: there is no line discipline to turn it into EOF.
    EndOfInput,
}

pub fn parse_key(name: &str, pty: bool) -> Result<Key> {
    let bytes: &[u8] = match name {
        "Enter" | "Return" => b"\r",
        "Tab" => b"\t",
        "Escape" | "Esc" => b"\x1b",
        "Backspace" => b"\x7f",
        "Space" => b" ",
        "Up" => b"\x1b[A",
        "Down" => b"\x1b[B",
        "Right" => b"\x1b[C",
        "Left" => b"\x1b[D",
        "Home" => b"\x1b[H",
        "End" => b"\x1b[F",
        "PageUp" => b"\x1b[5~",
        "PageDown" => b"\x1b[6~",
        "Delete" => b"\x1b[3~",
        _ => return control_key(name, pty),
    };
    Ok(Key::Bytes(bytes.to_vec()))
}

fn control_key(name: &str, pty: bool) -> Result<Key> {
    let letter = name
        .strip_prefix("C-")
        .or_else(|| name.strip_prefix("Ctrl-"))
        .filter(|rest| rest.len() == 1)
        .and_then(|rest| rest.chars().next())
        .filter(|c| c.is_ascii_alphabetic() || matches!(c, '[' | '\\' | ']' | '^' | '_' | '@'));
    let Some(c) = letter else {
        return Err(ServiceError::invalid(format!(
            "unknown key {name:?}; use C-a … C-z, Enter, Tab, Escape, Backspace, Space, Up, Down, Left, Right, Home, End, PageUp, PageDown, Delete"
        )));
    };
    let code = (c.to_ascii_uppercase() as u8) & 0x1f;
    if code == 0x04 && !pty {
        return Ok(Key::EndOfInput);
    }
    Ok(Key::Bytes(vec![code]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(parse_key("C-c", true).unwrap(), Key::Bytes(vec![3]));
        assert_eq!(parse_key("C-d", true).unwrap(), Key::Bytes(vec![4]));
        assert_eq!(parse_key("C-d", false).unwrap(), Key::EndOfInput);
        assert_eq!(parse_key("C-z", true).unwrap(), Key::Bytes(vec![26]));
        assert_eq!(parse_key("Up", true).unwrap(), Key::Bytes(b"\x1b[A".to_vec()));
        assert!(parse_key("C-", true).is_err());
        assert!(parse_key("Hyper", true).is_err());
    }
}
