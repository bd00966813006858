//! envd's REST file transfer, GET and POST `/files?path=P`, as the e2b SDKs' files.read
//! and files.write use it: GET answers the file's bytes (`application/octet-stream`,
//! streamed); POST takes a `multipart/form-data` body (a part named `file` per file, the
//! destination its filename, or `path` when there is one part) or a raw
//! `application/octet-stream` body for `path` (streamed to disk), makes missing parent
//! directories, overwrites what is there and answers `[{"name","type":"file","path"}]`.
//! Failures answer envd's JSON `{"code": <status>, "message"}` with the status the SDKs
//! map: 400 (bad path, a directory, a FIFO, a device or a socket: only regular files
//! are read or written, and never waited for: regular_file.rs), 404 (not found), 403, 507 (no space), 500.
//!
//! Paths are resolved as fs_entry.rs says; `username` is accepted and ignored (no user
//! switching). `X-Metadata-*` headers are kept on the written files (file_metadata.rs).
//! An upload may come gzip-encoded (`Content-Encoding: gzip`, inflated within
//! bounds: inflate.rs); another coding is refused with 400. Not served:
//! `Accept-Encoding` (ignored, as HTTP allows: downloads come uncompressed), Range requests (the whole file is sent),
//! the signed-URL parameters (`signature`, `signature_expiration`: the token rules of
//! src/daemon/http/auth.rs apply instead).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use tokio::sync::mpsc;

use super::file_metadata::{self, Metadata};
use super::fs_entry::Bases;
use super::fs_error::{FsCode, FsError};
use super::inflate::{self, Encoding};
use super::multipart;
use super::regular_file;
use super::Envd;
use crate::daemon::protocol::body::{channel, empty, full, Body};

pub const PATH: &str = "/files";
/// The largest multipart body, which is parsed whole in memory: 64 MiB. A larger file
/// goes as `application/octet-stream` (the SDKs' `useOctetStream` / `use_octet_stream`),
/// which is streamed to disk and not bounded here.
pub const MAX_FORM: usize = 64 * 1024 * 1024;
/// How long a request body may pause between chunks before the upload is given up.
const BODY_IDLE: Duration = Duration::from_secs(60);
/// The size of the chunks a download is sent in.
const CHUNK: usize = 64 * 1024;

pub async fn handle(req: Request<Incoming>, envd: Arc<Envd>) -> Response<Body> {
    let bases = Bases::of_daemon(envd.project_root.as_deref());
    let answer = match query_path(req.uri().query().unwrap_or("")) {
        Err(e) => Err(e),
        Ok(path) => match *req.method() {
            Method::GET => download(path, bases).await,
            Method::POST => upload(req, path, bases).await,
            _ => return empty(StatusCode::METHOD_NOT_ALLOWED),
        },
    };
    answer.unwrap_or_else(|e| error_response(&e))
}

/// envd's error body: `{"code": <HTTP status>, "message": ...}`.
fn error_response(e: &FsError) -> Response<Body> {
    let status = e.code.http_status();
    let body = serde_json::json!({ "code": status, "message": e.message }).to_string();
    full(
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        "application/json",
        Bytes::from(body),
    )
}

/// The `path` parameter of a query string (form-urlencoded), if given.
fn query_path(query: &str) -> Result<Option<String>, FsError> {
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if key != "path" {
            continue;
        }
        let spaced = value.replace('+', " ");
        let bytes = multipart::percent_decode(spaced.as_bytes())
            .ok_or_else(|| FsError::new(FsCode::InvalidArgument, "the path parameter has a bad %-escape"))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| FsError::new(FsCode::InvalidArgument, "the path parameter is not UTF-8"))?;
        return Ok(Some(text));
    }
    Ok(None)
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T, FsError> + Send + 'static) -> Result<T, FsError> {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(FsError::new(FsCode::Internal, format!("the file call failed: {e}"))))
}

