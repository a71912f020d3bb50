//! Allocations sized by counts in the file go through
//! `tensor_core::try_with_capacity`/`try_reserve`: with an allocator that
//! refuses anything over 1 GiB (as a small machine or `ulimit -v` would), a
//! stream that claims to be 4 EiB long and counts of 2^32 - 1 under
//! `Limits::unlimited()` end in a typed error naming what was being
//! allocated, never in the allocator's abort.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Cursor, Read, Seek, SeekFrom};

use primitiv_format::{Error, ReadOptions, index};
use tensor_core::Limits;

/// The system allocator, refusing any single allocation over 1 GiB.
struct Refuse;
unsafe impl GlobalAlloc for Refuse {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if l.size() > 1 << 30 {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
}
#[global_allocator]
static A: Refuse = Refuse;

/// A stream whose end is reported at `len` whatever its real length.
#[derive(Debug)]
struct Lying(Cursor<Vec<u8>>, u64);
impl Read for Lying {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}
impl Seek for Lying {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        match pos {
            SeekFrom::End(0) => Ok(self.1),
            other => self.0.seek(other),
        }
    }
}

/// Version 0.1 and data type `dt << 8`.
fn head(dt: u8) -> Vec<u8> {
    vec![0xce, 0, 0, 0, 0, 0xce, 0, 0, 0, 1, 0xce, 0, 0, dt, 0]
}

fn refused(mut bytes: Vec<u8>, what: &str) {
    // the stream is read through a 64 KiB window: let each read be filled
    bytes.resize(256 << 10, 0);
    let opts = ReadOptions::default().with_limits(Limits::unlimited());
    let e = index(Lying(Cursor::new(bytes), 1 << 62), &opts).unwrap_err();
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
