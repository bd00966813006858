//! The wire's framing: the Connect protocol's streaming envelope on a byte stream
//! (1 byte of flags, 0 for a message; 4 bytes of big-endian length; that many bytes of
//! UTF-8 JSON), so a network transport can carry the same messages.

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::base::limits::MAX_OUTPUT_SIZE;

/// The largest request the daemon accepts: a bigger one closes the connection, so a
/// client cannot make the daemon allocate without bound. Requests are small (the
/// largest is a 16 MiB write of input, `MAX_INPUT_BYTES`, with its JSON).
pub const MAX_REQUEST: usize = 16 << 20;

/// The largest reply or event the daemon sends, and its clients accept (client/envelope.ts
/// `MAX_REPLY`): the largest text a result carries (`MAX_OUTPUT_SIZE`, a `run`'s
/// `maxOutputSize`) with every byte in JSON's six-byte
/// `\u00XX` escape, plus 64 MiB for the rest of the result. It is larger than
/// `MAX_REQUEST` so every call answers as in process; a client allocates this much only
/// for its own daemon (same user, checked socket directory). 448 MiB also stays
/// under what a JavaScript string can hold (about 512 MiB). A reply bigger still (a
/// packed screen of a vast scrollback) is answered `LIMIT_REACHED` (conn.rs).
pub const MAX_REPLY: usize = 6 * MAX_OUTPUT_SIZE + (64 << 20);

/// Reads one message of at most `max` bytes; `None` at a clean end of the stream
/// (between messages).
pub async fn read_frame<R: AsyncRead + Unpin>(reader: &mut R, max: usize) -> io::Result<Option<Vec<u8>>> {
    let mut head = [0u8; HEAD];
    let mut filled = 0;
    while filled < head.len() {
        let n = reader.read(&mut head[filled..]).await?;
        if n == 0 {
            return if filled == 0 {
                Ok(None)
            } else {
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the stream ended inside a frame header",
                ))
            };
        }
        filled += n;
    }
    if head[0] != 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame flags {:#04x} are reserved", head[0]),
        ));
    }
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    if len > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a message of {len} bytes is over the limit of {max}"),
        ));
    }
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body).await?;
    Ok(Some(body))
}

/// One message as a frame. A body over the limit is the caller's to refuse.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(body.len() + HEAD);
    frame.push(0);
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(body);
    frame
}

/// The bytes before a message's body: its flags and its length.
pub const HEAD: usize = 5;

/// A value as a frame, written straight after room for the header, which is filled
/// in once the length is known: the body is not copied into a second buffer (a reply
/// is made on the thread that ends the call, and every copy is on the caller's round
/// trip). Returns the frame and its body's length, which the caller checks against
/// its limit.
pub fn encode_value<T: serde::Serialize + ?Sized>(value: &T) -> (Vec<u8>, usize) {
    let mut frame = Vec::with_capacity(256);
    frame.extend_from_slice(&[0; HEAD]);
    // Serializing a `serde_json::Value` (or anything with string keys) into memory
    // cannot fail; an error would leave a partial body, so it stays empty then.
    if serde_json::to_writer(&mut frame, value).is_err() {
        frame.truncate(HEAD);
    }
    let len = frame.len() - HEAD;
    frame[1..HEAD].copy_from_slice(&(len as u32).to_be_bytes());
    (frame, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_round_trip_and_bad_ones_are_refused() {
        let mut bytes = encode(b"{\"a\":1}");
        bytes.extend(encode(b""));
        let mut reader = &bytes[..];
        assert_eq!(
            read_frame(&mut reader, MAX_REQUEST).await.unwrap().unwrap(),
            b"{\"a\":1}"
        );
        assert_eq!(read_frame(&mut reader, MAX_REQUEST).await.unwrap().unwrap(), b"");
        assert!(read_frame(&mut reader, MAX_REQUEST).await.unwrap().is_none());

        let mut flagged = encode(b"x");
        flagged[0] = 1;
        assert!(read_frame(&mut &flagged[..], MAX_REQUEST).await.is_err());
        let huge = [0u8, 0x01, 0x00, 0x00, 0x01];
        assert!(read_frame(&mut &huge[..], MAX_REQUEST).await.is_err());
        // Over the request limit, within a reply's: refused or read as asked.
        let big = vec![b' '; MAX_REQUEST + 1];
        assert!(read_frame(&mut &encode(&big)[..], MAX_REQUEST).await.is_err());
        assert_eq!(
            read_frame(&mut &encode(&big)[..], MAX_REPLY)
                .await
                .unwrap()
                .unwrap()
                .len(),
            big.len()
        );
        let (framed, len) = encode_value(&serde_json::json!({ "id": 7, "result": "é" }));
        assert_eq!(len, framed.len() - HEAD);
        assert_eq!(
            read_frame(&mut &framed[..], MAX_REQUEST).await.unwrap().unwrap(),
            "{\"id\":7,\"result\":\"é\"}".as_bytes()
        );
        let cut = &encode(b"abc")[..6];
        assert!(read_frame(&mut &cut[..], MAX_REQUEST).await.is_err());
    }
}
