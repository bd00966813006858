//! A file's user metadata, as envd keeps it: the `X-Metadata-<key>: <value>` headers of
//! an upload (POST /files, files.rs) become extended attributes `user.e2b.<key>` on the
//! written file, and every `EntryInfo` (Stat, ListDir, watch events, the upload's
//! answer) carries them back as `metadata`. The `user.e2b.` namespace keeps them apart
//! from other tools' `user.*` attributes, which are neither shown nor touched.
//!
//! Checked before anything is written (`invalid_argument`, HTTP 400, as envd): keys
//! non-empty and at most [`MAX_KEY`] bytes (the kernel's 255-byte attribute name, less
//! the prefix), keys and values printable ASCII (what an HTTP header carries safely),
//! at most [`MAX_TOTAL`] bytes in all (what ext4 keeps in one inode block). An upload
//! replaces the file's whole set: keys it does not name are removed (O_TRUNC keeps a
//! file's attributes). A file system without user attributes (tmpfs before Linux 6.6,
//! /proc) keeps none, and the upload still succeeds, as in envd.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::Path;

use hyper::HeaderMap;

use super::fs_error::{FsCode, FsError};

/// The attribute namespace the metadata lives in.
pub const PREFIX: &str = "user.e2b.";
/// The longest key: the kernel's attribute names are at most 255 bytes.
pub const MAX_KEY: usize = 255 - PREFIX.len();
/// The most bytes of names (with the prefix) and values one file's set may take.
pub const MAX_TOTAL: usize = 4096;
/// The header prefix an upload's metadata comes under (matched case-insensitively).
const HEADER: &str = "x-metadata-";

/// A metadata set, in key order.
pub type Metadata = BTreeMap<String, String>;

/// The `X-Metadata-*` headers of a request: keys lower-cased (HTTP header names are
/// case-insensitive), the first value of a repeated header, checked as the module says.
pub fn from_headers(headers: &HeaderMap) -> Result<Metadata, FsError> {
    let mut metadata = Metadata::new();
    for name in headers.keys() {
        let Some(key) = name.as_str().strip_prefix(HEADER) else {
            continue;
        };
        if key.is_empty() {
            continue;
        }
        let value = headers.get(name).map(|v| v.as_bytes()).unwrap_or_default();
        let value = printable("value", value)?;
        metadata.insert(key.to_ascii_lowercase(), value.to_string());
    }
    check(&metadata)?;
    Ok(metadata)
}

/// The checks of the module's head.
pub fn check(metadata: &Metadata) -> Result<(), FsError> {
    let mut total = 0;
    for (key, value) in metadata {
        if key.is_empty() {
            return Err(invalid("a metadata key is empty".into()));
        }
        if key.len() > MAX_KEY {
            return Err(invalid(format!("the metadata key {key:?} is over {MAX_KEY} bytes")));
        }
        printable("key", key.as_bytes())?;
        printable("value", value.as_bytes())?;
        total += PREFIX.len() + key.len() + value.len();
    }
    if total > MAX_TOTAL {
        return Err(invalid(format!(
            "the metadata takes {total} bytes, over the {MAX_TOTAL} a file may have"
        )));
    }
    Ok(())
}

fn printable<'a>(what: &str, bytes: &'a [u8]) -> Result<&'a str, FsError> {
    match bytes.iter().position(|b| !(0x20..=0x7e).contains(b)) {
        Some(at) => Err(invalid(format!(
            "a metadata {what} holds a byte that is not printable ASCII (0x{:02x} at {at})",
            bytes[at]
        ))),
        // Printable ASCII is UTF-8.
        None => Ok(std::str::from_utf8(bytes).unwrap_or_default()),
    }
}

fn invalid(message: String) -> FsError {
    FsError::new(FsCode::InvalidArgument, message)
}

