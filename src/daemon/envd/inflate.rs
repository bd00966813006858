//! Compressed uploads on POST /files (files.rs): the `Content-Encoding` envd takes
//! (`gzip`, as the SDKs' `files.write(..., { gzip: true })` send it, and `identity`),
//! and the gzip body inflated as it arrives, through flate2, with the inflated size
//! bounded.
//!
//! **Why a bound.** A raw upload costs its sender every byte it writes to the disk; a
//! gzip one does not: deflate reaches about 1000:1, so a 1 MiB request could write a
//! GiB (a zip bomb). The inflated bytes therefore count against the limits a raw
//! upload has: a multipart form's [`super::files::MAX_FORM`] for the whole form, and
//! [`MAX_INFLATED`] for an `application/octet-stream` file. Past it the upload is
//! refused and what was written of it is removed, so the disk keeps nothing of it.

use std::io::{self, Read, Write};

use bytes::{Buf, Bytes};
use flate2::read::MultiGzDecoder;
use tokio::sync::mpsc;

use super::fs_error::{FsCode, FsError};

/// The most bytes one gzip-encoded `application/octet-stream` upload inflates to:
/// 1 GiB. A larger file goes uncompressed (streamed, bounded by what its sender sends).
pub const MAX_INFLATED: u64 = 1 << 30;

/// How an upload's body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Identity,
    Gzip,
}

/// The `Content-Encoding` header's value (none: identity), as envd reads it: one
/// coding, case-insensitive, parameters (`;q=`) ignored; anything but `gzip` and
/// `identity` is refused (`invalid_argument`, HTTP 400), never written as it came.
pub fn content_encoding(header: Option<&[u8]>) -> Result<Encoding, FsError> {
    let Some(raw) = header else {
        return Ok(Encoding::Identity);
    };
    let refused = |text: &str| {
        FsError::new(
            FsCode::InvalidArgument,
            format!("unsupported Content-Encoding: {text:?} (supported: gzip)"),
        )
    };
    let text = std::str::from_utf8(raw).map_err(|_| refused(&String::from_utf8_lossy(raw)))?;
    let coding = text.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match coding.as_str() {
        "" | "identity" => Ok(Encoding::Identity),
        "gzip" => Ok(Encoding::Gzip),
        _ => Err(refused(text)),
    }
}

/// A gzip body's bytes inflated whole into memory, at most `limit` of them (a multipart
/// form, which is parsed whole). Concatenated gzip members are one stream, as Go's
/// reader has them.
pub fn gunzip_all(compressed: &[u8], limit: usize) -> Result<Vec<u8>, FsError> {
    let mut out = Vec::new();
    let mut decoder = MultiGzDecoder::new(compressed).take(limit as u64 + 1);
    decoder.read_to_end(&mut out).map_err(|e| not_gzip(&e))?;
    if out.len() > limit {
        return Err(too_large(limit as u64));
    }
    Ok(out)
}

/// Inflates what `chunks` brings (a request body, chunk by chunk) into `out`, at most
/// `limit` bytes; returns how many were written. Blocking: it runs on the thread that
/// writes the file.
pub fn gunzip_into(chunks: mpsc::Receiver<Bytes>, out: &mut impl Write, limit: u64) -> Result<u64, Inflate> {
    let mut decoder = MultiGzDecoder::new(ChunkReader {
        chunks,
        current: Bytes::new(),
    });
    let mut buf = vec![0u8; 64 * 1024];
    let mut written: u64 = 0;
    loop {
        let n = match decoder.read(&mut buf) {
            Ok(0) => return Ok(written),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Inflate::Decode(not_gzip(&e))),
        };
        written += n as u64;
        if written > limit {
            return Err(Inflate::Decode(too_large(limit)));
        }
        out.write_all(&buf[..n]).map_err(Inflate::Write)?;
    }
}

/// Why [`gunzip_into`] stopped: the body (not gzip, too large) or the file's write.
#[derive(Debug)]
pub enum Inflate {
    Decode(FsError),
    Write(io::Error),
}

fn not_gzip(e: &io::Error) -> FsError {
    FsError::new(
        FsCode::InvalidArgument,
        format!("the upload's gzip body does not inflate: {e}"),
    )
}

fn too_large(limit: u64) -> FsError {
    FsError::new(
        FsCode::InvalidArgument,
        format!(
            "the upload inflates to more than {} MiB: send it uncompressed",
            limit >> 20
        ),
    )
}

/// A request body's chunks, as they come off a channel, as a blocking `Read`.
struct ChunkReader {
    chunks: mpsc::Receiver<Bytes>,
    current: Bytes,
}

impl Read for ChunkReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            match self.chunks.blocking_recv() {
                Some(chunk) => self.current = chunk,
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current[..n]);
        self.current.advance(n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use flate2::Compression;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn reads_the_encodings_envd_takes() {
        assert_eq!(content_encoding(None).unwrap(), Encoding::Identity);
        assert_eq!(content_encoding(Some(b"identity")).unwrap(), Encoding::Identity);
        assert_eq!(content_encoding(Some(b" GZip ;q=1")).unwrap(), Encoding::Gzip);
        for refused in [&b"br"[..], b"deflate", b"gzip, br", b"\xff"] {
            assert_eq!(
                content_encoding(Some(refused)).unwrap_err().code,
                FsCode::InvalidArgument
            );
        }
    }

    #[test]
    fn inflates_whole_and_streamed_within_the_bound() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut two = gzip(&data[..1000]);
        two.extend(gzip(&data[1000..]));
        assert_eq!(gunzip_all(&two, data.len()).unwrap(), data, "two members, one stream");
        assert_eq!(
            gunzip_all(&two, data.len() - 1).unwrap_err().code,
            FsCode::InvalidArgument
        );
        assert_eq!(gunzip_all(b"not gzip", 10).unwrap_err().code, FsCode::InvalidArgument);
        let truncated = &two[..two.len() - 4];
        assert!(gunzip_all(truncated, data.len()).is_err(), "a cut stream is an error");

        let (tx, rx) = mpsc::channel(4);
        let compressed = gzip(&data);
        let feeding = std::thread::spawn(move || {
            for piece in compressed.chunks(777) {
                tx.blocking_send(Bytes::copy_from_slice(piece)).unwrap();
            }
        });
        let mut out = Vec::new();
        assert_eq!(gunzip_into(rx, &mut out, MAX_INFLATED).unwrap(), data.len() as u64);
        feeding.join().unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn a_bomb_stops_at_the_bound() {
        // 64 MiB of zeros is about 64 KiB of gzip; a bound of 1 MiB stops it there.
        let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..64 {
            encoder.write_all(&zeros).unwrap();
        }
        let bomb = encoder.finish().unwrap();
        let (tx, rx) = mpsc::channel(1024);
        for piece in bomb.chunks(4096) {
            tx.try_send(Bytes::copy_from_slice(piece)).unwrap();
        }
        drop(tx);
        let mut out = Vec::new();
        match gunzip_into(rx, &mut out, 1 << 20) {
            Err(Inflate::Decode(e)) => assert_eq!(e.code, FsCode::InvalidArgument),
            other => panic!("{other:?}"),
        }
        assert!(out.len() <= 1 << 20);
    }
}
