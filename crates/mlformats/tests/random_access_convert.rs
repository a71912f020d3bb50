//! Converting a file opened by random access (`mlformats::convert_index`)
//! against converting the whole file (`convert_document_to_bytes`): for a
//! sample of every format that opens by slices (every `.params`, `.h5`,
//! `.protobuf` and `.nnp` of `testdata/`, every fifth primitiv file, `.tsm`,
//! `.onnx` and `.npz`, and the deflated and big-endian archives of
//! `testdata/compressed`), to every target, with several option sets: the same
//! bytes and the same summary (warnings, skipped, casts, renames), or the
//! same error; refused by slices alone only where `convert_index` says so
//! (an ONNX model's own graph changed, an ONNX graph imported, an NNabla
//! model kept, a file re-encoded into its own format). Every NNabla
//! `.nnp`/`.protobuf` and TenniS `.tsm` of `testdata/` with a graph is also
//! exported to ONNX by slices, with several option sets, and compared byte
//! for byte.
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

use mlformats::random_access::FileIndex;
use mlformats::{ConvertOptions, DType, Document, Format};

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
            "params" | "h5" | "protobuf" | "nnp" | "safetensors" => 1,
            "data" | "tsm" | "onnx" => 5,
            "npz" => 25,
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

/// A refusal of the sliced path alone, as `convert_index` documents them.
fn needs_whole(from: Format, target: Format, opts: &ConvertOptions, msg: &str) -> bool {
    msg.contains("a slice at a time")
        && if opts.is_plain() && from == target {
            msg.contains("re-encoding")
        } else if opts.weights_only {
            false
        } else if target == Format::Onnx {
            // an ONNX model's own graph; NNabla and TenniS graphs export
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
        let index = match FileIndex::open(&bytes[..], Some(name), &Default::default()) {
            Ok(Some(i)) => i,
            _ => continue,
        };
        let Ok(doc) = Document::from_bytes(bytes.clone(), Some(name), None) else {
            continue;
        };
        opened += 1;
        let from = index.format();
        for target in Format::ALL {
            for (k, opts) in option_sets().iter().enumerate() {
                let what = format!("{} -> {target} (options {k})", p.display());
                let whole = mlformats::convert_document_to_bytes(&doc, target, opts);
                let mut out = std::io::Cursor::new(Vec::new());
                let sliced = mlformats::convert_index(
                    &index,
                    &bytes[..],
                    Some(name),
                    target,
                    opts,
                    &mut out,
                );
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
    assert!(opened >= 100, "{opened}");
    eprintln!("(equal, both refused, refused by slices alone) per target: {counts:?}");
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
    for p in all {
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !matches!(ext, "nnp" | "protobuf" | "tsm") {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        let name = Path::new(p.file_name().unwrap());
        let Ok(Some(index)) = FileIndex::open(&bytes[..], Some(name), &Default::default()) else {
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
            let sliced = mlformats::convert_index(
                &index,
                &bytes[..],
                Some(name),
                Format::Onnx,
                opts,
                &mut out,
            );
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
    assert!(counts[0] >= 500, "{counts:?}");
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
    let index = FileIndex::open(&bytes[..], Some(name), &Default::default())
        .unwrap()
        .unwrap();
    let doc = Document::from_bytes(bytes.clone(), Some(name), None).unwrap();
    assert_eq!(index.tensors().len(), 2);
    assert_eq!(doc.len(), 2);
    for target in [Format::NnablaH5, Format::NnablaNnp, Format::NnablaNntxt] {
        let mut out = std::io::Cursor::new(Vec::new());
        let plain = ConvertOptions::new();
        let e = mlformats::convert_index(&index, &bytes[..], Some(name), target, &plain, &mut out)
            .unwrap_err();
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
            let s =
                mlformats::convert_index(&index, &bytes[..], Some(name), target, &opts, &mut out)
                    .unwrap();
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
    let index = FileIndex::open(&bytes[..], Some(name), &Default::default())
        .unwrap()
        .unwrap();
    assert!(
        index
            .tensors()
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
            let ss =
                mlformats::convert_index(&index, &bytes[..], Some(name), target, &opts, &mut out)
                    .unwrap();
            assert!(whole == out.into_inner(), "{target} {opts:?}: bytes differ");
            assert_eq!(ws, ss, "{target}");
        }
    }
}
