//! Reading and writing `.onnx`: round trips, typed fields, zero-copy, the
//! graph, and hostile input (no panics, limits, clear errors).

use onnx_format::builder::{Dim, GraphBuilder, attr};
use onnx_format::proto::tensor_proto::{DataLocation, DataType};
use onnx_format::proto::{GraphProto, ModelProto, NodeProto, StringStringEntryProto, TensorProto};
use onnx_format::{Error, Model, ReadOptions, TensorEntry, WriteOptions, write_tensors};
use prost::Message;
use tensor_core::graph::{Attribute, ValueKind};
use tensor_core::{DType, Limits, MappedFile, Tensor};

fn tensors_model(ts: &[(&str, Tensor<'_>)], opts: &WriteOptions) -> Vec<u8> {
    let entries: Vec<TensorEntry<'_>> = ts
        .iter()
        .map(|(n, t)| TensorEntry {
            name: n,
            dtype: t.dtype(),
            dims: t.dims().to_vec(),
        })
        .collect();
    let mut out = Vec::new();
    write_tensors(&mut out, &entries, opts, |i, w| {
        w.write_all(ts[i].1.bytes())?;
        Ok(ts[i].1.bytes().len())
    })
    .unwrap();
    out
}

fn model_with(graph: GraphProto) -> Vec<u8> {
    ModelProto {
        ir_version: Some(7),
        graph: Some(graph),
        ..ModelProto::default()
    }
    .encode_to_vec()
}

#[test]
fn tensors_round_trip_every_dtype() {
    let ts = vec![
        (
            "f32",
            Tensor::from_values([2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap(),
        ),
        ("f64", Tensor::from_values([2], &[1.5f64, -2.0]).unwrap()),
        (
            "i64",
            Tensor::from_values([3], &[i64::MIN, 0, i64::MAX]).unwrap(),
        ),
        ("i32", Tensor::from_values([1, 1], &[-7i32]).unwrap()),
        ("u8", Tensor::from_values([4], &[0u8, 1, 254, 255]).unwrap()),
        ("i8", Tensor::from_values([2], &[-128i8, 127]).unwrap()),
        ("u16", Tensor::from_values([2], &[1u16, 65535]).unwrap()),
        (
            "bool",
            Tensor::new(DType::Bool, [3], vec![1u8, 0, 1]).unwrap(),
        ),
        (
            "f16",
            Tensor::new(DType::F16, [2], vec![0x00u8, 0x3c, 0x00, 0xc0]).unwrap(),
        ),
        (
            "bf16",
            Tensor::new(DType::BF16, [1], vec![0x80u8, 0x3f]).unwrap(),
        ),
        (
            "scalar",
            Tensor::from_values(Vec::<usize>::new(), &[42.0f32]).unwrap(),
        ),
        (
            "empty",
            Tensor::from_values([0, 3], &Vec::<f32>::new()).unwrap(),
        ),
    ];
    let bytes = tensors_model(&ts, &WriteOptions::default().with_opset(17));
    let m = Model::parse(&bytes).unwrap();
    assert_eq!(m.opset(), Some(17));
    assert_eq!(m.proto.ir_version, Some(8));
    let back = m.initializers().unwrap();
    assert_eq!(back.len(), ts.len());
    for ((n, t), (bn, bt)) in ts.iter().zip(&back) {
        assert_eq!(n, bn);
        assert_eq!(t.dtype(), bt.dtype(), "{n}");
        assert_eq!(t.dims(), bt.dims(), "{n}");
        assert_eq!(t.bytes(), bt.bytes(), "{n}");
    }
    // prost decodes what the streaming writer wrote into the same message
    let p = ModelProto::decode(&bytes[..]).unwrap();
    assert_eq!(p.graph.unwrap().initializer.len(), ts.len());
    assert!(m.graph().nodes.is_empty());
    assert_eq!(m.graph().weights().count(), ts.len());
}

#[test]
fn raw_data_is_shared_with_the_map() {
    let t = Tensor::from_values([256], &vec![3.0f32; 256]).unwrap();
    let bytes = tensors_model(&[("w", t)], &WriteOptions::default());
    let map = MappedFile::from_vec(bytes);
    let m = Model::from_map(&map, &ReadOptions::default()).unwrap();
    let (_, w) = &m.initializers().unwrap()[0];
    assert!(w.storage().is_zero_copy());
    assert!(map.range_of(w.bytes()).is_some());
}

#[test]
fn typed_fields_are_converted() {
    let g = GraphProto {
        initializer: vec![
            TensorProto {
                name: Some("f".into()),
                dims: vec![2],
                data_type: Some(DataType::Float as i32),
                float_data: vec![1.0, -1.0],
                ..TensorProto::default()
            },
            TensorProto {
                name: Some("h".into()),
                dims: vec![1],
                data_type: Some(DataType::Float16 as i32),
                int32_data: vec![0x3c00],
                ..TensorProto::default()
            },
            TensorProto {
                name: Some("l".into()),
                dims: vec![2],
                data_type: Some(DataType::Int64 as i32),
                int64_data: vec![5, -5],
                ..TensorProto::default()
            },
            TensorProto {
                name: Some("u".into()),
                dims: vec![1],
                data_type: Some(DataType::Uint32 as i32),
                uint64_data: vec![4_000_000_000],
                ..TensorProto::default()
            },
        ],
        ..GraphProto::default()
    };
    let m = Model::parse(&model_with(g)).unwrap();
    let t = m.initializers().unwrap();
    assert_eq!(t[0].1.to_vec::<f32>().unwrap(), [1.0, -1.0]);
    assert_eq!(t[1].1.to_vec::<f32>().unwrap(), [1.0]);
    assert_eq!(t[2].1.to_vec::<i64>().unwrap(), [5, -5]);
    assert_eq!(t[3].1.to_vec::<u32>().unwrap(), [4_000_000_000]);
}

#[test]
fn the_graph_as_a_typed_graph() {
    let mut b = GraphBuilder::new("g");
    b.input(
        "x",
        DataType::Float,
        &[Dim::Param("batch".into()), Dim::Value(4)],
    );
    b.initializer("W", &Tensor::from_values([4, 2], &[0.5f32; 8]).unwrap())
        .unwrap();
    b.node("MatMul", "mm", &["x", "W"], &["h"], vec![]);
    b.node(
        "LeakyRelu",
        "act",
        &["h"],
        &["y"],
        vec![attr::float("alpha", 0.25)],
    );
    b.output(
        "y",
        DataType::Float,
        &[Dim::Param("batch".into()), Dim::Value(2)],
    );
    let bytes = b.finish(&WriteOptions::default()).encode_to_vec();
    let m = Model::parse(&bytes).unwrap();
    let g = m.graph();
    assert_eq!(g.name, "g");
    assert_eq!(g.inputs, ["x"]);
    assert_eq!(g.outputs, ["y"]);
    assert_eq!(g.value("x").unwrap().shape, Some(vec![-1, 4]));
    assert_eq!(g.value("W").unwrap().kind, ValueKind::Weight);
    assert_eq!(g.weights().collect::<Vec<_>>(), ["W"]);
    assert_eq!(g.nodes[0].op, "MatMul");
    assert_eq!(g.nodes[1].name, "act");
    assert_eq!(g.nodes[1].inputs, ["h"]);
    assert_eq!(g.nodes[1].outputs, ["y"]);
    match g.nodes[1].attribute("alpha") {
        Some(Attribute::Float(a)) => assert!((a - 0.25).abs() < 1e-9),
        other => panic!("{other:?}"),
    }
}

#[test]
fn external_data_is_refused_with_its_location() {
    let g = GraphProto {
        initializer: vec![TensorProto {
            name: Some("big".into()),
            dims: vec![4],
            data_type: Some(DataType::Float as i32),
            data_location: Some(DataLocation::External as i32),
            external_data: vec![StringStringEntryProto {
                key: Some("location".into()),
                value: Some("weights.bin".into()),
            }],
            ..TensorProto::default()
        }],
        ..GraphProto::default()
    };
    let e = Model::parse(&model_with(g)).unwrap_err();
    assert!(
        matches!(&e, Error::ExternalData { tensor, location } if tensor == "big" && location == "weights.bin")
    );
    assert!(
        e.to_string().contains("external data is not supported"),
        "{e}"
    );
}

#[test]
fn inconsistent_tensors_are_errors() {
    let bad = |t: TensorProto| {
        let g = GraphProto {
            initializer: vec![t],
            ..GraphProto::default()
        };
        Model::parse(&model_with(g))
            .unwrap()
            .initializers()
            .unwrap_err()
    };
    let base = TensorProto {
        name: Some("t".into()),
        data_type: Some(DataType::Float as i32),
        ..TensorProto::default()
    };
    let e = bad(TensorProto {
        dims: vec![3],
        raw_data: Some(vec![0u8; 8].into()),
        ..base.clone()
    });
    assert!(e.to_string().contains("raw_data is 8 bytes"), "{e}");
    let e = bad(TensorProto {
        dims: vec![-1],
        ..base.clone()
    });
    assert!(e.to_string().contains("negative dimension"), "{e}");
    let e = bad(TensorProto {
        dims: vec![2],
        float_data: vec![1.0],
        ..base.clone()
    });
    assert!(e.to_string().contains("float_data holds 1 values"), "{e}");
    let e = bad(TensorProto {
        dims: vec![i64::MAX, i64::MAX],
        ..base.clone()
    });
    assert!(e.to_string().contains("overflows"), "{e}");
    let e = bad(TensorProto {
        dims: vec![1],
        data_type: Some(DataType::String as i32),
        string_data: vec![b"x".to_vec()],
        ..base
    });
    assert!(
        matches!(e, Error::UnsupportedDataType { data_type: 8, .. }),
        "{e}"
    );
}

#[test]
fn not_a_model() {
    // no ir_version
    let e = Model::parse(&ModelProto::default().encode_to_vec()).unwrap_err();
    assert!(e.to_string().contains("no ir_version"), "{e}");
    // no graph
    let e = Model::parse(
        &ModelProto {
            ir_version: Some(7),
            ..ModelProto::default()
        }
        .encode_to_vec(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("no graph"), "{e}");
    assert!(Model::parse(b"\x08\x07\x3a\xff\xff\xff\xff\x0f").is_err());
    assert!(Model::parse(b"hello world").is_err());
}

#[test]
fn message_counts_are_bounded_before_decoding() {
    let g = GraphProto {
        node: vec![NodeProto::default(); 1000],
        ..GraphProto::default()
    };
    let bytes = model_with(g);
    let opts = ReadOptions::default().with_limits(Limits::default().with_max_tensors(100));
    let e = Model::parse_with(&bytes, &opts).unwrap_err();
    assert!(e.to_string().contains("over the limit of 100"), "{e}");
    assert!(Model::parse(&bytes).is_ok());
}

#[test]
fn every_truncation_fails_cleanly() {
    let mut b = GraphBuilder::new("g");
    b.input("x", DataType::Float, &[Dim::Value(2)]);
    b.initializer("w", &Tensor::from_values([2], &[1.0f32, 2.0]).unwrap())
        .unwrap();
    b.node(
        "Add",
        "a",
        &["x", "w"],
        &["y"],
        vec![attr::ints("k", &[1, 2])],
    );
    b.output("y", DataType::Float, &[Dim::Value(2)]);
    let bytes = b.finish(&WriteOptions::default()).encode_to_vec();
    for n in 0..bytes.len() {
        if let Ok(m) = Model::parse(&bytes[..n]) {
            let _ = m.initializers();
            let _ = m.graph();
        }
    }
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            if let Ok(m) = Model::parse(&bytes) {
                let _ = m.initializers();
                let _ = m.graph();
            }
        }

        #[test]
        fn mutated_models_never_panic(pos in 0usize..200, byte in any::<u8>()) {
            let t = Tensor::from_values([3], &[1.0f32, 2.0, 3.0]).unwrap();
            let mut bytes = tensors_model(&[("w", t)], &WriteOptions::default());
            let p = pos % bytes.len();
            bytes[p] = byte;
            if let Ok(m) = Model::parse(&bytes) {
                let _ = m.initializers();
                let _ = m.graph();
            }
        }
    }
}

/// `write_model_deferred`: an initializer whose data is written later, with
/// fields before and after `raw_data` and model and graph fields on both
/// sides of the initializers, gives the bytes of the model holding the data.
#[test]
fn a_deferred_initializer_writes_the_bytes_of_the_whole_model() {
    let t = Tensor::from_values([2, 3], &[1f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let small = Tensor::from_values([1], &[7f32]).unwrap();
    let mut b = GraphBuilder::new("g");
    b.initializer("small", &small).unwrap();
    let mut whole_t = onnx_format::tensor_to_proto("w", &t).unwrap();
    whole_t.doc_string = Some("after raw_data".into());
    b.add_initializer(whole_t.clone());
    b.op("Add", &["w", "small"], vec![]);
    let mut whole = b.finish(&WriteOptions::default().with_opset(17));
    whole.doc_string = Some("model doc".into());
    whole.metadata_props.push(StringStringEntryProto {
        key: Some("k".into()),
        value: Some("v".into()),
    });
    let mut deferred = whole.clone();
    let g = deferred.graph.as_mut().unwrap();
    let p: &mut TensorProto = g
        .initializer
        .iter_mut()
        .find(|p| p.name.as_deref() == Some("w"))
        .unwrap();
    p.raw_data = None;
    p.external_data.push(StringStringEntryProto {
        key: Some("source".into()),
        value: Some("w".into()),
    });
    let mut want = Vec::new();
    onnx_format::write_model(&mut want, &whole).unwrap();
    let mut got = Vec::new();
    onnx_format::write_model_deferred(
        &mut got,
        deferred,
        |p| (!p.external_data.is_empty()).then_some(24),
        |p, w| {
            assert_eq!(p.external_data.len(), 1);
            w.write_all(t.bytes())?;
            Ok(t.bytes().len())
        },
    )
    .unwrap();
    assert!(got == want);
    // with nothing deferred, the bytes of `write_model`
    let mut plain = Vec::new();
    onnx_format::write_model_deferred(&mut plain, whole, |_| None, |_, _| Ok(0)).unwrap();
    assert!(plain == want);
}
