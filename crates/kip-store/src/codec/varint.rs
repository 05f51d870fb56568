//! LEB128 varints: 7 bits per byte, least significant group first, high bit
//! set on every byte but the last. Used for lengths, counts and interned ids
//! inside values, where most numbers are small. Never used in keys: varints
//! do not sort as the numbers they encode.

use super::{DecodeError, Reader};

/// The longest encoding of a `u64`.
pub const MAX_LEN: usize = 10;

pub fn write(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

pub fn read(r: &mut Reader<'_>) -> Result<u64, DecodeError> {
    let mut n: u64 = 0;
    for i in 0..MAX_LEN {
        let byte = r.u8()?;
        let bits = u64::from(byte & 0x7f);
        // The tenth byte may only carry the single top bit of a u64.
        if i == MAX_LEN - 1 && bits > 1 {
            return Err(DecodeError::new("varint overflows 64 bits"));
        }
        n |= bits << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(n);
        }
    }
    Err(DecodeError::new("varint longer than 10 bytes"))
}