/// Gives the open `file` exactly `metadata` (the `user.e2b.` attributes it had and
/// `metadata` does not name are removed). Through the descriptor: a rename meanwhile
/// cannot send the attributes to another file.
#[cfg(target_os = "linux")]
pub fn write(file: &File, path: &Path, metadata: &Metadata) -> Result<(), FsError> {
    use rustix::io::Errno;
    let failed = |e: Errno| {
        let err = std::io::Error::from(e);
        if e == Errno::NOSPC || e == Errno::DQUOT || e == Errno::TOOBIG {
            FsError::new(
                FsCode::ResourceExhausted,
                format!("no room for the metadata of '{}': {err}", path.display()),
            )
        } else {
            FsError::io(&err, "cannot keep the metadata of", path)
        }
    };
    let names = match list(
        || rustix::fs::flistxattr_query(file),
        |buf| rustix::fs::flistxattr(file, buf),
    ) {
        Ok(names) => names,
        // No user attributes on this file system: nothing kept, as envd.
        Err(e) if e == Errno::NOTSUP => return Ok(()),
        Err(e) => return Err(failed(e)),
    };
    for name in names {
        if let Some(key) = name.strip_prefix(PREFIX) {
            if !metadata.contains_key(key) {
                match rustix::fs::fremovexattr(file, name.as_str()) {
                    Ok(()) | Err(Errno::NODATA) => {}
                    Err(e) => return Err(failed(e)),
                }
            }
        }
    }
    for (key, value) in metadata {
        let name = format!("{PREFIX}{key}");
        match rustix::fs::fsetxattr(file, name.as_str(), value.as_bytes(), rustix::fs::XattrFlags::empty()) {
            Ok(()) => {}
            Err(e) if e == Errno::NOTSUP => return Ok(()),
            Err(e) => return Err(failed(e)),
        }
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub fn write(_file: &File, _path: &Path, _metadata: &Metadata) -> Result<(), FsError> {
    Ok(())
}

/// The metadata of what `path` names (a symlink: of its target, as envd reads it).
/// Best effort, as in envd: an entry whose attributes cannot be read has none, and a
/// value that is not UTF-8 (set by another tool) is left out.
#[cfg(target_os = "linux")]
pub fn read(path: &Path) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let Ok(names) = list(
        || rustix::fs::listxattr_query(path),
        |buf| rustix::fs::listxattr(path, buf),
    ) else {
        return out;
    };
    for name in names {
        let Some(key) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let value = rustix::fs::getxattr_query(path, name.as_str()).and_then(|len| {
            let mut buf = vec![0u8; len];
            rustix::fs::getxattr(path, name.as_str(), &mut buf[..]).map(|n| {
                buf.truncate(n);
                buf
            })
        });
        if let Ok(Ok(value)) = value.map(String::from_utf8) {
            out.insert(key.to_string(), value);
        }
    }
    out
}

#[cfg(not(target_os = "linux"))]
pub fn read(_path: &Path) -> HashMap<String, String> {
    HashMap::new()
}

/// The attribute names an `*listxattr` call gives (its buffer sized by the `query`
/// first; a list that grew between the two is asked for again).
#[cfg(target_os = "linux")]
fn list(
    query: impl Fn() -> rustix::io::Result<usize>,
    call: impl Fn(&mut [u8]) -> rustix::io::Result<usize>,
) -> rustix::io::Result<Vec<String>> {
    for _ in 0..4 {
        let len = query()?;
        if len == 0 {
            return Ok(Vec::new());
        }
        let mut buf = vec![0u8; len];
        match call(&mut buf) {
            Ok(n) => {
                buf.truncate(n);
                return Ok(buf
                    .split(|&b| b == 0)
                    .filter(|n| !n.is_empty())
                    .filter_map(|n| std::str::from_utf8(n).ok().map(str::to_string))
                    .collect());
            }
            Err(rustix::io::Errno::RANGE) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(rustix::io::Errno::RANGE)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn takes_checks_keeps_and_replaces_the_set() {
        let mut headers = HeaderMap::new();
        headers.insert("X-Metadata-Owner", "alice".parse().unwrap());
        headers.insert("x-metadata-Kind", "report v2".parse().unwrap());
        headers.insert("x-other", "no".parse().unwrap());
        let metadata = from_headers(&headers).unwrap();
        assert_eq!(
            metadata
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect::<Vec<_>>(),
            [("kind", "report v2"), ("owner", "alice")]
        );
        let long = Metadata::from([("k".repeat(MAX_KEY + 1), "v".into())]);
        assert_eq!(check(&long).unwrap_err().code, FsCode::InvalidArgument);
        let big = Metadata::from([("k".into(), "v".repeat(MAX_TOTAL))]);
        assert_eq!(check(&big).unwrap_err().code, FsCode::InvalidArgument);
        let mut bad = HeaderMap::new();
        bad.insert(
            "x-metadata-k",
            hyper::header::HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap(),
        );
        assert_eq!(from_headers(&bad).unwrap_err().code, FsCode::InvalidArgument);

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let file = File::create(&path).unwrap();
        rustix::fs::fsetxattr(&file, "user.other", b"kept", rustix::fs::XattrFlags::empty()).unwrap();
        write(&file, &path, &metadata).unwrap();
        let read_back = read(&path);
        assert_eq!(read_back.get("owner").map(String::as_str), Some("alice"));
        assert_eq!(read_back.len(), 2, "{read_back:?}");
        write(&file, &path, &Metadata::from([("owner".into(), "bob".into())])).unwrap();
        assert_eq!(
            read(&path),
            HashMap::from([("owner".to_string(), "bob".to_string())]),
            "the whole set replaced"
        );
        let mut other = [0u8; 8];
        let n = rustix::fs::getxattr(&path, "user.other", &mut other[..]).unwrap();
        assert_eq!(&other[..n], b"kept", "another tool's attribute untouched");
    }
}
