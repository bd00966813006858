//! The wire's framing: the Connect protocol's streaming envelope on a byte stream
//! (1 byte of flags, 0 for a message; 4 bytes of big-endian length; that many bytes of
//! UTF-8 JSON), so a network transport (issue 33) can carry the same messages.

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};

/// The largest message either side accepts: a bigger one closes the connection, so a
/// peer cannot make the daemon allocate without bound.
pub const MAX_MESSAGE: usize = 16 << 20;

/// Reads one message; `None` at a clean end of the stream (between messages).
pub async fn read_frame<R: AsyncRead + Unpin>(reader: &mut R) -> io::Result<Option<Vec<u8>>> {
    let mut head = [0u8; 5];
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
    if len > MAX_MESSAGE {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a message of {len} bytes is over the limit of {MAX_MESSAGE}"),
        ));
    }
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body).await?;
    Ok(Some(body))
}

/// One message as a frame. A body over [`MAX_MESSAGE`] is the caller's to refuse.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(body.len() + 5);
    frame.push(0);
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(body);
    frame
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_round_trip_and_bad_ones_are_refused() {
        let mut bytes = encode(b"{\"a\":1}");
        bytes.extend(encode(b""));
        let mut reader = &bytes[..];
        assert_eq!(read_frame(&mut reader).await.unwrap().unwrap(), b"{\"a\":1}");
        assert_eq!(read_frame(&mut reader).await.unwrap().unwrap(), b"");
        assert!(read_frame(&mut reader).await.unwrap().is_none());

        let mut flagged = encode(b"x");
        flagged[0] = 1;
        assert!(read_frame(&mut &flagged[..]).await.is_err());
        let huge = [0u8, 0x01, 0x00, 0x00, 0x01];
        assert!(read_frame(&mut &huge[..]).await.is_err());
        let cut = &encode(b"abc")[..6];
        assert!(read_frame(&mut &cut[..]).await.is_err());
    }
}
