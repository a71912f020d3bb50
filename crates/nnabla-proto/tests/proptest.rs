//! Property tests for the writer/reader pairs: binary `.protobuf` and text
//! `.nntxt` parameters (names of any characters, empty, long and non-ASCII
//! included; shapes from 0-d and zero-size up to rank 16; f32 values with
//! NaN payloads, infinities and -0.0; `need_grad`), and whole models
//! through text: print → parse → print is the identity.
//!
//! Binary keeps every bit. Text keeps every bit except NaN payloads (Python's
//! `text_format` prints every NaN as `nan`), so NaNs are compared as NaNs
//! there. The streaming parameter writers give exactly the bytes of the
//! message encoder and printer for the same parameters (the reference
//! order: the parameters' order), so writing is deterministic.

use nnabla_proto::proto::{AffineParameter, ConcatenateParameter, LeakyReLuParameter, function};
use nnabla_proto::{
    Executor, Function, NNablaProtoBuf, Network, RepeatInfo, Shape, Variable, binary,
    parameter_from_tensor, parameters, text,
};
use proptest::prelude::*;
use tensor_core::{DType, Tensor};

/// Strings: empty, identifiers, printable ASCII with quotes and
/// backslashes, control characters, non-ASCII, long.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z_/0-9]{1,12}",
        "[ -~]{1,16}",
        "[\\x00-\\x1f\"'\\\\]{1,6}",
        "[α-ω日本語é🙂]{1,6}",
        "[a-z]{100,300}",
    ]
}

fn f32_bits() -> impl Strategy<Value = u32> {
    prop_oneof![
        3 => any::<u32>(),
        1 => (0u32..0x40_0000).prop_map(|p| 0x7fc0_0000 | p),
        1 => (1u32..0x40_0000).prop_map(|p| 0xff80_0000 | p),
        1 => Just(0x8000_0000u32),
        1 => Just(0x7f80_0000u32),
        1 => Just(0xff80_0000u32),
        1 => 1u32..0x80_0000,
    ]
}

fn dims() -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![
        4 => proptest::collection::vec(0usize..4, 0..=3),
        1 => proptest::collection::vec(1usize..=2, 4..=8),
        1 => (1usize..=16).prop_map(|r| vec![1; r]),
        1 => (1usize..=16).prop_map(|r| { let mut v = vec![1; r]; v[r / 2] = 0; v }),
    ]
}

fn tensor() -> impl Strategy<Value = Tensor<'static>> {
    dims().prop_flat_map(|dims| {
        let n: usize = dims.iter().product();
        proptest::collection::vec(f32_bits(), n).prop_map(move |bits| {
            let bytes: Vec<u8> = bits.iter().flat_map(|b| b.to_le_bytes()).collect();
            Tensor::new(DType::F32, dims.clone(), bytes).expect("sizes match")
        })
    })
}

