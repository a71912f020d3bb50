//! Property tests for the writer/reader pairs: `.h5` parameter files alone,
//! and `.nnp` archives with `parameter.h5` and with `parameter.protobuf`.
//! Random parameter names (nested groups, non-ASCII, long; empty where the
//! format allows it: protobuf), every dtype each format stores, shapes from
//! 0-d and zero-size up to high ranks, values with NaN payloads and -0.0
//! compared bit for bit, and `need_grad`. Parameters come back in write
//! order (the `index` attribute, or the protobuf order); writing is
//! deterministic and re-writing what was read gives the same bytes.

use std::io::Cursor;

use nnp_archive::nnabla_proto::{Executor, NNablaProtoBuf, Network};
use nnp_archive::{Nnp, ParamFormat, Parameter, ParameterSet, ReadOptions, WriteOptions, h5};
use proptest::prelude::*;
use tensor_core::{DType, Tensor};

/// The dtypes the `.h5` writer stores.
const H5_DTYPES: [DType; 12] = [
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
];

/// One HDF5 link name: ASCII, non-ASCII, long (never empty, `.` or with NUL).
fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[A-Za-z0-9_.-]{1,10}",
        2 => "[α-ω日本語é ]{1,6}",
        1 => "[a-z]{100,300}",
    ]
    .prop_filter("`.` is not a link name", |c| c != ".")
}

/// A parameter path of 1 to 3 components (`fc1/affine/W`).
fn h5_name() -> impl Strategy<Value = String> {
    proptest::collection::vec(component(), 1..=3).prop_map(|c| c.join("/"))
}

/// Any name, empty included: protobuf stores a string.
fn pb_name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        h5_name(),
        "[ -~]{1,20}",
        "[α-ω日本語é/]{1,8}",
    ]
}

fn dims(max_rank: usize) -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![
        4 => proptest::collection::vec(0usize..4, 0..=3),
        1 => proptest::collection::vec(1usize..=2, 4..=8),
        1 => (1usize..=max_rank).prop_map(|r| vec![1; r]),
        1 => (1usize..=max_rank).prop_map(|r| { let mut v = vec![1; r]; v[0] = 0; v }),
    ]
}

fn f32_bits() -> impl Strategy<Value = u32> {
    prop_oneof![
        3 => any::<u32>(),
        1 => (0u32..0x40_0000).prop_map(|p| 0x7fc0_0000 | p),
        1 => (1u32..0x40_0000).prop_map(|p| 0xff80_0000 | p),
        1 => Just(0x8000_0000u32),
    ]
}

fn element(dtype: DType) -> BoxedStrategy<Vec<u8>> {
    match dtype {
        DType::Bool => (0u8..=1).prop_map(|b| vec![b]).boxed(),
        DType::F32 => f32_bits().prop_map(|b| b.to_le_bytes().to_vec()).boxed(),
        DType::F64 => prop_oneof![
            any::<u64>(),
            any::<u64>().prop_map(|p| 0x7ff0_0000_0000_0001 | p),
            Just(0x8000_0000_0000_0000u64),
        ]
        .prop_map(|b| b.to_le_bytes().to_vec())
        .boxed(),
        DType::F16 => prop_oneof![
            any::<u16>(),
            Just(0x8000u16),
            (1u16..0x3ff).prop_map(|p| 0x7c00 | p)
        ]
        .prop_map(|b| b.to_le_bytes().to_vec())
        .boxed(),
        _ => proptest::collection::vec(any::<u8>(), dtype.size()).boxed(),
    }
}

fn tensor_of(dtypes: &'static [DType], max_rank: usize) -> impl Strategy<Value = Tensor<'static>> {
    (proptest::sample::select(dtypes), dims(max_rank)).prop_flat_map(|(dtype, dims)| {
        let n: usize = dims.iter().product();
        proptest::collection::vec(element(dtype), n)
            .prop_map(move |e| Tensor::new(dtype, dims.clone(), e.concat()).expect("sizes match"))
    })
}

/// No name twice, and no name that is a group of another (`a` and `a/b`).
fn valid_h5_names(params: &mut Vec<Parameter<'static>>) {
    let names: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
    let mut seen = std::collections::HashSet::new();
    params.retain(|p| {
        let prefix = format!("{}/", p.name);
        seen.insert(p.name.clone())
            && !names
                .iter()
                .any(|n| n.starts_with(&prefix) || p.name.starts_with(&format!("{n}/")))
    });
}

/// HDF5 allows 32 dims.
fn h5_params() -> impl Strategy<Value = Vec<Parameter<'static>>> {
    proptest::collection::vec((h5_name(), tensor_of(&H5_DTYPES, 32), any::<bool>()), 0..6).prop_map(
        |v| {
            let mut ps: Vec<Parameter<'static>> = v
                .into_iter()
                .map(|(n, t, g)| Parameter::new(n, t, g))
                .collect();
            valid_h5_names(&mut ps);
            ps
        },
    )
}

