//! NNabla → ONNX: an `Affine` weight named `NAME__T` (how the ONNX import
//! stores a `Gemm` B with `transB` 1) is written back as `NAME`, transposed,
//! for a `Gemm` with `transB` 1; where `NAME` is taken, it stays as it is.

use std::collections::BTreeMap;

use graph_translate::export::{ExportOptions, nnabla};
use tensor_core::Tensor;

/// A network `x [2, 3]` → Affine(W, b) → `y [2, 2]`, with `extra`
/// another parameter variable (read by an Add after it) when given.
fn network(w: &str, extra: Option<&str>) -> String {
    let var = |n: &str, t: &str, d: &str| {
        format!("  variable {{ name: \"{n}\" type: \"{t}\" shape {{ {d} }} }}\n")
    };
    let mut s = String::from("network {\n  name: \"n\"\n  batch_size: 2\n");
    s += &var("x", "Buffer", "dim: 2 dim: 3");
    s += &var(w, "Parameter", "dim: 3 dim: 2");
    s += &var("b", "Parameter", "dim: 2");
    s += &var("y", "Buffer", "dim: 2 dim: 2");
    s += &format!(
        "  function {{ name: \"f\" type: \"Affine\" input: \"x\" input: \"{w}\" input: \"b\" \
         output: \"y\" affine_param {{ base_axis: 1 }} }}\n"
    );
    let out = match extra {
        Some(e) => {
            s += &var(e, "Parameter", "dim: 2 dim: 2");
            s += &var("z", "Buffer", "dim: 2 dim: 2");
            s += &format!(
                "  function {{ name: \"g\" type: \"Add2\" input: \"y\" input: \"{e}\" \
                 output: \"z\" }}\n"
            );
            "z"
        }
        None => "y",
    };
    s += "}\nexecutor {\n  name: \"e\"\n  network_name: \"n\"\n";
    s += "  data_variable { variable_name: \"x\" data_name: \"x\" }\n";
    s += &format!("  output_variable {{ variable_name: \"{out}\" data_name: \"{out}\" }}\n}}\n");
    s
}

/// Exports the network with `W` = [[1, 2], [3, 4], [5, 6]] under `w`:
/// the Gemm's inputs and attributes, and the initializers by name.
fn export(w: &str, extra: Option<&str>) -> (Vec<String>, String, BTreeMap<String, Vec<f64>>) {
    let model = nnabla_proto::text::parse(&network(w, extra)).unwrap();
    let mut weights: BTreeMap<String, Tensor<'static>> = BTreeMap::new();
    let wv = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    weights.insert(w.into(), Tensor::from_values([3, 2], &wv).unwrap());
    weights.insert(
        "b".into(),
        Tensor::from_values([2], &[0.5f32, -0.5]).unwrap(),
    );
    if let Some(e) = extra {
        weights.insert(e.into(), Tensor::from_values([2, 2], &[0f32; 4]).unwrap());
    }
    let (m, _) = nnabla::export(&model, &weights, &ExportOptions::new()).unwrap();
    let g = m.graph.unwrap();
    let gemm = g
        .node
        .iter()
        .find(|n| n.op_type.as_deref() == Some("Gemm"))
        .unwrap();
    let attrs = format!("{:?}", gemm.attribute);
    let inits = g
        .initializer
        .iter()
        .map(|t| {
            let v = onnx_format::read::tensor_from_proto(t, None, &Default::default()).unwrap();
            (t.name.clone().unwrap(), v.to_f64_vec().unwrap())
        })
        .collect();
    (gemm.input.clone(), attrs, inits)
}

#[test]
fn a_transposed_gemm_weight_gets_its_onnx_name_and_layout_back() {
    let (ins, attrs, inits) = export("fc.weight__T", None);
    assert_eq!(ins[1], "fc.weight");
    assert!(
        attrs.contains("transB") && attrs.contains("i: Some(1)"),
        "{attrs}"
    );
    // [2, 3]: the transpose of the stored [3, 2]
    assert_eq!(inits["fc.weight"], [1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
    assert!(!inits.contains_key("fc.weight__T"), "{inits:?}");
}

#[test]
fn a_taken_name_keeps_the_weight_as_it_is() {
    let (ins, attrs, inits) = export("fc.weight__T", Some("fc.weight"));
    assert_eq!(ins[1], "fc.weight__T");
    assert!(!attrs.contains("transB"), "{attrs}");
    assert_eq!(inits["fc.weight__T"], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    // and a weight without the suffix is exported as it is
    let (ins, _, _) = export("fc.weight", None);
    assert_eq!(ins[1], "fc.weight");
}
