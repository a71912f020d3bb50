//! Converting a file opened by random access (`mlformats::convert_sliced`,
//! `convert/sliced.rs`) against converting the whole file
//! (`convert_document_to_bytes`, `convert.rs`): two drivers (they share the
//! selection, plan and writers, not the dispatch: re-encoding, NNabla
//! transcoding and model keeping, ONNX import and graph export, refusals).
//! For a sample of every format that opens by slices (every `.params` and
//! `.protobuf`, a few of each other extension, the deflated and big-endian
//! archives of `testdata/compressed`), to every target, with every option
//! set: the same bytes and the same summary (warnings, skipped, casts,
//! renames), or the same error; refused by slices alone only where
//! `convert_sliced` says so (an ONNX graph imported, an NNabla model kept, a
//! file re-encoded into its own format). Every 10th `.onnx` with nodes is
//! also converted to ONNX with options that rewrite its own graph, never
//! refused by slices alone. Every 10th NNabla `.nnp`/`.protobuf` and TenniS
//! `.tsm` of `testdata/` with a graph is also exported to ONNX by slices,
//! with several option sets, and compared byte for byte. (Every file of
//! `testdata/` took minutes in a debug build; files of one extension in one
//! folder share a layout.)
#![cfg(all(
    feature = "cvm",
    feature = "safetensors",
    feature = "npz",
    feature = "nnp",
    feature = "tennis",
    feature = "onnx",
    feature = "primitiv"
))]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mlformats::{ConvertOptions, DType, Document, Format};

mod common;
use common::by_slices;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            if !p.ends_with("fuzz-regressions") {
                files(&p, out);
            }
        } else {
            out.push(p);
        }
    }
}

fn samples() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut all = Vec::new();
    files(&root, &mut all);
    all.sort();
    let mut by_ext: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for p in all {
        let ext = p
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_string();
        by_ext.entry(ext).or_default().push(p);
    }
    let mut out = Vec::new();
    for (ext, list) in by_ext {
        let every = match ext.as_str() {
            "params" | "protobuf" | "safetensors" => 1,
            "h5" => 4,
            "data" => 20,
            "nnp" | "tsm" => 50,
            "onnx" => 80,
            "npz" => 250,
            _ => continue,
        };
        // and every deflated or big-endian fixture of testdata/compressed
        let (own, list): (Vec<_>, Vec<_>) = list
            .into_iter()
            .partition(|p| p.starts_with(root.join("compressed")));
        out.extend(own);
        out.extend(list.into_iter().step_by(every));
    }
    out
}

/// The option sets each conversion is tried with.
fn option_sets() -> Vec<ConvertOptions> {
    vec![
        ConvertOptions::new(),
        ConvertOptions::new().dtype(DType::F16),
        ConvertOptions::new().dtype(DType::BF16).exclude("*bias*"),
        ConvertOptions::new().keep_order(true),
        ConvertOptions::new().rename("^(.)", "x_$1").only("*"),
        ConvertOptions::new().weights_only(true),
        ConvertOptions::new()
            .dtype(DType::F64)
            .skip_unsupported(true)
            .weights_only(true),
        ConvertOptions::new().only("*b*").skip_unsupported(true),
    ]
}

/// A refusal of the sliced path alone, as `convert_sliced` documents them.
fn needs_whole(from: Format, target: Format, opts: &ConvertOptions, msg: &str) -> bool {
    msg.contains("a slice at a time")
        && if opts.is_plain() && from == target {
            msg.contains("re-encoding")
        } else if opts.weights_only {
            false
        } else if target == Format::Onnx {
            // an ONNX model's own graph, read whole by the index (proto2
            // groups); NNabla and TenniS graphs export
            from == Format::Onnx && msg.contains("exports its graph, which needs the whole model")
        } else if from == Format::Onnx {
            msg.contains("imports its graph")
        } else {
            from.is_nnabla()
                && target.is_nnabla()
                && ((target != Format::NnablaH5 && msg.contains("keeps its model"))
                    || (opts.is_plain() && msg.contains("more than once")))
        }
}

