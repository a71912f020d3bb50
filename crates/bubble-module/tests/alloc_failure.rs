//! Allocations sized by counts in a `.tsm` go through
//! `tensor_core::try_with_capacity`/`try_zeroed`: with an allocator that
//! refuses anything over 1 GiB (a small machine, `ulimit -v`), a stream
//! that claims to be 4 EiB long and counts of 2^31 - 1 under
//! `Limits::unlimited()` end in a typed error naming what and where, never in
//! the allocator's abort; the default limits refuse a million nodes first.

use bubble_module::{Error, MODULE_CODE, Module, ReadOptions};
use tensor_core::Limits;

#[path = "../../tensor-core/tests/support/hostile_alloc.rs"]
#[allow(dead_code)]
mod hostile_alloc;
use hostile_alloc::Lying;

/// A module header with no inputs or outputs and `nodes` nodes, then `rest`.
fn module(nodes: u32, rest: &[u32]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&0u32.to_le_bytes());
    f.extend_from_slice(&MODULE_CODE.to_le_bytes());
    f.extend_from_slice(&[0u8; 120]);
    for w in [0, 0, nodes].iter().chain(rest) {
        f.extend_from_slice(&w.to_le_bytes());
    }
    f
}

fn refused(bytes: Vec<u8>, what: &str, place: &str) {
    let opts = ReadOptions::default().with_limits(Limits::unlimited());
    let e = Module::index(Lying::new(bytes, 1 << 62), &opts).unwrap_err();
    match &e {
        Error::Limit {
            at,
            source: tensor_core::Error::OutOfMemory { what: w, .. },
        } => {
            assert_eq!(w, what, "{e}");
            assert!(at.contains(place), "{e}");
        }
        other => panic!("expected an allocation error for {what}, got {other}"),
    }
}

#[test]
fn counts_too_big_to_allocate_are_typed_errors() {
    // one node claiming 2^31 - 1 params
    refused(module(1, &[0x7fff_ffff]), "params", "offset 140");
    // one node, one param with a 1-byte key claiming 2^31 - 1 fields
    let mut f = module(1, &[1, 1]);
    f.push(b'k');
    f.extend_from_slice(&0x7fff_ffffu32.to_le_bytes());
    refused(f, "fields", "offset 149");
    // a module claiming 2^31 - 1 outputs
    let mut f = module(0, &[]);
    f.truncate(f.len() - 8);
    f.extend_from_slice(&0x7fff_ffffu32.to_le_bytes());
    refused(f, "module output index", "offset 132");
}

#[test]
fn a_million_nodes_are_refused_by_the_default_limits() {
    let mut f = module(1 << 20, &[]);
    f.resize(f.len() + (8 << 20), 0);
    let e = Module::parse(&f).unwrap_err();
    assert!(
        matches!(&e, Error::Limit { at, .. } if at.contains("node count")),
        "{e}"
    );
    assert!(e.to_string().contains("131072"), "{e}");
}
