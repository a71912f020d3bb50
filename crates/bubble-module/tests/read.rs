//! The reader against the golden files (file-order sidecars written from the
//! real libraries' output) and against crafted hostile input.

mod common;

use bubble_module::{Error, Module, NodeKind, ReadOptions};
use common::{F, N, enc, files, node, s, testdata};
use serde_json::Value;
use tensor_core::{Bytes, DType, MappedFile};

fn json(path: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Every golden module matches its sidecar: header, indices, nodes, params
/// in file order with their byte offsets, fields with dtype code, shape,
/// data offset, values and sums.
#[test]
fn goldens_match_their_sidecars() {
    let dir = testdata();
    let mut checked = 0;
    for path in files(&dir, ".tsm") {
        let sidecar = json(&path.with_extension("json"));
        let bytes = std::fs::read(&path).unwrap();
        let m = Module::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let base = bytes.as_ptr() as usize;
        let h = &sidecar["header"];
        assert_eq!(m.header().fake as u64, h["fake"].as_u64().unwrap());
        assert_eq!(m.header().code as u64, h["code"].as_u64().unwrap());
        assert_eq!(
            m.header().data.iter().all(|&b| b == 0),
            h["data_all_zero"].as_bool().unwrap()
        );
        let idx = |v: &Value| -> Vec<usize> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap() as usize)
                .collect()
        };
        assert_eq!(m.inputs(), idx(&sidecar["inputs"]));
        assert_eq!(m.outputs(), idx(&sidecar["outputs"]));
        let nodes = sidecar["nodes"].as_array().unwrap();
        assert_eq!(m.len(), nodes.len());
        assert_eq!(m.end_offset(), bytes.len());
        for (node, exp) in m.nodes().iter().zip(nodes) {
            assert_eq!(node.op(), exp["op"].as_str().unwrap());
            assert_eq!(node.name(), exp["name"].as_str().unwrap());
            assert_eq!(node.inputs(), idx(&exp["inputs"]));
            assert_eq!(node.offset(), exp["offset"].as_u64().map(|o| o as usize));
            let params = exp["params"].as_array().unwrap();
            assert_eq!(node.params().len(), params.len());
            for (p, ep) in node.params().iter().zip(params) {
                assert_eq!(p.key(), ep["key"].as_str().unwrap());
                assert_eq!(p.offset(), ep["offset"].as_u64().map(|o| o as usize));
                let fields = ep["fields"].as_array().unwrap();
                assert_eq!(p.fields().len(), fields.len());
                for (t, ef) in p.fields().iter().zip(fields) {
                    let code = ef["dtype"].as_u64().unwrap() as u8;
                    assert_eq!(Some(code), bubble_module::code_of_dtype(t.dtype()));
                    let shape: Vec<usize> = idx(&ef["shape"]);
                    assert_eq!(t.dims(), shape);
                    assert_eq!(t.numel() as u64, ef["count"].as_u64().unwrap());
                    // zero-copy: the data lies in the input right after the
                    // field header (1 dtype byte, rank, dims)
                    assert!(matches!(t.storage(), Bytes::Borrowed(_)));
                    let data_off = t.bytes().as_ptr() as usize - base;
                    let foff = ef["offset"].as_u64().unwrap() as usize;
                    assert_eq!(data_off, foff + 5 + 4 * shape.len());
                    if let Some(text) = ef.get("string") {
                        assert_eq!(t.dtype(), DType::Char8);
                        assert_eq!(bubble_module::char8_str(t).unwrap(), text.as_str().unwrap());
                    }
                    if let Some(vals) = ef.get("values") {
                        let got = t.to_f64_vec().unwrap();
                        for (g, e) in got.iter().zip(vals.as_array().unwrap()) {
                            let e = e.as_f64().unwrap();
                            assert!((g - e).abs() <= 1e-6 * e.abs().max(1.0), "{g} vs {e}");
                        }
                        let sum: f64 = got.iter().sum();
                        let es = ef["sum"].as_f64().unwrap();
                        assert!((sum - es).abs() <= 1e-6 * es.abs().max(1.0));
                    }
                }
            }
        }
        let names: Vec<&str> = m.inputs().iter().map(|&i| m.nodes()[i].name()).collect();
        assert_eq!(
            names,
            sidecar["module_inputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect::<Vec<_>>()
        );
        checked += 1;
    }
    assert_eq!(checked, 6);
}