async fn download(path: Option<String>, bases: Bases) -> Result<Response<Body>, FsError> {
    let path = bases.resolve(path.as_deref().unwrap_or(""))?;
    let (file, len) = blocking(move || regular_file::open_for_read(&path)).await?;
    if len == 0 {
        return Ok(full(StatusCode::OK, "application/octet-stream", Bytes::new()));
    }
    let (tx, body) = channel(4);
    // Exactly the length announced: a file that grows meanwhile is cut there; one that
    // shrinks ends the body short, and the client sees a truncated transfer.
    tokio::task::spawn_blocking(move || {
        let mut rest = file.take(len);
        let mut buf = vec![0u8; CHUNK];
        loop {
            match rest.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if tx.blocking_send(Bytes::copy_from_slice(&buf[..n])).is_err() {
                        return; // the client went away
                    }
                }
            }
        }
    });
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
    headers.insert(CONTENT_LENGTH, HeaderValue::from(len));
    Ok(response)
}

async fn upload(req: Request<Incoming>, path: Option<String>, bases: Bases) -> Result<Response<Body>, FsError> {
    let headers = req.headers();
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let encoding = inflate::content_encoding(headers.get(CONTENT_ENCODING).map(HeaderValue::as_bytes));
    let metadata = file_metadata::from_headers(headers);
    let boundary = multipart::boundary(&content_type);
    let raw = content_type.is_empty() || content_type.starts_with("application/octet-stream");
    let refused = if let Err(e) = &encoding {
        Some(e.clone())
    } else if let Err(e) = &metadata {
        Some(e.clone())
    } else if boundary.is_none() && !raw {
        Some(FsError::new(
            FsCode::InvalidArgument,
            format!("unsupported upload content type {content_type:?}: send multipart/form-data or application/octet-stream"),
        ))
    } else if boundary.is_none() && path.is_none() {
        Some(FsError::new(
            FsCode::InvalidArgument,
            "an application/octet-stream upload needs ?path=",
        ))
    } else {
        None
    };
    if let Some(e) = refused {
        // Read what the client is still sending first (bounded), so it gets the answer
        // rather than a reset connection (the SDK's gzip upload saw "fetch failed").
        discard(req.into_body()).await;
        return Err(e);
    }
    let encoding = encoding.unwrap_or(Encoding::Identity);
    let metadata = metadata.unwrap_or_default();
    let written = match (boundary, path) {
        (Some(boundary), path) => {
            let form = read_form(req.into_body()).await?;
            blocking(move || {
                // A compressed form is inflated whole, within the bound a form has.
                let form = match encoding {
                    Encoding::Identity => form,
                    Encoding::Gzip => inflate::gunzip_all(&form, MAX_FORM)?,
                };
                write_form(&form, &boundary, path.as_deref(), &bases, &metadata)
            })
            .await?
        }
        (None, Some(path)) => {
            let target = bases.resolve(&path)?;
            vec![stream_to_file(req.into_body(), target, encoding, metadata).await?]
        }
        (None, None) => {
            return Err(FsError::new(
                FsCode::InvalidArgument,
                "an application/octet-stream upload needs ?path=",
            ))
        }
    };
    let entries: Vec<serde_json::Value> = written
        .iter()
        .map(|p| {
            let mut entry = serde_json::json!({
                "name": p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                "type": "file",
                "path": p.display().to_string(),
            });
            // What the file system kept, read back (envd's answer has it when any).
            let kept = file_metadata::read(p);
            if !kept.is_empty() {
                entry["metadata"] = serde_json::json!(kept);
            }
            entry
        })
        .collect();
    Ok(full(
        StatusCode::OK,
        "application/json",
        Bytes::from(serde_json::Value::Array(entries).to_string()),
    ))
}

/// Reads and drops the rest of a refused upload: at most 1 MiB, for at most 5 s.
async fn discard(body: Incoming) {
    let limited = http_body_util::Limited::new(body, 1 << 20);
    let _ = tokio::time::timeout(Duration::from_secs(5), limited.collect()).await;
}

/// The whole multipart body, at most [`MAX_FORM`] bytes, each chunk within [`BODY_IDLE`].
async fn read_form(mut body: Incoming) -> Result<Vec<u8>, FsError> {
    let mut out = Vec::new();
    while let Some(frame) = next_frame(&mut body).await? {
        if out.len() + frame.len() > MAX_FORM {
            return Err(FsError::new(
                FsCode::InvalidArgument,
                format!(
                    "a multipart upload over {} MiB: send large files as application/octet-stream",
                    MAX_FORM >> 20
                ),
            ));
        }
        out.extend_from_slice(&frame);
    }
    Ok(out)
}