#[test]
fn every_target_converts_by_slices_as_the_whole_file() {
    // (target) -> [equal, both refused, refused by slices alone]
    let mut counts: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
    let mut opened = 0;
    for p in samples() {
        let bytes = std::fs::read(&p).unwrap();
        let name = Path::new(p.file_name().unwrap());
        let index = match by_slices(&bytes[..], Some(name), &Default::default()) {
            Ok(Some(i)) => i,
            _ => continue,
        };
        let Ok(doc) = Document::from_bytes(bytes.clone(), Some(name), None) else {
            continue;
        };
        opened += 1;
        let from = index.format();
        for &target in Format::ALL {
            for (k, opts) in option_sets().iter().enumerate() {
                let what = format!("{} -> {target} (options {k})", p.display());
                let whole = mlformats::convert_document_to_bytes(&doc, target, opts);
                let mut out = std::io::Cursor::new(Vec::new());
                let sliced = mlformats::convert_sliced(&index, target, opts, &mut out);
                let c = counts.entry(target.name()).or_default();
                match (whole, sliced) {
                    (Ok((w, ws)), Ok(ss)) => {
                        assert!(w == *out.get_ref(), "{what}: bytes differ");
                        assert_eq!(ws, ss, "{what}: summary");
                        c[0] += 1;
                    }
                    (Err(w), Err(s)) => {
                        let (w, s) = (mlformats::chain_message(&w), mlformats::chain_message(&s));
                        assert!(
                            w == s || needs_whole(from, target, opts, &s),
                            "{what}: whole {w:?}, by slices {s:?}"
                        );
                        c[1] += 1;
                    }
                    (Ok(_), Err(s)) => {
                        let s = mlformats::chain_message(&s);
                        assert!(
                            needs_whole(from, target, opts, &s),
                            "{what}: refused by slices only: {s}"
                        );
                        c[2] += 1;
                    }
                    (Err(w), Ok(_)) => panic!("{what}: whole refuses ({w}), by slices not"),
                }
            }
        }
    }
    assert!(opened >= 40, "{opened}");
    eprintln!("(equal, both refused, refused by slices alone) per target: {counts:?}");
    assert_eq!(counts.len(), Format::ALL.len());
    for (target, [equal, _, _]) in &counts {
        assert!(
            *equal >= 100,
            "{target}: only {equal} conversions by slices"
        );
    }
}

/// Every NNabla `.nnp`/`.protobuf` and TenniS `.tsm` of `testdata/` that
/// opens by slices and has a graph, exported to ONNX by slices (weights
/// read one at a time as written) with several option sets: the bytes and
/// the summary of the whole path, or its error.
#[test]
fn graph_exports_by_slices_as_the_whole_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut all = Vec::new();
    files(&root, &mut all);
    all.sort();
    let sets = [
        ConvertOptions::new(),
        ConvertOptions::new().dtype(DType::F16),
        ConvertOptions::new().dtype(DType::F64).opset(17),
        ConvertOptions::new().rename("^(.)", "x_$1").only("*"),
        ConvertOptions::new().exclude("*bias*"),
    ];
    // [equal, both refused]
    let mut counts = [0usize; 2];
    let mut seen = 0;
    for p in all {
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !matches!(ext, "nnp" | "protobuf" | "tsm") {
            continue;
        }
        // every 10th (the .nnp and .tsm of one folder share an exporter)
        seen += 1;
        if seen % 10 != 1 {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        let name = Path::new(p.file_name().unwrap());
        let Ok(Some(index)) = by_slices(&bytes[..], Some(name), &Default::default()) else {
            continue;
        };
        let Ok(doc) = Document::from_bytes(bytes.clone(), Some(name), None) else {
            continue;
        };
        if !mlformats::export::has_graph(&doc) {
            continue;
        }
        for (k, opts) in sets.iter().enumerate() {
            let what = format!("{} -> ONNX (options {k})", p.display());
            let whole = mlformats::convert_document_to_bytes(&doc, Format::Onnx, opts);
            let mut out = std::io::Cursor::new(Vec::new());
            let sliced = mlformats::convert_sliced(&index, Format::Onnx, opts, &mut out);
            match (whole, sliced) {
                (Ok((w, ws)), Ok(ss)) => {
                    assert!(w == *out.get_ref(), "{what}: bytes differ");
                    assert_eq!(ws, ss, "{what}: summary");
                    counts[0] += 1;
                }
                (Err(w), Err(s)) => {
                    let (w, s) = (mlformats::chain_message(&w), mlformats::chain_message(&s));
                    assert_eq!(w, s, "{what}");
                    counts[1] += 1;
                }
                (w, s) => panic!(
                    "{what}: whole {:?}, by slices {:?}",
                    w.map(|_| ()),
                    s.map(|_| ())
                ),
            }
        }
    }
    eprintln!("graph exports (equal, both refused): {counts:?}");
    assert!(counts[0] >= 150, "{counts:?}");
}

