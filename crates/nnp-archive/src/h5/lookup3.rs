//! Bob Jenkins' lookup3 `hashlittle`, the checksum HDF5 puts on its
//! version-2 metadata (superblock v2/v3, `OHDR` object headers, ...), always
//! with an initial value of 0.
//!
//! Written from the algorithm's public description: the key is consumed in
//! 12-byte blocks as three little-endian 32-bit words, each block added to
//! the state `(a, b, c)` and mixed; the last 1–12 bytes are zero-padded,
//! added and run through the final mix; an empty key returns the initial
//! state unmixed. HDF5 reads the key byte by byte, which is the little-endian
//! reading whatever the machine.

/// The lookup3 `hashlittle` of `key` with initial value `initval`.
pub(crate) fn hashlittle(key: &[u8], initval: u32) -> u32 {
    // The algorithm takes the length as a 32-bit value (it wraps).
    let start = 0xdead_beef_u32
        .wrapping_add(key.len() as u32)
        .wrapping_add(initval);
    let (mut a, mut b, mut c) = (start, start, start);
    let mut k = key;
    while k.len() > 12 {
        a = a.wrapping_add(word(&k[0..4]));
        b = b.wrapping_add(word(&k[4..8]));
        c = c.wrapping_add(word(&k[8..12]));
        mix(&mut a, &mut b, &mut c);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    let mut tail = [0u8; 12];
    tail[..k.len()].copy_from_slice(k);
    a = a.wrapping_add(word(&tail[0..4]));
    b = b.wrapping_add(word(&tail[4..8]));
    c = c.wrapping_add(word(&tail[8..12]));
    final_mix(&mut a, &mut b, &mut c);
    c
}

/// HDF5's metadata checksum (Jenkins' lookup3 `hashlittle(bytes, 0)`), as
/// an object header, a superblock v2 or a B-tree v2 node ends with it.
///
/// ```
/// assert_eq!(nnp_archive::h5::checksum(b""), 0xdead_beef);
/// ```
pub fn checksum(bytes: &[u8]) -> u32 {
    hashlittle(bytes, 0)
}

fn word(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

fn final_mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(14));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(11));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(25));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(16));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(4));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(14));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(24));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors() {
        // The self-test values published with lookup3.
        assert_eq!(hashlittle(b"", 0), 0xdead_beef);
        assert_eq!(hashlittle(b"", 0xdead_beef), 0xbd5b_7dde);
        assert_eq!(
            hashlittle(b"Four score and seven years ago", 0),
            0x1777_0551
        );
        assert_eq!(
            hashlittle(b"Four score and seven years ago", 1),
            0xcd62_8161
        );
    }

    #[test]
    fn superblock_written_by_h5py() {
        // The first 44 bytes of a superblock v2 HDF5 1.14.6 wrote through
        // h5py 3.14 (libver v108): its stored checksum is 0x75e56820.
        let mut sb = Vec::new();
        sb.extend_from_slice(b"\x89HDF\r\n\x1a\n\x02\x08\x08\x00");
        sb.extend_from_slice(&0u64.to_le_bytes());
        sb.extend_from_slice(&u64::MAX.to_le_bytes());
        sb.extend_from_slice(&0x81au64.to_le_bytes());
        sb.extend_from_slice(&0x30u64.to_le_bytes());
        assert_eq!(checksum(&sb), 0x75e5_6820);
    }

    #[test]
    fn every_tail_length() {
        // Lengths 0..=40 cover the empty key, every tail length and keys
        // ending exactly on a block; each byte changes the result.
        let key: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
        let mut seen = std::collections::HashSet::new();
        for n in 0..=key.len() {
            assert!(seen.insert(hashlittle(&key[..n], 0)), "collision at {n}");
        }
    }
}