/// The next data chunk of a request body; None at its end.
async fn next_frame(body: &mut Incoming) -> Result<Option<Bytes>, FsError> {
    loop {
        match tokio::time::timeout(BODY_IDLE, body.frame()).await {
            Err(_) => {
                return Err(FsError::new(
                    FsCode::InvalidArgument,
                    "the upload stalled (no data for 60 s)",
                ))
            }
            Ok(None) => return Ok(None),
            Ok(Some(Err(e))) => {
                return Err(FsError::new(
                    FsCode::InvalidArgument,
                    format!("reading the upload: {e}"),
                ))
            }
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    return Ok(Some(data));
                }
            }
        }
    }
}

/// Writes every `file` part of a form where [`plan_form`] says.
fn write_form(
    form: &[u8],
    boundary: &str,
    path: Option<&str>,
    bases: &Bases,
    metadata: &Metadata,
) -> Result<Vec<PathBuf>, FsError> {
    let plan = plan_form(form, boundary, path, bases)?;
    let mut written = Vec::with_capacity(plan.len());
    for (target, data) in plan {
        let mut file = regular_file::open_for_write(&target)?;
        hand_to_owner(&file);
        file.write_all(data)
            .map_err(|e| FsError::io(&e, "cannot write", &target))?;
        file_metadata::write(&file, &target, metadata)?;
        written.push(target);
    }
    Ok(written)
}

/// Where each `file` part of a form goes: its filename, or `path` when the form has one
/// file and the query names a path (how the SDKs send one file). Nothing is written.
fn plan_form<'a>(
    form: &'a [u8],
    boundary: &str,
    path: Option<&str>,
    bases: &Bases,
) -> Result<Vec<(PathBuf, &'a [u8])>, FsError> {
    let parts = multipart::parse(form, boundary).map_err(|e| FsError::new(FsCode::InvalidArgument, e))?;
    let files: Vec<_> = parts.into_iter().filter(|p| p.name == "file").collect();
    if files.is_empty() {
        return Err(FsError::new(
            FsCode::InvalidArgument,
            "the form has no part named \"file\"",
        ));
    }
    let single = files.len() == 1;
    let mut plan = Vec::with_capacity(files.len());
    for part in files {
        let named = match (single, path, part.filename.as_deref()) {
            (true, Some(p), _) => p,
            (_, _, Some(f)) if !f.is_empty() => f,
            (_, Some(p), _) => p,
            _ => {
                return Err(FsError::new(
                    FsCode::InvalidArgument,
                    "a file part has no filename and the query no path",
                ))
            }
        };
        plan.push((bases.resolve(named)?, part.data));
    }
    Ok(plan)
}

/// The parsing half of POST /files, for the fuzz target (fuzz/fuzz_targets/envd_files.rs):
/// from a content type, a query string and a whole body, where each file would go (paths
/// resolved against a made-up home and project root) and how many bytes, or why the
/// upload is refused. Writes nothing.
pub fn decode_upload(content_type: &str, query: &str, body: &[u8]) -> Result<Vec<(PathBuf, usize)>, String> {
    let bases = Bases {
        home: PathBuf::from("/home/fuzz"),
        workdir: Some(PathBuf::from("/work/project")),
    };
    let path = query_path(query).map_err(|e| e.message)?;
    if let Some(boundary) = multipart::boundary(content_type) {
        let plan = plan_form(body, &boundary, path.as_deref(), &bases).map_err(|e| e.message)?;
        return Ok(plan.into_iter().map(|(target, data)| (target, data.len())).collect());
    }
    let path = path.ok_or("an application/octet-stream upload needs ?path=")?;
    let target = bases.resolve(&path).map_err(|e| e.message)?;
    Ok(vec![(target, body.len())])
}

/// envd gives each uploaded file to the requesting user (a `chown` between its creation
/// and its first write), which a directory watcher sees as a `CHMOD` event: the SDKs'
/// watch tests count it. The daemon switches no user, so the file is given to the owner
/// it has (nothing changes but that event). Best effort: a refusal changes nothing.
fn hand_to_owner(file: &std::fs::File) {
    use std::os::unix::fs::MetadataExt;
    if let Ok(meta) = file.metadata() {
        let _ = std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid()));
    }
}

