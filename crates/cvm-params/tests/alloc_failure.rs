//! Allocations sized by counts read from the file go through
//! `tensor_core::try_with_capacity`/`try_zeroed`: a stream that claims to be
//! 4 EiB long (a sparse file, a lying `Seek`) gets past the remaining-bytes
//! checks, and with `Limits::unlimited()` the allocation itself is refused
//! with a typed error naming what it was for, never the allocator's abort.

use cvm_params::{Error, LazyParams, ReadOptions};
use tensor_core::Limits;

#[path = "../../tensor-core/tests/support/hostile_alloc.rs"]
#[allow(dead_code)]
mod hostile_alloc;
use hostile_alloc::Lying;

fn header(names: u64) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&0xF7E5_8D4F_0504_9CB7u64.to_le_bytes());
    f.extend_from_slice(&0u64.to_le_bytes());
    f.extend_from_slice(&names.to_le_bytes());
    f
}

fn unlimited() -> ReadOptions {
    ReadOptions::default().with_limits(Limits::unlimited())
}

#[test]
fn a_name_table_too_big_to_allocate_is_a_typed_error() {
    // 2^56 names of 32 bytes each: more than any address space holds.
    let stream = Lying::new(header(1 << 56), 1 << 62);
    let e = LazyParams::from_reader(stream, &unlimited()).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Limit {
                error: tensor_core::Error::OutOfMemory { what, .. },
                ..
            } if what == "the name table"
        ),
        "{e}"
    );
    assert!(e.to_string().contains("byte 16"), "{e}");
    // The default limits refuse the count before any allocation.
    let stream = Lying::new(header(1 << 56), 1 << 62);
    let e = LazyParams::from_reader(stream, &ReadOptions::default()).unwrap_err();
    assert!(e.to_string().contains("tensor count"), "{e}");
}

#[test]
fn a_name_too_long_to_allocate_is_an_error() {
    let mut f = header(1);
    f.extend_from_slice(&(1u64 << 61).to_le_bytes());
    let stream = Lying::new(f, 1 << 62);
    let e = LazyParams::from_reader(stream, &unlimited()).unwrap_err();
    assert!(e.to_string().contains("name 0"), "{e}");
    assert!(
        matches!(
            &e,
            Error::Limit {
                error: tensor_core::Error::OutOfMemory { what, bytes },
                ..
            } if what == "a name" && *bytes == 1 << 61
        ),
        "{e}"
    );
    // the allocation error is the error's source, for callers that walk causes
    let source = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<tensor_core::Error>());
    assert!(
        matches!(source, Some(tensor_core::Error::OutOfMemory { .. })),
        "{e}"
    );
}
