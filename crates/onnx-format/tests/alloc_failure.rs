//! Allocations sized by an ONNX file's claims: with an allocator that
//! refuses anything over 1 GiB (a small machine, `ulimit -v`), a shape that
//! claims 2 GiB over an empty typed field is a mismatch found before any
//! buffer is allocated, and packed fields claiming giant lengths are refused
//! by the wire scan, never by the allocator's abort.

use onnx_format::proto::tensor_proto::DataType;
use onnx_format::proto::{GraphProto, ModelProto, TensorProto};
use onnx_format::{Error, Model};
use prost::Message;

#[path = "../../tensor-core/tests/support/hostile_alloc.rs"]
#[allow(dead_code)]
mod hostile_alloc;

fn model_with(initializer: TensorProto) -> Vec<u8> {
    ModelProto {
        ir_version: Some(7),
        graph: Some(GraphProto {
            initializer: vec![initializer],
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    }
    .encode_to_vec()
}

#[test]
fn a_2gib_shape_over_an_empty_typed_field_is_a_mismatch_not_an_allocation() {
    // 2 GiB each: under the default max_alloc (4 GiB), over what the allocator gives
    for (data_type, field, size) in [
        (DataType::Float, "float_data", 4),
        (DataType::Double, "double_data", 8),
        (DataType::Int64, "int64_data", 8),
        (DataType::Uint64, "uint64_data", 8),
        (DataType::Int32, "int32_data", 4),
    ] {
        let bytes = model_with(TensorProto {
            name: Some("w".into()),
            dims: vec![(2 << 30) / size],
            data_type: Some(data_type as i32),
            ..TensorProto::default()
        });
        assert!(bytes.len() < 64, "{} bytes", bytes.len());
        let model = Model::parse(&bytes).unwrap();
        let e = model.initializers().unwrap_err();
        assert!(
            matches!(&e, Error::Invalid(m) if m.contains(field) && m.contains("holds 0 values")),
            "{data_type:?}: {e}"
        );
    }
}

#[test]
fn packed_fields_claiming_giant_lengths_are_refused_by_the_scan() {
    // ModelProto { ir_version: 7, graph: { initializer: { float_data: packed, 2^40 bytes } } }
    let mut tensor = vec![0x22]; // field 4 (float_data), wire type 2
    tensor.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x20]); // 2^40
    tensor.extend_from_slice(&[0; 8]);
    let mut graph = vec![0x2a, tensor.len() as u8]; // field 5 (initializer)
    graph.extend_from_slice(&tensor);
    let mut model = vec![0x08, 7, 0x3a, graph.len() as u8]; // ir_version, field 7 (graph)
    model.extend_from_slice(&graph);
    let e = Model::parse(&model).unwrap_err();
    assert!(
        e.to_string()
            .contains("1099511627776 bytes runs past the end"),
        "{e}"
    );
    // the same claim as the graph's own length
    let mut model = vec![0x08, 7, 0x3a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x2a, 0];
    model.extend_from_slice(&[0; 4]);
    let e = Model::parse(&model).unwrap_err();
    assert!(e.to_string().contains("runs past the end"), "{e}");
}
