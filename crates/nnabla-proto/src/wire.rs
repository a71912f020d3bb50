//! Low-level protobuf wire-format helpers: bounds-checked reading and writing.

use crate::{Error, Result};

/// Wire types.
pub(crate) const VARINT: u8 = 0;
pub(crate) const FIXED64: u8 = 1;
pub(crate) const LEN: u8 = 2;
pub(crate) const FIXED32: u8 = 5;

/// A cursor over a protobuf buffer that knows the absolute offset of its
/// start, so errors name the byte in the whole input.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], base: usize) -> Self {
        Reader { buf, pos: 0, base }
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Absolute offset of the next byte.
    pub(crate) fn offset(&self) -> usize {
        self.base.saturating_add(self.pos)
    }

    /// Position relative to this reader's buffer.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn varint(&mut self) -> Result<u64> {
        let start = self.offset();
        let mut value = 0u64;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(Error::wire(start, "truncated varint"));
            };
            self.pos += 1;
            if i == 9 && b > 1 {
                return Err(Error::wire(start, "varint longer than 64 bits"));
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(value);
            }
        }
        Err(Error::wire(start, "varint longer than 10 bytes"))
    }

    /// A field key: (field number, wire type).
    pub(crate) fn key(&mut self) -> Result<(u32, u8)> {
        let start = self.offset();
        let k = self.varint()?;
        let wt = (k & 7) as u8;
        let num = k >> 3;
        if num == 0 || num > 0x1fff_ffff {
            return Err(Error::wire(start, format!("invalid field number {num}")));
        }
        Ok((num as u32, wt))
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let start = self.offset();
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| {
                Error::wire(
                    start,
                    format!(
                        "{n} bytes claimed but only {} remain",
                        self.buf.len() - self.pos
                    ),
                )
            })?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// A length-delimited payload: the bytes and their absolute offset.
    pub(crate) fn len_delimited(&mut self) -> Result<(&'a [u8], usize)> {
        let n = self.varint()?;
        let n = usize::try_from(n).map_err(|_| Error::wire(self.offset(), "length overflows"))?;
        let off = self.offset();
        Ok((self.bytes(n)?, off))
    }

    /// Skips one field value of wire type `wt`.
    pub(crate) fn skip(&mut self, wt: u8, num: u32) -> Result<()> {
        match wt {
            VARINT => self.varint().map(|_| ()),
            FIXED64 => self.bytes(8).map(|_| ()),
            LEN => self.len_delimited().map(|_| ()),
            FIXED32 => self.bytes(4).map(|_| ()),
            3 | 4 => Err(Error::wire(
                self.offset(),
                format!("field {num}: groups (wire type {wt}) are not supported in proto3"),
            )),
            _ => Err(Error::wire(
                self.offset(),
                format!("field {num}: invalid wire type {wt}"),
            )),
        }
    }
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn varint_len(v: u64) -> usize {
    let bits = 64 - (v | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

pub(crate) fn put_key(out: &mut Vec<u8>, num: u32, wt: u8) {
    put_varint(out, (u64::from(num) << 3) | u64::from(wt));
}

pub(crate) fn put_len_delimited(out: &mut Vec<u8>, num: u32, payload: &[u8]) {
    put_key(out, num, LEN);
    put_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_fail_cleanly() {
        for v in [
            0u64,
            1,
            127,
            128,
            300,
            u32::MAX as u64,
            u64::MAX,
            (-1i64) as u64,
        ] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(b.len(), varint_len(v));
            assert_eq!(Reader::new(&b, 0).varint().unwrap(), v);
            for cut in 0..b.len() {
                let e = Reader::new(&b[..cut], 7).varint().unwrap_err();
                assert!(e.to_string().contains("byte 7"), "{e}");
            }
        }
        let eleven = [0xffu8; 11];
        assert!(Reader::new(&eleven, 0).varint().is_err());
    }
}
