//! Property tests: any dictionary the writer accepts reads back with the
//! same names (as bytes), order, dtypes, shapes and payload bytes (NaN
//! payloads and -0.0 included: compared bit for bit), under both bool
//! encodings; writing is a pure function of the items (same bytes twice),
//! and re-writing what was read gives the input bytes back.

use cvm_params::{BoolEncoding, Params, ReadOptions, WriteOptions};
use proptest::prelude::*;
use tensor_core::{DType, Limits, Tensor};

/// Every dtype a `.params` file can hold.
const STORABLE: [DType; 21] = [
    DType::Bool,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F16,
    DType::F32,
    DType::F64,
    DType::BF16,
    DType::F8E3M4,
    DType::F8E4M3,
    DType::F8E4M3B11Fnuz,
    DType::F8E4M3Fn,
    DType::F8E4M3Fnuz,
    DType::F8E5M2,
    DType::F8E5M2Fnuz,
    DType::F8E8M0Fnu,
];

/// Names as bytes: empty, ASCII with separators, non-ASCII UTF-8, long,
/// and arbitrary (not even UTF-8) bytes: the format stores a length and
/// bytes.
fn name() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(Vec::new()),
        "[a-z_/.0-9]{1,12}".prop_map(String::into_bytes),
        "[α-ω日本語é ]{1,8}".prop_map(String::into_bytes),
        "[a-z]{200,600}".prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 1..16),
    ]
}

/// Dims: 0-d, zero-size, small; occasionally a high rank of ones (the
/// reader's default rank limit is 64).
fn dims() -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![
        4 => proptest::collection::vec(0usize..4, 0..=4),
        1 => (0usize..=64).prop_map(|r| vec![1; r]),
        1 => (1usize..=64).prop_map(|r| { let mut v = vec![1; r]; v[r / 2] = 0; v }),
    ]
}

/// One element's bytes, with the interesting float patterns (NaN payloads,
/// signalling NaN, -0.0, infinities) mixed into random bits.
fn element(dtype: DType) -> BoxedStrategy<Vec<u8>> {
    match dtype {
        DType::F32 => prop_oneof![
            any::<u32>(),
            (0u32..0x40_0000).prop_map(|p| 0x7fc0_0000 | p),
            (1u32..0x40_0000).prop_map(|p| 0xff80_0000 | p),
            Just(0x8000_0000u32),
            Just(0x7f80_0000u32),
        ]
        .prop_map(|b| b.to_le_bytes().to_vec())
        .boxed(),
        DType::F64 => prop_oneof![
            any::<u64>(),
            any::<u64>().prop_map(|p| 0x7ff8_0000_0000_0000 | (p & 0x7_ffff_ffff_ffff)),
            Just(0x8000_0000_0000_0000u64),
        ]
        .prop_map(|b| b.to_le_bytes().to_vec())
        .boxed(),
        DType::F16 | DType::BF16 => prop_oneof![
            any::<u16>(),
            Just(0x8000u16),
            (1u16..0x7f).prop_map(|p| 0x7f80 | p),
            (1u16..0x3ff).prop_map(|p| 0x7c00 | p),
        ]
        .prop_map(|b| b.to_le_bytes().to_vec())
        .boxed(),
        _ => proptest::collection::vec(any::<u8>(), dtype.size()).boxed(),
    }
}

fn tensor() -> impl Strategy<Value = Tensor<'static>> {
    (proptest::sample::select(&STORABLE[..]), dims()).prop_flat_map(|(dtype, dims)| {
        let n: usize = dims.iter().product();
        proptest::collection::vec(element(dtype), n).prop_map(move |elems| {
            let bytes: Vec<u8> = elems.concat();
            Tensor::new(dtype, dims.clone(), bytes).expect("sizes match")
        })
    })
}

/// Items with distinct names (duplicates are refused by the strict reader).
fn items() -> impl Strategy<Value = Vec<(Vec<u8>, Tensor<'static>)>> {
    proptest::collection::vec((name(), tensor()), 0..6).prop_map(|mut v| {
        let mut seen = std::collections::HashSet::new();
        v.retain(|(n, _)| seen.insert(n.clone()));
        v
    })
}

fn write(items: &[(Vec<u8>, Tensor<'static>)], bools: BoolEncoding) -> Vec<u8> {
    let mut out = Vec::new();
    let opts = WriteOptions::default().with_bools(bools);
    cvm_params::write(&mut out, items.iter().map(|(n, t)| (n, t)), &opts).expect("writable");
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn write_then_read_is_identity(items in items(), legacy in any::<bool>()) {
        let bools = if legacy { BoolEncoding::Legacy } else { BoolEncoding::Dlpack };
        let file = write(&items, bools);
        let opts = ReadOptions::strict().with_limits(Limits::default());
        let params = Params::parse_with(&file, &opts).expect("reads back");
        prop_assert_eq!(params.len(), items.len());
        for (entry, (name, t)) in params.entries().iter().zip(&items) {
            prop_assert_eq!(entry.name_bytes(), &name[..]);
            let back = entry.tensor();
            prop_assert_eq!(back.dtype(), t.dtype());
            prop_assert_eq!(back.dims(), t.dims());
            prop_assert_eq!(back.bytes(), t.bytes());
            prop_assert!(back.storage().is_zero_copy());
            if t.dtype() == DType::Bool {
                prop_assert_eq!(entry.info().dl_type.bool_encoding(), Some(bools));
            }
        }
        // Deterministic, and what was read writes back to the same bytes.
        prop_assert_eq!(&write(&items, bools), &file);
        let again: Vec<(Vec<u8>, Tensor<'static>)> = params
            .entries()
            .iter()
            .map(|e| (e.name_bytes().to_vec(), e.tensor().to_owned_tensor()))
            .collect();
        prop_assert_eq!(&write(&again, bools), &file);
    }
}
