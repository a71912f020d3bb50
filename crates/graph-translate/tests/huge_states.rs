//! A recurrent layer without an initial state over a batch the model
//! declares huge is refused with a reason or imported, never an
//! allocation sized by the declared shape (an abort): a zero state made a
//! constant is bounded.
#![cfg(all(feature = "nnabla", feature = "tennis"))]

use graph_translate::import::{ImportOptions, onnx_to_nnabla, onnx_to_tennis};
use onnx_format::builder::{Dim, GraphBuilder, attr};
use onnx_format::proto::tensor_proto::DataType;

/// `op` (GRU or LSTM) of hidden size 1 over X of `[1, batch, 2]`, no
/// bias and no initial state.
fn model(op: &str, batch: i64) -> onnx_format::Model {
    let gates = if op == "GRU" { 3 } else { 4 };
    let mut b = GraphBuilder::new("g");
    b.input(
        "x",
        DataType::Float,
        &[Dim::Value(1), Dim::Value(batch), Dim::Value(2)],
    );
    let w = b.const_f32("w", &vec![0.5; 2 * gates], &[1, gates as i64, 2]);
    let r = b.const_f32("r", &vec![0.5; gates], &[1, gates as i64, 1]);
    b.node(
        op,
        "",
        &["x", &w, &r],
        &["y"],
        vec![attr::int("hidden_size", 1)],
    );
    b.output(
        "y",
        DataType::Float,
        &[
            Dim::Value(1),
            Dim::Value(1),
            Dim::Value(batch),
            Dim::Value(1),
        ],
    );
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
    onnx_format::Model::parse(&bytes).unwrap()
}

#[test]
fn a_huge_batch_without_an_initial_state_is_refused() {
    for op in ["GRU", "LSTM"] {
        // a small one imports (the test builds what it means to)
        let m = model(op, 3);
        onnx_to_nnabla(&m, &ImportOptions::default()).unwrap_or_else(|e| panic!("{op}: {e}"));
        onnx_to_tennis(&m, &ImportOptions::default()).unwrap_or_else(|e| panic!("{op}: {e}"));
        for batch in [1i64 << 40, 1 << 46] {
            let m = model(op, batch);
            for r in [
                onnx_to_nnabla(&m, &ImportOptions::default()).map(|_| ()),
                onnx_to_tennis(&m, &ImportOptions::default()).map(|_| ()),
            ] {
                // GRU makes its zero state a constant: refused, saying
                // why; LSTM's lowerings start from a scalar zero
                match r {
                    Err(e) => assert!(!e.to_string().is_empty()),
                    Ok(()) => assert_eq!(op, "LSTM", "{op} over a batch of {batch} imported"),
                }
                if op == "GRU" {
                    let e = onnx_to_tennis(&m, &ImportOptions::default()).unwrap_err();
                    assert!(e.to_string().contains("zeros of shape"), "{e}");
                }
            }
        }
    }
}

#[test]
fn an_input_declaring_more_than_2_48_elements_is_refused() {
    // LayerNormalization over every axis of [2^32, 2^32] (the count of
    // its normalized elements overflowed i64)
    let mut b = GraphBuilder::new("g");
    let big = Dim::Value(1 << 32);
    b.input("x", DataType::Float, &[big.clone(), big.clone()]);
    let s = b.const_f32("s", &[1.0], &[1]);
    b.node(
        "LayerNormalization",
        "",
        &["x", &s],
        &["y"],
        vec![attr::int("axis", 0)],
    );
    b.output("y", DataType::Float, &[big.clone(), big]);
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &b.finish(&Default::default())).unwrap();
    let m = onnx_format::Model::parse(&bytes).unwrap();
    for e in [
        onnx_to_nnabla(&m, &ImportOptions::default())
            .map(|_| ())
            .unwrap_err(),
        onnx_to_tennis(&m, &ImportOptions::default())
            .map(|_| ())
            .unwrap_err(),
    ] {
        assert!(e.to_string().contains("more than 2^48 elements"), "{e}");
    }
}