/// Protobuf parameters are f32; names unique (a set keyed by name).
fn pb_params() -> impl Strategy<Value = Vec<Parameter<'static>>> {
    proptest::collection::vec(
        (pb_name(), tensor_of(&[DType::F32], 16), any::<bool>()),
        0..6,
    )
    .prop_map(|v| {
        let mut seen = std::collections::HashSet::new();
        v.into_iter()
            .filter(|(n, _, _)| seen.insert(n.clone()))
            .map(|(n, t, g)| Parameter::new(n, t, g))
            .collect()
    })
}

fn check_same(read: &[Parameter<'_>], written: &[Parameter<'_>]) -> Result<(), TestCaseError> {
    prop_assert_eq!(read.len(), written.len());
    for (r, w) in read.iter().zip(written) {
        prop_assert_eq!(&r.name, &w.name);
        prop_assert_eq!(r.need_grad, w.need_grad, "need_grad of {}", &w.name);
        prop_assert_eq!(r.tensor.dtype(), w.tensor.dtype(), "dtype of {}", &w.name);
        prop_assert_eq!(r.tensor.dims(), w.tensor.dims(), "dims of {}", &w.name);
        prop_assert_eq!(r.tensor.bytes(), w.tensor.bytes(), "bytes of {}", &w.name);
    }
    Ok(())
}

fn write_tensors(params: &[Parameter<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    h5::write(&mut out, params).expect("writable");
    out
}

fn model() -> impl Strategy<Value = NNablaProtoBuf> {
    (pb_name(), 1i64..64, pb_name()).prop_map(|(net, batch, exe)| NNablaProtoBuf {
        network: vec![Network {
            name: net.clone(),
            batch_size: batch,
            ..Network::default()
        }],
        executor: vec![Executor {
            name: exe,
            network_name: net,
            ..Executor::default()
        }],
        ..NNablaProtoBuf::default()
    })
}

fn archive_bytes(nnp: &Nnp<'_>, format: ParamFormat) -> Vec<u8> {
    nnp.write(
        Cursor::new(Vec::new()),
        &WriteOptions::default().with_param_format(format),
    )
    .expect("writable")
    .into_inner()
}

fn check_nnp(
    model: &NNablaProtoBuf,
    params: Vec<Parameter<'static>>,
    format: ParamFormat,
) -> Result<(), TestCaseError> {
    let set: ParameterSet = params.iter().cloned().collect();
    let nnp = Nnp::new(model.clone(), set).expect("a model");
    let bytes = archive_bytes(&nnp, format);
    prop_assert_eq!(&archive_bytes(&nnp, format), &bytes);
    let back = Nnp::parse_with(&bytes, &ReadOptions::default()).expect("reads back");
    prop_assert_eq!(back.networks(), &model.network[..]);
    prop_assert_eq!(back.executors(), &model.executor[..]);
    let read: Vec<Parameter<'_>> = back.parameters().iter().cloned().collect();
    check_same(&read, &params)?;
    prop_assert_eq!(&archive_bytes(&back, format), &bytes);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn h5_round_trips(params in h5_params()) {
        let file = write_tensors(&params);
        prop_assert_eq!(&write_tensors(&params), &file);
        let read = h5::parse(&file).expect("reads back");
        check_same(&read, &params)?;
        prop_assert_eq!(&write_tensors(&read), &file);
    }

    #[test]
    fn nnp_with_h5_round_trips(model in model(), params in h5_params()) {
        check_nnp(&model, params, ParamFormat::H5)?;
    }

    #[test]
    fn nnp_with_protobuf_round_trips(model in model(), params in pb_params()) {
        check_nnp(&model, params, ParamFormat::Protobuf)?;
    }
}
