//! A `multipart/form-data` body (RFC 7578), parsed whole: how the e2b SDKs upload files
//! to POST /files (one part named `file` per file, its filename the destination path).
//! The body is buffered by files.rs up to a bound, so the parts borrow from it.

/// One part: its form name, its filename (if any) and its bytes.
#[derive(Debug, PartialEq, Eq)]
pub struct Part<'a> {
    pub name: String,
    pub filename: Option<String>,
    pub data: &'a [u8],
}

/// The boundary of a `multipart/form-data; boundary=...` content type, or None for
/// another type or a missing/empty boundary.
pub fn boundary(content_type: &str) -> Option<String> {
    let mut params = content_type.split(';');
    let kind = params.next()?.trim();
    if !kind.eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    params.find_map(|p| {
        let (key, value) = p.split_once('=')?;
        if !key.trim().eq_ignore_ascii_case("boundary") {
            return None;
        }
        let value = value.trim().trim_matches('"');
        // RFC 2046: 1 to 70 characters.
        (!value.is_empty() && value.len() <= 70).then(|| value.to_string())
    })
}

/// The parts of `body`, or what is wrong with it.
pub fn parse<'a>(body: &'a [u8], boundary: &str) -> Result<Vec<Part<'a>>, String> {
    let delimiter = format!("--{boundary}");
    let delimiter = delimiter.as_bytes();
    // The first delimiter may follow a preamble; later ones follow a CRLF.
    let mut at = find(body, delimiter, 0).ok_or("no multipart boundary in the body")?;
    let mut parts = Vec::new();
    loop {
        at += delimiter.len();
        if body[at..].starts_with(b"--") {
            return Ok(parts);
        }
        // Transport padding, then the CRLF that ends the delimiter line.
        while body.get(at).is_some_and(|b| *b == b' ' || *b == b'\t') {
            at += 1;
        }
        if !body[at..].starts_with(b"\r\n") {
            return Err("a multipart boundary is not followed by a line break".into());
        }
        at += 2;
        let head_end = find(body, b"\r\n\r\n", at).ok_or("a multipart part has no end of headers")?;
        let head = std::str::from_utf8(&body[at..head_end]).map_err(|_| "a multipart part's headers are not UTF-8")?;
        let data_start = head_end + 4;
        let mut next_delimiter = Vec::with_capacity(delimiter.len() + 2);
        next_delimiter.extend_from_slice(b"\r\n");
        next_delimiter.extend_from_slice(delimiter);
        let data_end = find(body, &next_delimiter, data_start)
            .ok_or("the multipart body ends inside a part (no closing boundary)")?;
        let (name, filename) = disposition(head)?;
        parts.push(Part {
            name,
            filename,
            data: &body[data_start..data_end],
        });
        at = data_end + 2;
    }
}

/// The `name` and `filename` of a part's Content-Disposition header.
fn disposition(head: &str) -> Result<(String, Option<String>), String> {
    let line = head
        .split("\r\n")
        .find_map(|l| {
            let (key, value) = l.split_once(':')?;
            key.trim().eq_ignore_ascii_case("content-disposition").then_some(value)
        })
        .ok_or("a multipart part has no Content-Disposition")?;
    let params = parameters(line);
    let name = params
        .iter()
        .find(|(k, _)| k == "name")
        .map(|(_, v)| v.clone())
        .ok_or("a multipart part has no name")?;
    // RFC 5987's filename* (UTF-8, percent-encoded) wins over a plain filename.
    let filename = params
        .iter()
        .find(|(k, _)| k == "filename*")
        .and_then(|(_, v)| ext_value(v))
        .or_else(|| params.iter().find(|(k, _)| k == "filename").map(|(_, v)| v.clone()));
    Ok((name, filename))
}

/// `form-data; a=b; c="d;e"` → [(a, b), (c, d;e)] (keys lowercased; quoted strings
/// unescaped).
fn parameters(value: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = value;
    // Skip the disposition type.
    match rest.find(';') {
        Some(i) => rest = &rest[i + 1..],
        None => return out,
    }
    loop {
        rest = rest.trim_start();
        let Some(eq) = rest.find('=') else { return out };
        let key = rest[..eq].trim().to_ascii_lowercase();
        rest = &rest[eq + 1..];
        let mut val = String::new();
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            val.push(escaped);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    _ => val.push(c),
                }
            }
            rest = &quoted[end.min(quoted.len())..];
            rest = rest.find(';').map_or("", |i| &rest[i + 1..]);
        } else {
            let end = rest.find(';').unwrap_or(rest.len());
            val = rest[..end].trim().to_string();
            rest = if end < rest.len() { &rest[end + 1..] } else { "" };
        }
        out.push((key, val));
    }
}

/// RFC 5987 `utf-8'lang'percent-encoded` → the text; None for another charset or bad
/// encoding.
fn ext_value(value: &str) -> Option<String> {
    let mut pieces = value.splitn(3, '\'');
    let charset = pieces.next()?;
    let _lang = pieces.next()?;
    let encoded = pieces.next()?;
    if !charset.eq_ignore_ascii_case("utf-8") {
        return None;
    }
    String::from_utf8(percent_decode(encoded.as_bytes())?).ok()
}

/// `%XX` → the byte; None for a `%` not followed by two hex digits.
pub fn percent_decode(input: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        if input[i] == b'%' {
            let hex = input.get(i + 1..i + 3)?;
            let text = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(text, 16).ok()?);
            i += 3;
        } else {
            out.push(input[i]);
            i += 1;
        }
    }
    Some(out)
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if from > haystack.len() {
        return None;
    }
    haystack[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_boundary_of_form_data_only() {
        assert_eq!(boundary("multipart/form-data; boundary=abc").as_deref(), Some("abc"));
        assert_eq!(boundary("Multipart/Form-Data;boundary=\"a b\"").as_deref(), Some("a b"));
        assert_eq!(boundary("application/octet-stream"), None);
        assert_eq!(boundary("multipart/form-data"), None);
    }

    #[test]
    fn parses_parts_with_paths_binary_data_and_escapes() {
        let body = b"preamble\r\n--XY\r\nContent-Disposition: form-data; name=\"file\"; filename=\"/tmp/a \\\"b\\\".txt\"\r\nContent-Type: application/octet-stream\r\n\r\nhello\r\n\x00\xff--X\r\n--XY\r\nContent-Disposition: form-data; name=file; filename*=utf-8''%C3%A9.txt\r\n\r\n\r\n--XY--\r\n";
        let parts = parse(body, "XY").unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].name, "file");
        assert_eq!(parts[0].filename.as_deref(), Some("/tmp/a \"b\".txt"));
        assert_eq!(parts[0].data, b"hello\r\n\x00\xff--X");
        assert_eq!(parts[1].filename.as_deref(), Some("\u{e9}.txt"));
        assert_eq!(parts[1].data, b"");
    }

    #[test]
    fn refuses_truncated_or_malformed_bodies() {
        assert!(parse(b"no boundary here", "XY").is_err());
        assert!(parse(b"--XY\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nabc", "XY").is_err());
        assert!(parse(b"--XY\r\nX: y\r\n\r\nabc\r\n--XY--", "XY").is_err());
        assert!(parse(b"--XYjunk", "XY").is_err());
        assert_eq!(parse(b"--XY--", "XY").unwrap(), vec![]);
        assert_eq!(percent_decode(b"a%2"), None);
    }
}