#[test]
fn valid_edge_cases_are_read() {
    let dir = testdata().join("edge");
    let mut n = 0;
    for path in files(&dir, ".tsm") {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("ok_") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let m = Module::parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let exp = json(&path.with_extension("expected.json"));
        let g = &exp["graph"];
        assert_eq!(m.len(), g["nodes"].as_array().unwrap().len(), "{name}");
        for (node, en) in m.nodes().iter().zip(g["nodes"].as_array().unwrap()) {
            assert_eq!(node.op(), en["op"].as_str().unwrap());
            assert_eq!(node.name(), en["name"].as_str().unwrap());
        }
        n += 1;
    }
    assert_eq!(n, 9);
    // the special cases, one by one
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    let b = read("ok_trailing_bytes.tsm");
    let m = Module::parse(&b).unwrap();
    assert_eq!(b.len() - m.end_offset(), 4);
    let e = Module::parse_with(&b, &ReadOptions::default().with_reject_trailing(true)).unwrap_err();
    assert!(e.to_string().contains("4 trailing bytes"), "{e}");
    let b = read("ok_zero_field_param.tsm");
    let m = Module::parse(&b).unwrap();
    assert!(m.nodes()[1].param("empty").unwrap().value().is_empty());
    let b = read("ok_fake_and_header_data_nonzero.tsm");
    let m = Module::parse(&b).unwrap();
    assert!(m.header().fake != 0 || m.header().data.iter().any(|&x| x != 0));
    let b = read("ok_forward_reference.tsm");
    let m = Module::parse(&b).unwrap();
    assert_eq!(m.nodes()[0].inputs(), [1]);
}

fn reject(file: &str) -> Error {
    let bytes = std::fs::read(testdata().join("edge").join(file)).unwrap();
    match Module::parse(&bytes) {
        Ok(_) => panic!("{file}: accepted, must be rejected"),
        Err(e) => e,
    }
}

#[test]
fn invalid_edge_cases_are_rejected_with_clear_errors() {
    let e = reject("bad_code.tsm");
    assert!(matches!(e, Error::BadCode { found: 0x1991_0928 }), "{e}");
    assert!(e.to_string().contains("0x19910928 at offset 4"), "{e}");

    let e = reject("bad_truncated.tsm");
    assert_eq!(
        e.to_string(),
        "truncated: input count of node 1 at offset 257 needs 4 bytes, 2 left"
    );

    let e = reject("bad_missing_name.tsm");
    assert_eq!(
        e.to_string(),
        "node 1 (offset 206): #name missing or not a 1-D char8 string"
    );
    let e = reject("bad_op_not_string.tsm");
    assert_eq!(
        e.to_string(),
        "node 1 (offset 206): #op missing or not a 1-D char8 string"
    );
    let e = reject("bad_output_count_2.tsm");
    assert!(
        e.to_string()
            .starts_with("node 1 (\"y\") (offset 206): #output_count is not 1"),
        "{e}"
    );

    for f in ["bad_input_not_param.tsm", "bad_missing_module_input.tsm"] {
        let e = reject(f);
        assert!(matches!(e, Error::MissingInput { node: 0, .. }), "{f}: {e}");
        assert!(e.to_string().contains("node 0 (\"x\")"), "{e}");
    }
    let e = reject("bad_not_computable_op_without_inputs.tsm");
    assert!(
        matches!(e, Error::NotComputable { node: 1, ref op, .. } if op == "relu"),
        "{e}"
    );

    // the semantic ones are structurally fine (the python reader loads them)
    for f in [
        "bad_input_not_param.tsm",
        "bad_missing_module_input.tsm",
        "bad_not_computable_op_without_inputs.tsm",
    ] {
        let bytes = std::fs::read(testdata().join("edge").join(f)).unwrap();
        Module::parse_with(&bytes, &ReadOptions::structural()).unwrap();
    }
}

