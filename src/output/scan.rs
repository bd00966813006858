//! The one scan every stage of the output pipeline shares (decoding, lines, the
//! screen): where the next control byte is. A leaf: it imports nothing of the crate.

/// The index of the first byte at or after `from` that is below 0x20 or is 0x7F (DEL),
/// or `bytes.len()`. Eight bytes are tested at a time; text between controls is what
/// every stage of the output pipeline spends its time scanning.
pub(crate) fn next_control(bytes: &[u8], from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut i = from;
    while i + 8 <= bytes.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[i..i + 8]);
        let x = u64::from_le_bytes(word);
        // Some byte below 0x20 (a byte with its high bit set never counts), or some
        // byte equal to 0x7F. Either test may point at the wrong byte, never miss one.
        let below = x.wrapping_sub(ONES * 0x20) & !x & HIGH;
        let del = (x ^ (ONES * 0x7f)).wrapping_sub(ONES) & !(x ^ (ONES * 0x7f)) & HIGH;
        if below | del != 0 {
            break;
        }
        i += 8;
    }
    while i < bytes.len() && bytes[i] >= 0x20 && bytes[i] != 0x7f {
        i += 1;
    }
    i
}
