//! Shared by the readers' `alloc_failure` tests (each includes this file
//! with `#[path]`): an allocator that refuses, as a small machine or
//! `ulimit -v` would, and a stream that claims to be longer than it is (a
//! sparse file, a lying `Seek`), so that an allocation sized by a claim in
//! the file is refused deterministically and the reader must answer with a
//! typed error instead of the allocator's abort.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Cursor, Read, Seek, SeekFrom};

/// The most one allocation may ask for: 1 GiB.
pub const MAX_ONE_ALLOCATION: usize = 1 << 30;

/// The system allocator, refusing any single allocation over
/// [`MAX_ONE_ALLOCATION`] (a null pointer: `try_reserve` reports it, a
/// plain `Vec::with_capacity` aborts the test process).
pub struct Refuse;

// SAFETY: forwards to the system allocator, or returns null (refusal),
// which the `GlobalAlloc` contract allows.
unsafe impl GlobalAlloc for Refuse {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if l.size() > MAX_ONE_ALLOCATION {
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
pub struct Lying {
    inner: Cursor<Vec<u8>>,
    len: u64,
}

impl Lying {
    /// `bytes`, claiming to be `len` bytes long.
    pub fn new(bytes: Vec<u8>, len: u64) -> Self {
        Lying {
            inner: Cursor::new(bytes),
            len,
        }
    }
}

impl Read for Lying {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf)
    }
}

impl Seek for Lying {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        match pos {
            SeekFrom::End(0) => Ok(self.len),
            other => self.inner.seek(other),
        }
    }
}