#[test]
fn every_truncation_is_an_error_never_a_panic() {
    for f in [
        "py_add_const.tsm",
        "cpp_add_const.tsm",
        "py_dtypes.tsm",
        "py_multi_io_shared.tsm",
        "cpp_multi_io_shared.tsm",
    ] {
        let bytes = std::fs::read(testdata().join(f)).unwrap();
        Module::parse(&bytes).unwrap();
        for cut in 0..bytes.len() {
            let prefix = bytes[..cut].to_vec();
            let e = Module::parse(&prefix).expect_err(&format!("{f} cut at {cut}"));
            assert!(
                matches!(e, Error::Truncated { .. } | Error::CountTooLarge { .. }),
                "{f} cut at {cut}: {e}"
            );
        }
    }
}

#[test]
fn huge_counts_fail_before_allocating() {
    // 200 bytes claiming 2^31 and 2^31 - 1 nodes
    for claim in [1u32 << 31, (1u32 << 31) - 1, u32::MAX] {
        let mut b = enc(&[], &[], &[]);
        let at = b.len() - 4;
        b[at..].copy_from_slice(&claim.to_le_bytes());
        b.resize(200, 0);
        let e = Module::parse(&b).unwrap_err();
        assert!(
            matches!(
                e,
                Error::ValueTooLarge { offset: 136, .. } | Error::CountTooLarge { offset: 136, .. }
            ),
            "{claim}: {e}"
        );
    }
    // a param count, a field count, a rank and a dimension that lie
    let base = enc(
        &[],
        &[0],
        &[N(
            vec![
                ("#op", s("<const>")),
                ("#name", s("c")),
                ("value", vec![F(10, vec![2], vec![0; 8])]),
            ],
            vec![],
        )],
    );
    Module::parse(&base).unwrap();
    let value_field = base.len() - 4 - 8 - 4 - 4 - 1; // dtype byte of `value`
    for (at, v) in [
        (140usize, 0x7fff_ffffu32),     // param count
        (value_field - 4, 0x7fff_ffff), // field count
        (value_field + 1, 0x7fff_ffff), // rank
        (value_field + 5, 0x7fff_ffff), // dimension
    ] {
        let mut b = base.clone();
        b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        let e = Module::parse(&b).unwrap_err();
        assert!(
            matches!(
                e,
                Error::CountTooLarge { .. } | Error::Truncated { .. } | Error::Limit { .. }
            ),
            "patch at {at}: {e}"
        );
    }
    // an overflowing shape product: dims 2^30 x 2^30 x 2^30 x ... of f64
    let b = enc(
        &[],
        &[0],
        &[N(
            vec![
                ("#op", s("<const>")),
                ("#name", s("c")),
                ("value", vec![F(11, vec![1 << 30; 4], vec![])]),
            ],
            vec![],
        )],
    );
    let e = Module::parse(&b).unwrap_err();
    assert!(matches!(e, Error::ShapeOverflow { .. }), "{e}");
    assert!(e.to_string().contains("param \"value\""), "{e}");
}

