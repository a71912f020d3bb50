//! The library API on every file of `testdata/`: the "open any file"
//! program, the inspect contract, saving and converting.

use std::path::{Path, PathBuf};

use mlformats::{ConvertOptions, DType, Document, Format, SaveOptions, Tensor};
use serde_json::Value;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// Every data file of `testdata/<format>/` with its expected inspect document.
fn goldens() -> Vec<(PathBuf, Value)> {
    let mut out = Vec::new();
    for dir in ["cvm", "primitiv", "nnabla", "tennis"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(testdata().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .filter(|p| !matches!(p.extension().and_then(|e| e.to_str()), Some("json" | "md")))
            .collect();
        files.sort();
        for f in files {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
            let exp = [
                format!("{name}.expected.json"),
                format!("{stem}.expected.json"),
            ]
            .into_iter()
            .map(|e| f.with_file_name(e))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("no expectation for {}", f.display()));
            let v: Value = serde_json::from_slice(&std::fs::read(exp).unwrap()).unwrap();
            out.push((f, v));
        }
    }
    assert!(out.len() >= 75, "only {} goldens", out.len());
    out
}

/// The program, as a function: what it prints.
#[allow(clippy::needless_borrow)]
fn list_tensors(path: &Path, out_dir: &Path) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut lines = Vec::new();
    let doc = mlformats::open(path)?;
    lines.push(format!("{}", doc.format()));
    for (name, t) in doc.tensors() {
        lines.push(format!("{name} {} {:?}", t.dtype(), t.shape()));
    }
    if let Some((name, _)) = doc.tensors().next() {
        let v: Vec<f32> = doc.tensor(&name).unwrap().to_vec::<f32>()?;
        lines.push(format!("{name}: {} values", v.len()));
    }
    mlformats::save(out_dir.join("out.safetensors"), doc.tensors())?;
    Ok(lines)
}