/// A raw body into `target`, chunk by chunk: a blocking thread writes while this task
/// reads the next chunk (a bounded queue between them, so a slow disk slows the client).
/// A gzip body is inflated on that thread as it comes, within [`inflate::MAX_INFLATED`].
async fn stream_to_file(
    mut body: Incoming,
    target: PathBuf,
    encoding: Encoding,
    metadata: Metadata,
) -> Result<PathBuf, FsError> {
    let (tx, mut rx) = mpsc::channel::<Bytes>(8);
    let writing = target.clone();
    let writer = tokio::task::spawn_blocking(move || -> Result<(), FsError> {
        let mut file = regular_file::open_for_write(&writing)?;
        hand_to_owner(&file);
        if encoding == Encoding::Gzip {
            return match inflate::gunzip_into(rx, &mut file, inflate::MAX_INFLATED) {
                Ok(_) => file_metadata::write(&file, &writing, &metadata),
                Err(inflate::Inflate::Write(e)) => Err(FsError::io(&e, "cannot write", &writing)),
                Err(inflate::Inflate::Decode(e)) => {
                    // Nothing of a body that does not inflate, or inflates past the
                    // bound, stays on the disk (inflate.rs: a zip bomb).
                    drop(file);
                    let _ = std::fs::remove_file(&writing);
                    Err(e)
                }
            };
        }
        while let Some(chunk) = rx.blocking_recv() {
            file.write_all(&chunk)
                .map_err(|e| FsError::io(&e, "cannot write", &writing))?;
        }
        file_metadata::write(&file, &writing, &metadata)
    });
    let mut read_error = None;
    loop {
        match next_frame(&mut body).await {
            Ok(Some(chunk)) => {
                if tx.send(chunk).await.is_err() {
                    // The writer failed: its error is the answer, which the client
                    // reads once it stops sending.
                    drop(tx);
                    let wrote = writer.await;
                    discard(body).await;
                    return match wrote {
                        Ok(Err(e)) => Err(e),
                        _ => Err(FsError::new(FsCode::Internal, "the file write failed")),
                    };
                }
            }
            Ok(None) => break,
            Err(e) => {
                read_error = Some(e);
                break;
            }
        }
    }
    drop(tx);
    let wrote = writer
        .await
        .unwrap_or_else(|e| Err(FsError::new(FsCode::Internal, format!("the file write failed: {e}"))));
    wrote?;
    match read_error {
        Some(e) => Err(e),
        None => Ok(target),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_path_parameter() {
        assert_eq!(
            query_path("path=%2Ftmp%2Fa+b.txt&username=user").unwrap().as_deref(),
            Some("/tmp/a b.txt")
        );
        assert_eq!(query_path("username=user").unwrap(), None);
        assert_eq!(query_path("path=%zz").unwrap_err().code, FsCode::InvalidArgument);
        assert_eq!(query_path("path=%ff").unwrap_err().code, FsCode::InvalidArgument);
    }

    #[test]
    fn writes_the_files_of_a_form_where_they_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let bases = Bases {
            home: dir.path().to_path_buf(),
            workdir: None,
        };
        let form = b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a/x.txt\"\r\n\r\nX\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"y.txt\"\r\n\r\nY\r\n--B--\r\n";
        let none = Metadata::new();
        let written = write_form(form, "B", None, &bases, &none).unwrap();
        assert_eq!(written, [dir.path().join("a/x.txt"), dir.path().join("y.txt")]);
        assert_eq!(std::fs::read(dir.path().join("a/x.txt")).unwrap(), b"X");
        // One file and a path in the query: the path wins.
        let one = b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"ignored\"\r\n\r\nZ\r\n--B--\r\n";
        assert_eq!(
            write_form(one, "B", Some("z"), &bases, &none).unwrap(),
            [dir.path().join("z")]
        );
        // A directory where the file should go.
        let err = write_form(one, "B", Some("a"), &bases, &none).unwrap_err();
        assert_eq!(err.code, FsCode::InvalidArgument);
        let no_file = b"--B\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nZ\r\n--B--\r\n";
        assert_eq!(
            write_form(no_file, "B", Some("z"), &bases, &none).unwrap_err().code,
            FsCode::InvalidArgument
        );
    }
}