/// A `.protobuf` storing a parameter name twice: the index lists it once
/// (the last entry), as the whole path's table does; converted as it is to
/// another NNabla format, the whole path writes every stored entry, so the
/// sliced path refuses; with an option, both write each name once.
#[test]
fn a_repeated_parameter_name_converts_with_options_only() {
    use nnp_archive::nnabla_proto::binary;
    let t = |v: &[f32]| mlformats::Tensor::from_values([v.len()], v).unwrap();
    let (a1, a2, b) = (t(&[1.0, 2.0]), t(&[3.0]), t(&[4.0]));
    let mut bytes = Vec::new();
    binary::write_parameters(
        &mut bytes,
        [("a", &a1, true), ("b", &b, true), ("a", &a2, false)],
    )
    .unwrap();
    let name = Path::new("repeated.protobuf");
    let index = by_slices(&bytes[..], Some(name), &Default::default())
        .unwrap()
        .unwrap();
    let doc = Document::from_bytes(bytes.clone(), Some(name), None).unwrap();
    assert_eq!(index.len(), 2);
    assert_eq!(doc.len(), 2);
    for target in [Format::NnablaH5, Format::NnablaNnp, Format::NnablaNntxt] {
        let mut out = std::io::Cursor::new(Vec::new());
        let plain = ConvertOptions::new();
        let e = mlformats::convert_sliced(&index, target, &plain, &mut out).unwrap_err();
        let msg = mlformats::chain_message(&e);
        assert!(
            needs_whole(Format::NnablaProtobuf, target, &plain, &msg),
            "{target}: {msg}"
        );
        for opts in [
            ConvertOptions::new().weights_only(true),
            ConvertOptions::new().dtype(DType::F32),
        ] {
            let mut out = std::io::Cursor::new(Vec::new());
            let s = mlformats::convert_sliced(&index, target, &opts, &mut out).unwrap();
            let (w, ws) = mlformats::convert_document_to_bytes(&doc, target, &opts).unwrap();
            assert!(w == out.into_inner(), "{target}");
            assert_eq!(ws, s);
        }
    }
}

/// A primitiv file (column-major) of a 2-D and a 3-D tensor of several
/// 4 MiB slices each, converted to the row-major targets a band of rows at
/// a time: the whole path's bytes.
#[test]
fn column_major_tensors_convert_by_bands_as_the_whole_file() {
    let a: Vec<f32> = (0..1200 * 1900u32)
        .map(|i| (i as f32 * 0.37).sin() * 1e3)
        .collect();
    let b: Vec<f32> = (0..5 * 300 * 1000u32).map(|i| i as f32 - 7e5).collect();
    let ta = mlformats::Tensor::from_values([1200, 1900], &a).unwrap();
    let tb = mlformats::Tensor::from_values([5, 300, 1000], &b).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("bands.data");
    mlformats::save(&p, [("a", &ta), ("b", &tb)]).unwrap();
    let bytes = std::fs::read(&p).unwrap();
    let name = Path::new("bands.data");
    let index = by_slices(&bytes[..], Some(name), &Default::default())
        .unwrap()
        .unwrap();
    assert!(
        index
            .entries()
            .iter()
            .all(|t| t.order() == mlformats::MemoryOrder::ColumnMajor && t.byte_len() > 4 << 20)
    );
    let doc = Document::from_bytes(bytes.clone(), Some(name), None).unwrap();
    for target in [Format::Safetensors, Format::Npz, Format::CvmParams] {
        for opts in [
            ConvertOptions::new(),
            ConvertOptions::new().dtype(DType::F16),
            ConvertOptions::new().keep_order(target == Format::Npz),
        ] {
            let (whole, ws) = mlformats::convert_document_to_bytes(&doc, target, &opts).unwrap();
            let mut out = std::io::Cursor::new(Vec::new());
            let ss = mlformats::convert_sliced(&index, target, &opts, &mut out).unwrap();
            assert!(whole == out.into_inner(), "{target} {opts:?}: bytes differ");
            assert_eq!(ws, ss, "{target}");
        }
    }
}

