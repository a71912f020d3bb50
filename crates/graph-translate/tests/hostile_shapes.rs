//! Shape attributes and constant inputs no model means (huge pads,
//! strides of zero, repeats and block sizes whose products overflow) are
//! refused with words by both import targets, never a panic (debug builds
//! check overflow).
#![cfg(all(feature = "nnabla", feature = "tennis"))]

use graph_translate::import::{ImportOptions, onnx_to_nnabla, onnx_to_tennis};
use onnx_format::builder::{Dim, GraphBuilder, attr};
use onnx_format::proto::AttributeProto;
use onnx_format::proto::tensor_proto::DataType;

const BIG: i64 = i64::MAX / 2;

/// `y = op(x, extra inputs)` on an f32 1x2x4x4 `x`, with 3x3 weights
/// (`w`) for the convolutions.
fn model(
    op: &str,
    ins: &[&str],
    attrs: Vec<AttributeProto>,
    int_in: Option<&[i64]>,
) -> onnx_format::Model {
    let mut b = GraphBuilder::new("g");
    let d = |v: &[i64]| v.iter().map(|&v| Dim::Value(v)).collect::<Vec<_>>();
    b.input("x", DataType::Float, &d(&[1, 2, 4, 4]));
    let w = b.const_f32("w", &[0.5; 36], &[2, 2, 3, 3]);
    let mut names: Vec<String> = vec!["x".into()];
    for &i in ins {
        names.push(match i {
            "w" => w.clone(),
            _ => b.const_i64(i, int_in.unwrap_or(&[])),
        });
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    b.node(op, "", &refs, &["y"], attrs);
    b.output_unshaped("y", DataType::Float);
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
    onnx_format::Model::parse(&bytes).unwrap()
}

/// Both targets refuse `m`, naming `op`.
fn refused(m: &onnx_format::Model, op: &str) {
    let o = ImportOptions::default();
    let Err(a) = onnx_to_nnabla(m, &o) else {
        panic!("NNabla imported {op}");
    };
    let Err(b) = onnx_to_tennis(m, &o) else {
        panic!("TenniS imported {op}");
    };
    for e in [a.to_string(), b.to_string()] {
        assert!(e.contains(op), "{e}");
    }
}

#[test]
fn convolution_windows_past_any_length_are_refused() {
    let conv = |a: Vec<AttributeProto>| model("Conv", &["w"], a, None);
    refused(
        &conv(vec![attr::ints("pads", &[BIG, BIG, BIG, BIG])]),
        "Conv",
    );
    refused(&conv(vec![attr::ints("strides", &[0, 0])]), "Conv");
    refused(&conv(vec![attr::ints("strides", &[BIG, BIG])]), "Conv");
    refused(&conv(vec![attr::ints("dilations", &[BIG, BIG])]), "Conv");
    refused(&conv(vec![attr::ints("strides", &[1])]), "Conv");
    let pool = |a: Vec<AttributeProto>| {
        let mut a = a;
        a.push(attr::ints("kernel_shape", &[2, 2]));
        model("MaxPool", &[], a, None)
    };
    refused(
        &pool(vec![attr::ints("pads", &[BIG, 0, BIG, 0])]),
        "MaxPool",
    );
    refused(&pool(vec![attr::ints("strides", &[BIG, 1])]), "MaxPool");
    let big_kernel = model(
        "AveragePool",
        &[],
        vec![attr::ints("kernel_shape", &[BIG, BIG])],
        None,
    );
    refused(&big_kernel, "AveragePool");
}

#[test]
fn shapes_past_2_48_elements_are_refused() {
    let tile = model("Tile", &["r"], vec![], Some(&[BIG, BIG, 1, 1]));
    refused(&tile, "Tile");
    let ds = model(
        "SpaceToDepth",
        &[],
        vec![attr::int("blocksize", 1 << 40)],
        None,
    );
    refused(&ds, "SpaceToDepth");
}