#[test]
fn unknown_dtypes_bad_indices_and_cycles_are_rejected() {
    let b = enc(
        &[],
        &[0],
        &[N(
            vec![
                ("#op", s("<const>")),
                ("#name", s("c")),
                ("value", vec![F(33, vec![1], vec![0])]),
            ],
            vec![],
        )],
    );
    let e = Module::parse(&b).unwrap_err();
    assert!(matches!(e, Error::UnknownDType { code: 33, .. }), "{e}");
    assert!(e.to_string().contains("node 0, param \"value\""), "{e}");

    let b = enc(
        &[0],
        &[2],
        &[node("<param>", "x", &[]), node("relu", "y", &[0])],
    );
    let e = Module::parse(&b).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexOutOfRange {
                index: 2,
                offset: 140,
                count: 2,
                ..
            }
        ),
        "{e}"
    );
    let b = enc(
        &[0],
        &[1],
        &[node("<param>", "x", &[]), node("relu", "y", &[5])],
    );
    let e = Module::parse(&b).unwrap_err();
    assert!(e.to_string().contains("input index of node 1"), "{e}");

    // y = relu(z), z = relu(y): a cycle
    let b = enc(
        &[0],
        &[1],
        &[
            node("<param>", "x", &[]),
            node("add", "y", &[0, 2]),
            node("relu", "z", &[1]),
        ],
    );
    let e = Module::parse_with(&b, &ReadOptions::structural()).unwrap_err();
    assert!(matches!(e, Error::Cycle { .. }), "{e}");
    // a self-loop
    let b = enc(&[], &[0], &[node("relu", "self", &[0])]);
    let e = Module::parse(&b).unwrap_err();
    assert!(matches!(e, Error::Cycle { node: 0, .. }), "{e}");

    // #op with two fields, #name 2-D
    let b = enc(
        &[],
        &[0],
        &[N(
            vec![
                (
                    "#op",
                    vec![F(13, vec![1], b"a".to_vec()), F(13, vec![1], b"b".to_vec())],
                ),
                ("#name", s("n")),
            ],
            vec![],
        )],
    );
    assert!(Module::parse(&b).unwrap_err().to_string().contains("#op"));
    let b = enc(
        &[],
        &[0],
        &[N(
            vec![
                ("#op", s("<const>")),
                ("#name", vec![F(13, vec![1, 1], b"n".to_vec())]),
            ],
            vec![],
        )],
    );
    assert!(Module::parse(&b).unwrap_err().to_string().contains("#name"));
}

#[test]
fn memory_map_is_shared_not_copied() {
    let path = testdata().join("py_convnet.tsm");
    let m = Module::open(&path).unwrap();
    let w = m
        .nodes()
        .iter()
        .find(|n| n.name() == "_const_fc_rhs")
        .unwrap();
    assert_eq!(w.kind(), NodeKind::Const);
    let t = w.value().unwrap();
    assert!(matches!(t.storage(), Bytes::Mapped(..)));
    assert_eq!(t.dims(), [512, 10]);
    let map = MappedFile::open(&path).unwrap();
    let m2 = Module::from_map(&map, &ReadOptions::default()).unwrap();
    let t2 = m2.nodes()[6].value().unwrap();
    assert_eq!(
        map.range_of(t2.bytes()).map(|r| r.len()),
        Some(512 * 10 * 4)
    );
    // a dropped map stays alive through the tensors
    drop(map);
    assert_eq!(t2.bytes().len(), 20480);
}

/// Corrupting any byte of a golden gives a module or an error, never a panic;
/// a module read from corrupt bytes still re-encodes.
#[test]
fn corruption_at_every_offset_never_panics() {
    for f in ["py_add_const.tsm", "cpp_multi_io_shared.tsm"] {
        let bytes = std::fs::read(testdata().join(f)).unwrap();
        for at in 0..bytes.len() {
            for v in [0x00u8, 0xff, 0x80, 0x7f, bytes[at] ^ 1] {
                let mut b = bytes.clone();
                b[at] = v;
                if let Ok(m) = Module::parse_with(&b, &ReadOptions::structural()) {
                    let out = m.to_bytes(&bubble_module::WriteOptions::default()).unwrap();
                    assert!(Module::parse_with(&out, &ReadOptions::structural()).is_ok());
                }
            }
        }
    }
}
