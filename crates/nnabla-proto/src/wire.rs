//! Low-level protobuf wire-format writing (reading is `tensor-core`'s
//! cursor: see `index.rs`).

/// Wire types.
pub(crate) const VARINT: u8 = 0;
pub(crate) const FIXED64: u8 = 1;
pub(crate) const LEN: u8 = 2;
pub(crate) const FIXED32: u8 = 5;

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
    use tensor_core::wire::Cursor;

    fn read(b: &[u8], at: u64) -> crate::Result<u64> {
        let mut c = Cursor::new(b, "m", 0, b.len() as u64);
        c.pos = at.min(b.len() as u64);
        crate::index::varint(&mut c)
    }

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
            assert_eq!(read(&b, 0).unwrap(), v);
            for cut in 0..b.len() {
                let mut shifted = vec![0u8; 7];
                shifted.extend_from_slice(&b[..cut]);
                let e = read(&shifted, 7).unwrap_err();
                assert!(e.to_string().contains("byte 7"), "{e}");
            }
        }
        let eleven = [0xffu8; 11];
        assert!(read(&eleven, 0).is_err());
    }
}