/// A Fortran-order `.npy` member with an empty axis among others longer
/// than one (no numpy writes one; a file may hold it): nothing to gather,
/// converted as the whole path converts it, not a division by zero.
#[test]
fn an_empty_column_major_tensor_converts_by_slices_as_the_whole_file() {
    use std::io::Write;
    let header = "{'descr': '<f4', 'fortran_order': True, 'shape': (5, 0, 3), }";
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    let pad = 64 - (10 + header.len() + 1) % 64;
    let len = u16::try_from(header.len() + pad + 1).unwrap();
    npy.extend_from_slice(&len.to_le_bytes());
    npy.extend_from_slice(header.as_bytes());
    npy.extend(std::iter::repeat_n(b' ', pad));
    npy.push(b'\n');
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("e.npy", stored).unwrap();
    zip.write_all(&npy).unwrap();
    let bytes = zip.finish().unwrap().into_inner();
    let name = Path::new("empty.npz");
    let index = by_slices(&bytes[..], Some(name), &Default::default())
        .unwrap()
        .unwrap();
    assert_eq!(
        index.entries()[0].order(),
        mlformats::MemoryOrder::ColumnMajor
    );
    assert_eq!(index.entries()[0].dims(), [5, 0, 3]);
    let doc = Document::from_bytes(bytes.clone(), Some(name), None).unwrap();
    for (target, opts) in [
        (Format::Safetensors, ConvertOptions::new()),
        (Format::Safetensors, ConvertOptions::new().dtype(DType::F16)),
        (Format::CvmParams, ConvertOptions::new()),
        // (a plain .npz re-encoding is refused by slices on purpose)
        (Format::Npz, ConvertOptions::new().dtype(DType::F16)),
    ] {
        let whole = mlformats::convert_document_to_bytes(&doc, target, &opts);
        let mut out = std::io::Cursor::new(Vec::new());
        let sliced = mlformats::convert_sliced(&index, target, &opts, &mut out);
        match (whole, sliced) {
            (Ok((w, ws)), Ok(ss)) => {
                assert!(w == out.into_inner(), "{target}: bytes differ");
                assert_eq!(ws, ss, "{target}");
            }
            (Err(w), Err(s)) => assert_eq!(
                mlformats::chain_message(&w),
                mlformats::chain_message(&s),
                "{target}"
            ),
            (w, s) => panic!("{target}: whole {:?}, by slices {:?}", w.err(), s.err()),
        }
    }
}

/// `whole` and `sliced` of the same conversion: the same bytes and summary,
/// or the same error: `Some(true)` converted, `Some(false)` both refused,
/// `None` refused by slices alone.
fn same_onnx_conversion(
    what: &str,
    index: &Document,
    doc: &Document,
    opts: &ConvertOptions,
) -> Option<bool> {
    let whole = mlformats::convert_document_to_bytes(doc, Format::Onnx, opts);
    let mut out = std::io::Cursor::new(Vec::new());
    let sliced = mlformats::convert_sliced(index, Format::Onnx, opts, &mut out);
    match (whole, sliced) {
        (Ok((w, ws)), Ok(ss)) => {
            assert!(w == *out.get_ref(), "{what}: bytes differ");
            assert_eq!(ws, ss, "{what}: summary");
            Some(true)
        }
        (Err(w), Err(s)) => {
            let (w, s) = (mlformats::chain_message(&w), mlformats::chain_message(&s));
            assert_eq!(w, s, "{what}");
            Some(false)
        }
        (Ok(_), Err(s)) => {
            let s = mlformats::chain_message(&s);
            assert!(s.contains("a slice at a time"), "{what}: {s}");
            None
        }
        (Err(w), Ok(_)) => panic!("{what}: whole refuses ({w}), by slices not"),
    }
}