#[test]
fn the_open_any_file_program_runs_on_every_golden() {
    let dir = tempfile::tempdir().unwrap();
    for (path, expected) in goldens() {
        let lines =
            list_tensors(&path, dir.path()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let tensors = expected["tensors"].as_array().unwrap();
        assert_eq!(
            lines[0],
            expected["format"].as_str().unwrap(),
            "{}",
            path.display()
        );
        assert_eq!(
            lines.len(),
            1 + tensors.len() + usize::from(!tensors.is_empty()),
            "{}",
            path.display()
        );
        // every line names a tensor, its dtype and its shape; names are the
        // contract's, but for the documented TenniS keys (constants named by
        // their node, repeated node names made unique)
        let doc = mlformats::open(&path).unwrap();
        for ((line, t), s) in lines[1..].iter().zip(tensors).zip(doc.stored()) {
            assert_eq!(s.stored_name, t["name"].as_str().unwrap());
            if doc.format() != Format::TennisModule {
                assert_eq!(s.stored_name, s.name);
            }
            let dims: Vec<String> = t["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.to_string())
                .collect();
            let want = format!("{} {}", s.name, t["dtype"].as_str().unwrap());
            assert!(line.starts_with(&want), "{line} vs {want}");
            // primitiv tensors have the batch as a last axis when it is not 1
            if t.get("batch").and_then(Value::as_u64).unwrap_or(1) == 1 {
                assert!(line.ends_with(&format!("[{}]", dims.join(", "))), "{line}");
            }
        }
        // the saved file holds the same tensors, in order, with the same values
        let back = mlformats::open(dir.path().join("out.safetensors")).unwrap();
        assert_eq!(
            back.names().collect::<Vec<_>>(),
            doc.names().collect::<Vec<_>>(),
            "{}",
            path.display()
        );
        for (name, t) in doc.tensors() {
            let b = back.tensor(name).unwrap();
            if let (Ok(x), Ok(y)) = (t.to_vec::<f64>(), b.to_vec::<f64>()) {
                let same = x
                    .iter()
                    .zip(&y)
                    .all(|(p, q)| p == q || (p.is_nan() && q.is_nan()));
                assert!(same && x.len() == y.len(), "{}: {name}", path.display());
            }
        }
    }
}

#[test]
fn inspect_json_matches_every_expectation() {
    for (path, expected) in goldens() {
        let got = mlformats::open(&path)
            .unwrap()
            .inspect_json_schema(1)
            .unwrap();
        for key in ["format", "kind", "file_size"] {
            assert_eq!(got[key], expected[key], "{}: {key}", path.display());
        }
        let (g, e) = (
            got["tensors"].as_array().unwrap(),
            expected["tensors"].as_array().unwrap(),
        );
        assert_eq!(g.len(), e.len(), "{}", path.display());
        for (a, b) in g.iter().zip(e) {
            for key in ["name", "dtype", "shape", "sha256"] {
                assert_eq!(a[key], b[key], "{}: {key} of {}", path.display(), b["name"]);
            }
        }
        if expected["graph"].is_null() {
            assert!(got["graph"].is_null(), "{}", path.display());
        } else {
            assert_eq!(got["graph"], expected["graph"], "{}: graph", path.display());
        }
    }
}

#[test]
fn safetensors_and_npz_written_by_convert_open_like_any_format() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("primitiv/model_nested_adam.data");
    let st = dir.path().join("m.safetensors");
    let npz = dir.path().join("m.npz");
    let s = mlformats::convert(&src, &st, &ConvertOptions::new()).unwrap();
    assert_eq!(
        (s.from, s.to, s.whole_model),
        (Format::Primitiv, Format::Safetensors, false)
    );
    mlformats::convert(&src, &npz, &ConvertOptions::new().keep_order(true)).unwrap();
    let original = mlformats::open(&src).unwrap();
    for path in [&st, &npz] {
        let doc = mlformats::open(path).unwrap();
        assert_eq!(doc.len(), original.len());
        for (name, t) in original.tensors() {
            assert_eq!(
                doc.tensor(name).unwrap().to_vec::<f32>().unwrap(),
                t.to_vec::<f32>().unwrap(),
                "{name}"
            );
        }
        let j = doc.inspect_json();
        assert_eq!(j["format"], doc.format().name());
        assert_eq!(j["tensors"].as_array().unwrap().len(), doc.len());
    }
    // safetensors keeps the source in __metadata__, reported as `metadata`
    let meta = &mlformats::open(&st).unwrap().inspect_json()["metadata"];
    assert_eq!(meta["mlformats.source_format"], "primitiv");
    assert_eq!(meta["mlformats.source_file"], "model_nested_adam.data");
    // npz kept primitiv's column-major order (Fortran arrays)
    let doc = mlformats::open(&npz).unwrap();
    let w = doc.tensors().find(|(_, t)| t.dims().len() == 2).unwrap().1;
    assert_eq!(w.order(), mlformats::MemoryOrder::ColumnMajor);
}

#[test]
fn save_writes_every_writable_format_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let w = Tensor::from_values([2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
    let b = Tensor::from_values([3], &[0.5f32, -1., 2.]).unwrap();
    let tensors = vec![
        ("fc/W".to_string(), w.clone()),
        ("fc/b".to_string(), b.clone()),
    ];
    for ext in [
        "safetensors",
        "npz",
        "params",
        "data",
        "nntxt",
        "protobuf",
        "nnp",
        "h5",
        "tsm",
    ] {
        let p = dir.path().join(format!("m.{ext}"));
        mlformats::save(&p, tensors.iter().map(|(n, t)| (n, t))).unwrap();
        let doc = mlformats::open(&p).unwrap();
        assert_eq!(Some(doc.format()), Format::from_extension(&p));
        for (n, t) in &tensors {
            // (a TenniS module stores each as a constant node's `value`, and
            // names it by the node: the name comes back as it was)
            let got = doc.tensor(n).unwrap_or_else(|| panic!("{ext}: {n}"));
            assert_eq!(
                got.to_vec::<f32>().unwrap(),
                t.to_vec::<f32>().unwrap(),
                "{ext}: {n}"
            );
            assert_eq!(got.dims(), t.dims(), "{ext}: {n}");
        }
    }
    // NNabla keeps need_grad
    let p = dir.path().join("g.h5");
    let opts = SaveOptions::new().need_grad("fc/b", false);
    mlformats::save_with(&p, tensors.iter().map(|(n, t)| (n, t)), &opts).unwrap();
    let doc = mlformats::open(&p).unwrap();
    assert_eq!(doc.need_grad("fc/W"), Some(true));
    assert_eq!(doc.need_grad("fc/b"), Some(false));
    // an unknown extension and a repeated name are refused, nothing written
    let e = mlformats::save(dir.path().join("m.xyz"), [("a", &w)]).unwrap_err();
    assert!(
        e.to_string().contains("cannot tell the output format"),
        "{e}"
    );
    let e = mlformats::save(dir.path().join("d.npz"), [("a", &w), ("a", &b)]).unwrap_err();
    assert!(e.to_string().contains("given twice"), "{e}");
    assert!(!dir.path().join("d.npz").exists());
}

#[test]
fn primitiv_writer_makes_a_sorted_column_major_model_and_refuses_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.data");
    let w = Tensor::from_values([2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
    let b = Tensor::from_values([3, 1], &[7f32, 8., 9.]).unwrap();
    let s = Tensor::from_values::<f32>([], &[2.5]).unwrap();
    mlformats::save(&out, [("w", &w), ("b", &b), ("s", &s)]).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    let m = mlformats::primitiv::Model::parse(&bytes).unwrap();
    let names: Vec<String> = m
        .entries
        .iter()
        .map(|(k, _)| mlformats::primitiv::join_key(k))
        .collect();
    assert_eq!(names, ["b", "s", "w"], "byte-wise sorted");
    let wv = &m.get(&["w"]).unwrap().value;
    assert_eq!(&*wv.values(), &[1., 4., 2., 5., 3., 6.], "column-major");
    assert_eq!(
        m.get(&["b"]).unwrap().value.shape().dims(),
        &[3],
        "a trailing 1 is dropped"
    );
    let cases: [(Tensor<'static>, &str); 3] = [
        (
            Tensor::from_values([1, 1, 1, 1, 1, 1, 1, 1, 2], &[0f32; 2]).unwrap(),
            "exceeding the dimension depth limit of 8",
        ),
        (
            Tensor::from_values::<f32>([2, 0], &[]).unwrap(),
            "invalid shape",
        ),
        (
            Tensor::from_values([2], &[1i32, 2]).unwrap(),
            "primitiv stores only f32",
        ),
    ];
    for (t, msg) in cases {
        let e = mlformats::save(&out, [("x", &t)])
            .unwrap_err()
            .full_message();
        assert!(e.contains("tensor \"x\"") && e.contains(msg), "{e}");
    }
}

#[test]
fn documents_from_bytes_errors_and_casts() {
    let text = b"network {\n  name: \"n\"\n  batch_size: 1\n}\nparameter {\n  variable_name: \"w\"\n  shape { dim: 2 }\n  data: 1.5\n  data: -2\n  need_grad: false\n}\n";
    let doc = Document::from_bytes(text.to_vec(), None, None).unwrap();
    assert_eq!(doc.format(), Format::NnablaNntxt);
    assert_eq!(
        doc.tensor("w").unwrap().to_vec::<f32>().unwrap(),
        [1.5, -2.0]
    );
    assert_eq!(doc.tensor("w").unwrap().to_vec::<i32>().unwrap(), [1, -2]);
    assert_eq!(doc.need_grad("w"), Some(false));
    assert_eq!(doc.graph().unwrap().graphs[0].name, "n");
    let e = Document::from_bytes(b"hello".to_vec(), None, None).unwrap_err();
    assert!(matches!(e, mlformats::Error::UnknownFormat), "{e}");
    let e = Document::from_bytes(Vec::new(), None, None).unwrap_err();
    assert_eq!(e.to_string(), "is empty");
    let e = mlformats::open(testdata()).unwrap_err();
    assert_eq!(e.to_string(), "is a directory");
    // a cast through convert: f32 parameters written as f16 safetensors
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("h.safetensors");
    let opts = ConvertOptions::new().dtype(DType::F16).only("*W*");
    let s = mlformats::convert(testdata().join("nnabla/mlp.nnp"), &out, &opts).unwrap();
    let doc = mlformats::open(&out).unwrap();
    assert_eq!(doc.len(), s.tensors);
    assert!(doc.names().all(|n| n.contains('W')) && !doc.is_empty());
    assert!(doc.tensors().all(|(_, t)| t.dtype() == DType::F16));
}

#[test]
fn solver_states_read_as_their_own_kind() {
    // an .nnp's optimizer members, h5 and protobuf forms of the same state
    let h5 = mlformats::open(testdata().join("nnabla/train_with_solver_state.nnp")).unwrap();
    let pb = mlformats::open(testdata().join("nnabla/train_with_solver_state_pb.nnp")).unwrap();
    let (a, b) = (h5.attachments().unwrap(), pb.attachments().unwrap());
    assert_eq!(a.len(), 1);
    assert_eq!(b.len(), 1);
    assert_eq!(a[0].0, "optimizer_Adam_optimizer.h5.optimizer");
    let (sa, sb) = (&a[0].1, &b[0].1);
    assert_eq!(sa.kind(), Some("solver-state"));
    assert_eq!(sb.kind(), Some("solver-state"));
    // Adam: m, t and v per parameter
    assert_eq!(sa.len(), 3 * h5.len());
    assert_eq!(
        sa.names().collect::<Vec<_>>(),
        sb.names().collect::<Vec<_>>()
    );
    for (name, t) in sa.tensors() {
        let u = sb.tensor(name).unwrap();
        assert_eq!(
            t.to_vec::<f64>().unwrap(),
            u.to_vec::<f64>().unwrap(),
            "{name}"
        );
    }
    assert!(
        sa.tensors()
            .any(|(n, t)| n.ends_with("/t") && t.dims().is_empty())
    );
    // the same member as a standalone .h5: kind solver-state, same tensors
    let dir = tempfile::tempdir().unwrap();
    let f = std::fs::File::open(testdata().join("nnabla/train_with_solver_state.nnp")).unwrap();
    let mut z = zip::ZipArchive::new(f).unwrap();
    let mut m = z.by_name("optimizer_Adam_optimizer.h5.optimizer").unwrap();
    let p = dir.path().join("state.h5");
    std::io::copy(&mut m, &mut std::fs::File::create(&p).unwrap()).unwrap();
    let alone = mlformats::open(&p).unwrap();
    assert_eq!(
        (alone.format(), alone.kind()),
        (Format::NnablaH5, Some("solver-state"))
    );
    assert_eq!(
        alone.names().collect::<Vec<_>>(),
        sa.names().collect::<Vec<_>>()
    );
    assert_eq!(alone.inspect_json()["kind"], "solver-state");
    // and it converts like any other file
    let out = dir.path().join("state.safetensors");
    mlformats::convert(&p, &out, &ConvertOptions::new()).unwrap();
    assert_eq!(mlformats::open(&out).unwrap().len(), alone.len());
    // other formats carry no attachments
    assert!(
        mlformats::open(testdata().join("nnabla/mlp.nnp"))
            .unwrap()
            .attachments()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn validate_applies_the_real_loaders_rules() {
    let net = |stored: &str| {
        format!(
            "network {{\n  name: \"n\"\n  batch_size: 1\n  variable {{\n    name: \"x\"\n    type: \"Buffer\"\n    shape {{ dim: -1 dim: 3 }}\n  }}\n  variable {{\n    name: \"W\"\n    type: \"Parameter\"\n    shape {{ dim: 3 dim: 2 }}\n  }}\n  function {{\n    name: \"fc\"\n    type: \"Affine\"\n    input: \"x\"\n    input: \"W\"\n    output: \"y\"\n  }}\n}}\nparameter {{\n  variable_name: \"W\"\n  shape {{ {stored} }}\n  data: 1 data: 2 data: 3 data: 4 data: 5 data: 6\n  need_grad: true\n}}\n"
        )
    };
    let good = Document::from_bytes(net("dim: 3 dim: 2").into_bytes(), None, None).unwrap();
    let v = mlformats::validate_document(&good, &|_| {});
    assert!(v.is_valid(), "{:?}", v.problems);
    let bad = Document::from_bytes(net("dim: 2 dim: 3").into_bytes(), None, None).unwrap();
    let v = mlformats::validate_document(&bad, &|_| {});
    assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
    let p = &v.problems[0];
    assert!(
        p.contains("network \"n\"")
            && p.contains("\"W\"")
            && p.contains("[2, 3]")
            && p.contains("[3, 2]"),
        "{p}"
    );
    // a NaN is a data problem
    let nan = net("dim: 3 dim: 2").replace("data: 1 ", "data: nan ");
    let d = Document::from_bytes(nan.into_bytes(), None, None).unwrap();
    let v = mlformats::validate_document(&d, &|_| {});
    assert_eq!(v.problems, ["W: 1 NaN of 6 elements"]);
}

#[test]
fn the_typed_summary_names_sizes_and_graphs() {
    let doc = mlformats::open(testdata().join("tennis/py_convnet.tsm")).unwrap();
    let s = doc.summary();
    assert_eq!(s.tensors.len(), doc.len());
    let names: Vec<&str> = s.tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, doc.names().collect::<Vec<_>>());
    let c = s
        .tensors
        .iter()
        .find(|t| t.name == "_const_fc_rhs")
        .unwrap();
    assert_eq!(c.stored_name.as_deref(), Some("_const_fc_rhs/value"));
    assert_eq!((c.elements, c.bytes), (5120, 5120 * 4));
    assert_eq!(s.parameters, 11_424);
    let g = &s.graphs[0];
    assert_eq!(
        (g.title.as_str(), g.op_word, g.ops),
        ("module", "nodes", 37)
    );
    assert_eq!(g.operators[0], ("<const>".to_string(), 15));
    // NNabla: the executor's data and outputs, with shapes
    let doc = mlformats::open(testdata().join("nnabla/mlp.nnp")).unwrap();
    let g = &doc.summary().graphs[0];
    assert_eq!(g.executors, ["runtime"]);
    assert_eq!(g.inputs[0].name, "x");
    assert_eq!(g.inputs[0].shape, Some(vec![-1, 8]));
    assert_eq!(g.op_word, "functions");
}

#[test]
fn validate_and_diff_both_take_paths() {
    let good = testdata().join("cvm/two_entry.params");
    assert!(mlformats::validate(&good).unwrap().is_valid());
    let bad = testdata().join("cvm/special_floats.params");
    assert!(!mlformats::validate(&bad).unwrap().is_valid());
    assert!(mlformats::validate(testdata().join("nope.params")).is_err());
    assert!(
        mlformats::diff(&good, &good, &mlformats::DiffOptions::new())
            .unwrap()
            .is_equal()
    );
    // with a filter, the names it leaves out are neither compared nor reported
    let other = testdata().join("cvm/special_floats.params");
    let none = mlformats::NameFilter::new(&["nothing".into()], &[]).unwrap();
    let r = mlformats::diff(&good, &other, &mlformats::DiffOptions::new().filter(none)).unwrap();
    assert!(r.is_equal() && r.tensors.is_empty());
}

#[test]
fn try_as_slice_works_with_the_question_mark() {
    fn first(doc: &Document, name: &str) -> Result<i8, Box<dyn std::error::Error>> {
        let t = doc.tensor(name).ok_or("no such tensor")?;
        Ok(t.try_as_slice::<i8>()?[0])
    }
    let doc = mlformats::open(testdata().join("cvm/two_entry.params")).unwrap();
    assert_eq!(first(&doc, "w").unwrap(), 1);
    assert_eq!(
        first(&doc, "b").unwrap_err().to_string(),
        "tensor holds i32, not i8"
    );
}

#[test]
fn graphs_refer_to_tensors_by_their_one_name() {
    let mut refs = 0;
    for dir in ["tennis", "nnabla", "onnx"] {
        for e in std::fs::read_dir(testdata().join(dir)).unwrap() {
            let p = e.unwrap().path();
            let Ok(doc) = mlformats::open(&p) else {
                continue;
            };
            let Some(g) = doc.graph() else { continue };
            for net in &g.graphs {
                for n in &net.nodes {
                    for (_, a) in &n.attributes {
                        if let mlformats::graph::Attribute::Tensor(t) = a {
                            refs += 1;
                            // (a packed TenniS value of several fields names
                            // them all: `key[0]`, `key[1]`, ...)
                            let packed = format!("{t}[0]");
                            assert!(
                                doc.tensor(t).is_some() || doc.tensor(&packed).is_some(),
                                "{}: {t}",
                                p.display()
                            );
                        }
                    }
                }
                // (an NNabla network may declare parameters its file does not hold)
                for v in net.values.iter().filter(|_| !doc.format().is_nnabla()) {
                    if let Some(t) = &v.tensor {
                        assert!(doc.tensor(t).is_some(), "{}: {t}", p.display());
                    }
                }
            }
        }
    }
    assert!(refs > 10, "{refs}");
}

/// The README's "Five calls", as written there (in a scratch folder).
#[test]
fn the_readmes_five_calls_run() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let st = dir.path().join("mlp.safetensors");
    let params = dir.path().join("mlp.params");
    let doc = mlformats::open(testdata().join("nnabla/mlp.nnp"))?;
    let w: Vec<f32> = doc.tensor("fc1/affine/W").unwrap().to_vec::<f32>()?;
    assert_eq!(w.len(), 8 * 16);
    mlformats::save(&st, doc.tensors())?;
    mlformats::convert(&st, &params, &mlformats::ConvertOptions::new())?;
    let equal = mlformats::diff(&st, &params, &mlformats::DiffOptions::new())?.is_equal();
    assert!(equal);
    assert!(mlformats::validate(&params)?.is_valid());
    let back = mlformats::open(&params)?;
    assert_eq!(back.tensor("fc1/affine/W").unwrap().to_vec::<f32>()?, w);
    Ok(())
}
