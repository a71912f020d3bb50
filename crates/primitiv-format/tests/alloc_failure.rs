//! Allocations sized by counts in the file go through
//! `tensor_core::try_with_capacity`/`try_reserve`: with an allocator that
//! refuses anything over 1 GiB (as a small machine or `ulimit -v` would), a
//! stream that claims to be 4 EiB long and counts of 2^32 - 1 under
//! `Limits::unlimited()` end in a typed error naming what was being
//! allocated, never in the allocator's abort.

use primitiv_format::{Error, ReadOptions, index};
use tensor_core::Limits;

#[path = "../../tensor-core/tests/support/hostile_alloc.rs"]
#[allow(dead_code)]
mod hostile_alloc;
use hostile_alloc::Lying;

/// Version 0.1 and data type `dt << 8`.
fn head(dt: u8) -> Vec<u8> {
    vec![0xce, 0, 0, 0, 0, 0xce, 0, 0, 0, 1, 0xce, 0, 0, dt, 0]
}

fn refused(mut bytes: Vec<u8>, what: &str) {
    // the stream is read through a 64 KiB window: let each read be filled
    bytes.resize(256 << 10, 0);
    let opts = ReadOptions::default().with_limits(Limits::unlimited());
    let e = index(Lying::new(bytes, 1 << 62), &opts).unwrap_err();
    match e.root() {
        Error::Limit {
            source: tensor_core::Error::OutOfMemory { what: w, .. },
            ..
        } => assert_eq!(w, what, "{e}"),
        other => panic!("expected an allocation error for {what}, got {other}"),
    }
}

#[test]
fn a_stats_count_too_big_to_allocate_is_a_typed_error() {
    // a scalar parameter value, then 2^32 - 1 stats
    let mut p = head(2);
    p.extend_from_slice(&[0x90, 0xce, 0, 0, 0, 1, 0xc4, 4, 0, 0, 0x80, 0x3f]);
    p.extend_from_slice(&[0xce, 0xff, 0xff, 0xff, 0xff]);
    refused(p, "stats");
}

#[test]
fn a_parameter_count_too_big_to_allocate_is_a_typed_error() {
    let mut m = head(3);
    m.extend_from_slice(&[0xce, 0xff, 0xff, 0xff, 0xff]);
    refused(m, "model entries");
}