/// The option sets an ONNX model's own graph is rewritten with.
fn onnx_option_sets() -> Vec<ConvertOptions> {
    vec![
        ConvertOptions::new().dtype(DType::F16),
        ConvertOptions::new().dtype(DType::BF16),
        ConvertOptions::new()
            .dtype(DType::F64)
            .rename("^(.)", "x_$1"),
        ConvertOptions::new().rename("^(.)", "x_$1").only("*"),
        ConvertOptions::new().exclude("*bias*"),
        ConvertOptions::new().dtype(DType::F32),
    ]
}

/// Every 10th `.onnx` of `testdata/` with nodes (raw_data and typed-field
/// initializers), converted to ONNX with options that rewrite its own
/// graph (casts, renames, selections): by slices, the whole path's bytes
/// and summary, or its error; never refused by slices alone.
#[test]
fn onnx_models_with_options_convert_by_slices_as_the_whole_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut all = Vec::new();
    files(&root, &mut all);
    all.sort();
    let (mut equal, mut refused, mut models) = (0, 0, 0);
    for p in all
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "onnx"))
        .step_by(10)
    {
        let bytes = std::fs::read(p).unwrap();
        let name = Path::new(p.file_name().unwrap());
        let Ok(Some(index)) = by_slices(&bytes[..], Some(name), &Default::default()) else {
            continue;
        };
        let Ok(doc) = Document::from_bytes(bytes.clone(), Some(name), None) else {
            continue;
        };
        if !index
            .graph()
            .is_some_and(|g| g.graphs.iter().any(|g| !g.nodes.is_empty()))
        {
            continue;
        }
        models += 1;
        for (k, opts) in onnx_option_sets().iter().enumerate() {
            let what = format!("{} (options {k})", p.display());
            match same_onnx_conversion(&what, &index, &doc, opts) {
                Some(true) => equal += 1,
                Some(false) => refused += 1,
                None => panic!("{what}: refused by slices alone"),
            }
        }
    }
    assert!(models >= 30, "{models}");
    assert!(equal >= 150, "{equal}");
    eprintln!(
        "{models} ONNX models: (equal, both refused) {:?}",
        (equal, refused)
    );
}