type Params = Vec<(String, Tensor<'static>, bool)>;

fn params() -> impl Strategy<Value = Params> {
    proptest::collection::vec((text(), tensor(), any::<bool>()), 0..6)
}

fn as_model(params: &Params) -> NNablaProtoBuf {
    NNablaProtoBuf {
        parameter: params
            .iter()
            .map(|(n, t, g)| parameter_from_tensor(n, t, *g).expect("f32"))
            .collect(),
        ..NNablaProtoBuf::default()
    }
}

fn bits(t: &Tensor<'_>) -> Vec<u32> {
    t.view::<f32>()
        .expect("f32")
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

/// Bit-equal, or (when `nan_is_nan`) both NaN.
fn same_values(a: &Tensor<'_>, b: &Tensor<'_>, nan_is_nan: bool) -> bool {
    let (a, b) = (bits(a), bits(b));
    a.len() == b.len()
        && a.iter().zip(&b).all(|(&x, &y)| {
            x == y || (nan_is_nan && f32::from_bits(x).is_nan() && f32::from_bits(y).is_nan())
        })
}

fn check_params(
    read: &[nnabla_proto::ParamTensor<'_>],
    written: &Params,
    nan_is_nan: bool,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(read.len(), written.len());
    for (r, (n, t, g)) in read.iter().zip(written) {
        prop_assert_eq!(&r.name, n);
        prop_assert_eq!(r.need_grad, *g);
        prop_assert_eq!(r.tensor.dtype(), DType::F32);
        prop_assert_eq!(r.tensor.dims(), t.dims());
        prop_assert!(same_values(&r.tensor, t, nan_is_nan), "values of {:?}", n);
    }
    Ok(())
}

fn shape() -> impl Strategy<Value = Option<Shape>> {
    proptest::option::of(proptest::collection::vec(-1i64..5, 0..=4).prop_map(|dim| Shape { dim }))
}

fn variable() -> impl Strategy<Value = Variable> {
    (
        text(),
        prop_oneof![Just("Buffer"), Just("Parameter")],
        shape(),
    )
        .prop_map(|(name, ty, shape)| Variable {
            name,
            r#type: ty.to_string(),
            shape,
            ..Variable::default()
        })
}

fn function_param() -> impl Strategy<Value = Option<function::Parameter>> {
    prop_oneof![
        Just(None),
        any::<i64>().prop_map(|base_axis| Some(function::Parameter::AffineParam(
            AffineParameter { base_axis }
        ))),
        (f32_bits(), any::<bool>()).prop_map(|(a, inplace)| Some(
            function::Parameter::LeakyReluParam(LeakyReLuParameter {
                alpha: f32::from_bits(a),
                inplace
            })
        )),
        any::<i64>().prop_map(|axis| Some(function::Parameter::ConcatenateParam(
            ConcatenateParameter { axis }
        ))),
    ]
}

fn function() -> impl Strategy<Value = Function> {
    (
        text(),
        "[A-Z][a-zA-Z]{0,10}",
        proptest::collection::vec(text(), 0..3),
        proptest::collection::vec(text(), 0..3),
        function_param(),
    )
        .prop_map(|(name, ty, input, output, parameter)| Function {
            name,
            r#type: ty,
            input,
            output,
            parameter,
            ..Function::default()
        })
}

fn network() -> impl Strategy<Value = Network> {
    (
        text(),
        any::<i64>(),
        proptest::collection::vec((text(), any::<i64>()), 0..2),
        proptest::collection::vec(variable(), 0..4),
        proptest::collection::vec(function(), 0..4),
    )
        .prop_map(|(name, batch_size, reps, variable, function)| Network {
            name,
            batch_size,
            repeat_info: reps
                .into_iter()
                .map(|(id, times)| RepeatInfo { id, times })
                .collect(),
            variable,
            function,
        })
}

fn model() -> impl Strategy<Value = NNablaProtoBuf> {
    (
        text(),
        proptest::collection::vec(network(), 0..3),
        params(),
        proptest::collection::vec((text(), text()), 0..2),
    )
        .prop_map(|(version, network, ps, exes)| NNablaProtoBuf {
            version,
            network,
            parameter: as_model(&ps).parameter,
            executor: exes
                .into_iter()
                .map(|(name, network_name)| Executor {
                    name,
                    network_name,
                    ..Executor::default()
                })
                .collect(),
            ..NNablaProtoBuf::default()
        })
}

/// The model with every f32 NaN replaced by the canonical NaN (what text keeps).
fn canonical_nans(m: &NNablaProtoBuf) -> NNablaProtoBuf {
    let mut m = m.clone();
    let fix = |v: &mut f32| {
        if v.is_nan() {
            *v = f32::NAN;
        }
    };
    for p in &mut m.parameter {
        p.data.iter_mut().for_each(fix);
    }
    for n in &mut m.network {
        for f in &mut n.function {
            if let Some(function::Parameter::LeakyReluParam(l)) = &mut f.parameter {
                fix(&mut l.alpha);
            }
        }
    }
    m
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn binary_parameters_round_trip(ps in params()) {
        let mut file = Vec::new();
        binary::write_parameters(&mut file, ps.iter().map(|(n, t, g)| (n.as_str(), t, *g)))
            .expect("writable");
        // Same bytes as the message encoder (deterministic).
        prop_assert_eq!(&binary::encode(&as_model(&ps)), &file);
        let borrowed = binary::parse(&file).expect("reads back");
        check_params(&borrowed.parameters, &ps, false)?;
        for p in &borrowed.parameters {
            prop_assert!(p.tensor.storage().is_zero_copy() || p.tensor.bytes().is_empty());
        }
        let owned = binary::decode(&file).expect("reads back");
        check_params(&parameters(&owned).expect("valid"), &ps, false)?;
        prop_assert_eq!(&binary::encode(&owned), &file);
    }

    #[test]
    fn text_parameters_round_trip(ps in params()) {
        let mut file = Vec::new();
        text::write_parameters(&mut file, ps.iter().map(|(n, t, g)| (n.as_str(), t, *g)))
            .expect("writable");
        let text = String::from_utf8(file).expect("UTF-8");
        prop_assert_eq!(&text::print(&as_model(&ps)).expect("printable"), &text);
        let model = text::parse(&text).expect("parses back");
        check_params(&parameters(&model).expect("valid"), &ps, true)?;
        prop_assert_eq!(text::print(&model).expect("printable"), text);
    }

    #[test]
    fn text_model_print_parse_print_is_identity(m in model()) {
        let text = text::print(&m).expect("printable");
        let back = text::parse(&text).expect("parses back");
        prop_assert_eq!(&text::print(&back).expect("printable"), &text);
        // Everything but NaN payloads survives, bit for bit.
        prop_assert_eq!(binary::encode(&back), binary::encode(&canonical_nans(&m)));
        // And binary keeps everything.
        let bin = binary::encode(&m);
        let decoded = binary::decode(&bin).expect("decodes");
        prop_assert_eq!(binary::encode(&decoded), bin);
    }
}