/// A model with what a rewrite must carry over as the whole path does: an
/// initializer with a doc string and metadata, one in `float_data`, one of
/// int64, a `Constant` node's tensor, an `If` whose branches hold an
/// initializer of their own, a sparse initializer, value_info and model
/// metadata; cast, renamed and selected by slices as the whole file.
#[test]
fn a_rewritten_onnx_model_keeps_what_the_whole_path_keeps() {
    use onnx_format::builder::attr;
    use onnx_format::proto::{
        AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, SparseTensorProto,
        StringStringEntryProto, TensorProto, ValueInfoProto,
    };
    let f32s = |name: &str, v: &[f32]| TensorProto {
        dims: vec![v.len() as i64],
        data_type: Some(1),
        name: Some(name.into()),
        raw_data: Some(
            v.iter()
                .flat_map(|x| x.to_le_bytes())
                .collect::<Vec<u8>>()
                .into(),
        ),
        ..Default::default()
    };
    let entry = |k: &str, v: &str| StringStringEntryProto {
        key: Some(k.into()),
        value: Some(v.into()),
    };
    let mut w = f32s("w", &[1.5, -2.0, 3.25]);
    w.doc_string = Some("a weight".into());
    w.metadata_props = vec![entry("origin", "test")];
    let typed = TensorProto {
        dims: vec![3],
        data_type: Some(1),
        name: Some("bias".into()),
        float_data: vec![0.5, 0.25, -1.0],
        ..Default::default()
    };
    let shape = TensorProto {
        dims: vec![1],
        data_type: Some(7),
        name: Some("shape".into()),
        raw_data: Some(3i64.to_le_bytes().to_vec().into()),
        ..Default::default()
    };
    let node =
        |op: &str, inputs: &[&str], output: &str, attribute: Vec<AttributeProto>| NodeProto {
            op_type: Some(op.into()),
            name: Some(output.into()),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output.into()],
            attribute,
            ..Default::default()
        };
    let branch = |c: f32| GraphProto {
        name: Some(format!("branch{c}")),
        initializer: vec![f32s("k", &[c, c, c])],
        node: vec![node("Mul", &["sum", "k"], "b_out", vec![])],
        output: vec![ValueInfoProto {
            name: Some("b_out".into()),
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut then = attr::int("x", 0);
    then.name = Some("then_branch".into());
    then.r#type = Some(5);
    then.i = None;
    then.g = Some(branch(2.0));
    let mut els = then.clone();
    els.name = Some("else_branch".into());
    els.g = Some(branch(3.0));
    let graph = GraphProto {
        name: Some("rewritten".into()),
        node: vec![
            node(
                "Constant",
                &[],
                "c",
                vec![attr::tensor("value", f32s("cval", &[1.0, 2.0, 3.0]))],
            ),
            node("Add", &["x", "w"], "s0", vec![]),
            node("Add", &["s0", "bias"], "s1", vec![]),
            node("Reshape", &["s1", "shape"], "s2", vec![]),
            node("Add", &["s2", "c"], "sum", vec![]),
            node("If", &["cond"], "y", vec![then, els]),
        ],
        initializer: vec![w, typed, shape],
        sparse_initializer: vec![SparseTensorProto {
            values: Some(f32s("sp", &[4.0])),
            indices: Some(TensorProto {
                dims: vec![1],
                data_type: Some(7),
                name: Some("sp_i".into()),
                int64_data: vec![1],
                ..Default::default()
            }),
            dims: vec![3],
        }],
        input: vec![
            ValueInfoProto {
                name: Some("x".into()),
                ..Default::default()
            },
            ValueInfoProto {
                name: Some("cond".into()),
                ..Default::default()
            },
        ],
        output: vec![ValueInfoProto {
            name: Some("y".into()),
            ..Default::default()
        }],
        value_info: vec![ValueInfoProto {
            name: Some("s1".into()),
            doc_string: Some("a sum".into()),
            ..Default::default()
        }],
        ..Default::default()
    };
    let model = ModelProto {
        ir_version: Some(8),
        producer_name: Some("test".into()),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(13),
        }],
        metadata_props: vec![entry("author", "me")],
        graph: Some(graph),
        ..Default::default()
    };
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &model).unwrap();
    let name = Path::new("rewritten.onnx");
    let index = by_slices(&bytes[..], Some(name), &Default::default())
        .unwrap()
        .unwrap();
    let doc = Document::from_bytes(bytes.clone(), Some(name), None).unwrap();
    for (k, opts) in onnx_option_sets().iter().enumerate() {
        let what = format!("options {k}");
        // (all but `--exclude "*bias*"`, which would take a tensor the
        // graph reads away, convert)
        assert_eq!(
            same_onnx_conversion(&what, &index, &doc, opts),
            Some(k != 4),
            "{what}"
        );
    }
    // the cast one converts (not both refused)
    let mut out = std::io::Cursor::new(Vec::new());
    let s = mlformats::convert_sliced(
        &index,
        Format::Onnx,
        &ConvertOptions::new().dtype(DType::F16),
        &mut out,
    )
    .unwrap();
    assert_eq!(s.cast.len(), 2, "{s:?}");

    // an initializer holding raw_data that also says where its data is
    // (data_location DEFAULT): the deferred writer would leave that out, so
    // by slices it is refused with the reason (the whole path converts it)
    let mut located = model.clone();
    located.graph.as_mut().unwrap().initializer[0].data_location = Some(0);
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &located).unwrap();
    let index = by_slices(&bytes[..], Some(name), &Default::default())
        .unwrap()
        .unwrap();
    let doc = Document::from_bytes(bytes.clone(), Some(name), None).unwrap();
    let opts = ConvertOptions::new().dtype(DType::F16);
    assert!(mlformats::convert_document_to_bytes(&doc, Format::Onnx, &opts).is_ok());
    let e = mlformats::convert_sliced(&index, Format::Onnx, &opts, &mut out).unwrap_err();
    let msg = mlformats::chain_message(&e);
    assert!(
        msg.contains("data_location") && needs_whole(Format::Onnx, Format::Onnx, &opts, &msg),
        "{msg}"
    );
}
