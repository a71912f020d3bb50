//! The viewer module's answers, natively, on every file of testdata/: the
//! tensor table and the graph agree with the `inspect --json` document of
//! the same file; statistics and values agree with the tensors; hostile
//! bytes give an error, never a panic. A file opened by slices (the page's
//! `Model::open_indexed`, its own code for tables, statistics and values)
//! answers like the file opened whole, on a sample of testdata/ (the first
//! two of each folder and extension, every 25th) and fixtures of each kind
//! the index reads; converting by slices gives the whole file's bytes to
//! every target with every option set for one file of each extension and
//! one fixture of each kind (not for every file: minutes in a debug build);
//! statistics over tensors of several 4 MiB slices; the C ABI the page
//! calls.

use std::path::{Path, PathBuf};

use mlformats_web::Model;
use mlformats_web::abi::PageFile;
use serde_json::Value;

fn samples() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if !p.ends_with("fuzz-regressions") {
                    stack.push(p);
                }
                continue;
            }
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            if [
                "params",
                "data",
                "nnp",
                "nntxt",
                "protobuf",
                "h5",
                "tsm",
                "npz",
                "onnx",
                "safetensors",
            ]
            .contains(&ext)
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn open(p: &Path) -> Result<Model, mlformats_web::ViewError> {
    let name = p.file_name().unwrap().to_str().unwrap();
    Model::open_bytes(std::fs::read(p).unwrap(), name)
}

/// Every network's node count, as `inspect --json` (schema 2) gives it.
fn node_counts(g: &Value) -> Vec<usize> {
    if g.is_null() {
        return vec![];
    }
    g["graphs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["nodes"].as_array().unwrap().len())
        .collect()
}

#[test]
fn tables_and_graphs_equal_inspect_json() {
    let mut opened = 0;
    for p in samples() {
        let Ok(doc) = mlformats::open(&p) else {
            assert!(open(&p).is_err(), "{}: the library refuses it", p.display());
            continue;
        };
        let inspect = doc.inspect_json();
        let m = open(&p).unwrap();
        let rows: Value = serde_json::from_str(&m.tensors()).unwrap();
        let rows = rows.as_array().unwrap();
        let want = inspect["tensors"].as_array().unwrap();
        assert_eq!(rows.len(), want.len(), "{}", p.display());
        for (r, w) in rows.iter().zip(want) {
            assert_eq!(r["name"], w["name"], "{}", p.display());
            assert_eq!(r["dtype"], w["dtype"], "{}", p.display());
            assert_eq!(r["shape"], w["shape"], "{}", p.display());
            assert_eq!(r["stored_name"], w["stored_name"], "{}", p.display());
            assert_eq!(r["numel"], w["elements"], "{}", p.display());
            assert_eq!(r["bytes"], w["bytes"], "{}", p.display());
            // the name the table shows is the name every other call takes
            let name = r["name"].as_str().unwrap();
            if r["numel"].as_u64().unwrap() > 0 {
                assert!(m.values_json(name, 0, 1).is_ok(), "{}: {name}", p.display());
            }
        }
        let graph: Value = serde_json::from_str(&m.graph()).unwrap();
        let counts: Vec<usize> = if graph.is_null() {
            vec![]
        } else {
            graph["graphs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| g["nodes"].as_array().unwrap().len())
                .collect()
        };
        assert_eq!(counts, node_counts(&inspect["graph"]), "{}", p.display());
        let summary: Value = serde_json::from_str(&m.summary()).unwrap();
        assert_eq!(summary["format"], inspect["format"]);
        assert_eq!(summary["tensor_count"], want.len());
        assert_eq!(summary["parameters"], inspect["parameters"]);
        assert_eq!(summary["bytes"], inspect["tensor_bytes"]);
        opened += 1;
    }
    assert!(opened > 200, "{opened} samples");
}

#[test]
fn stats_and_values_agree_with_the_tensors() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nnabla/convnet.nnp");
    let doc = mlformats::open(&p).unwrap();
    let m = open(&p).unwrap();
    for (key, t) in doc.tensors() {
        let mut v = Vec::new();
        mlformats::tensor_core::stats::for_each_f64_block(t, |xs| v.extend_from_slice(xs));
        let s: Value = serde_json::from_str(&m.stats_json(key, 10).unwrap()).unwrap();
        let min = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(s["min"].as_f64().unwrap(), min, "{key}");
        assert_eq!(s["max"].as_f64().unwrap(), max, "{key}");
        assert_eq!(s["count"].as_u64().unwrap() as usize, v.len());
        let hist: u64 = s["histogram"]["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .sum();
        assert_eq!(hist as usize, v.len(), "{key}");
        let start = v.len() / 3;
        let got: Value = serde_json::from_str(&m.values_json(key, start, 5).unwrap()).unwrap();
        let got: Vec<f64> = got["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let end = (start + 5).min(v.len());
        assert_eq!(got.len(), end - start, "{key}");
        for (a, b) in got.iter().zip(&v[start..end]) {
            assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{key}: {a} {b}");
        }
    }
    assert!(m.stats_json("no such tensor", 10).is_err());
}

#[test]
fn hostile_bytes_are_errors() {
    for p in samples().iter().step_by(5) {
        let data = std::fs::read(p).unwrap();
        let name = p.file_name().unwrap().to_str().unwrap();
        for cut in [0, 1, data.len() / 2, data.len().saturating_sub(1)] {
            let cut = cut.min(data.len()); // an empty sample has no byte 1
            let lib =
                mlformats::Document::from_bytes(data[..cut].to_vec(), Some(Path::new(name)), None);
            let ours = Model::open_bytes(data[..cut].to_vec(), name);
            assert_eq!(lib.is_ok(), ours.is_ok(), "{name} cut at {cut}");
            // by slices: refused too (or sent to the whole-file path)
            let sliced = Model::open_indexed(
                Box::new(PageFile::over(Box::new(data[..cut].to_vec()))),
                name,
            );
            // (or opened, its first read failing: `first_read_fails`)
            if let (Err(a), Ok(Some(s))) = (&lib, &sliced) {
                first_read_fails(name, &mlformats::chain_message(a), s);
            }
            if let (Err(a), Err(b)) = (lib, ours) {
                assert_eq!(mlformats::chain_message(&a), b.0);
            }
        }
    }
}

/// The C ABI the page calls, driven the way the page drives it: the name
/// and the bytes in the input buffer, `mlf_open`, JSON requests, answers
/// and error messages in the output buffer.
#[test]
fn the_c_abi_answers_like_the_library() {
    use mlformats_web::abi::{self, mlf_open, mlf_output_len, mlf_request};
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nnabla/convnet.nnp");
    let name = b"convnet.nnp";
    let mut input = name.to_vec();
    input.extend(std::fs::read(&p).unwrap());
    abi::set_input(input);
    assert_eq!(mlf_open(name.len()), 0);
    assert_eq!(mlf_output_len(), abi::output().len());
    let summary: Value = serde_json::from_slice(&abi::output()).unwrap();
    assert_eq!(summary["format"], "nnabla-nnp");
    assert_eq!(summary["file"], "convnet.nnp");

    let doc = mlformats::open(&p).unwrap();
    let inspect = doc.inspect_json();
    let ask = |req: Value| -> (u32, Vec<u8>) {
        abi::set_input(req.to_string().into_bytes());
        (mlf_request(), abi::output())
    };
    let (rc, out) = ask(serde_json::json!({"op": "inspect"}));
    assert_eq!(rc, 0);
    assert_eq!(serde_json::from_slice::<Value>(&out).unwrap(), inspect);
    let first = inspect["tensors"][0]["name"].as_str().unwrap();
    let (rc, out) = ask(serde_json::json!({"op": "stats", "name": first, "bins": 8}));
    assert_eq!(rc, 0);
    let s: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(s["count"], inspect["tensors"][0]["elements"]);
    assert_eq!(s["histogram"]["counts"].as_array().unwrap().len(), 8);
    let (rc, out) = ask(serde_json::json!({"op": "values", "name": "nope"}));
    assert_eq!(
        (rc, String::from_utf8(out).unwrap()),
        (1, "no tensor named \"nope\"".into())
    );
    let (rc, _) = ask(serde_json::json!({"op": "frobnicate"}));
    assert_eq!(rc, 1);

    // convert: the bytes `convert` writes to a file of that format
    let (rc, out) = ask(serde_json::json!({"op": "formats"}));
    assert_eq!(rc, 0);
    let formats: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        formats.as_array().unwrap().len(),
        mlformats::Format::ALL.len()
    );
    let dir = std::env::temp_dir().join(format!("mlformats-web-convert-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in formats.as_array().unwrap() {
        let (name, ext) = (
            f["name"].as_str().unwrap(),
            f["extension"].as_str().unwrap(),
        );
        let file = dir.join(format!("convnet.{ext}"));
        mlformats::convert(&p, &file, &Default::default()).unwrap();
        let (rc, out) = ask(serde_json::json!({"op": "convert", "to": name}));
        assert_eq!(rc, 0, "{name}: {}", String::from_utf8_lossy(&out));
        assert!(out == std::fs::read(&file).unwrap(), "{name}: other bytes");
    }
    // with options: the bytes `convert` writes with the same options, and
    // the library's message for a value it refuses
    let cases = [
        (
            serde_json::json!({"op": "convert", "to": "safetensors", "dtype": "f16"}),
            "safetensors",
            mlformats::ConvertOptions::new().dtype(mlformats::DType::F16),
        ),
        (
            serde_json::json!({"op": "convert", "to": "npz", "only": ["conv*"], "exclude": ["*/b"]}),
            "npz",
            mlformats::ConvertOptions::new()
                .only("conv*")
                .exclude("*/b"),
        ),
        (
            serde_json::json!({"op": "convert", "to": "onnx", "opset": "17"}),
            "onnx",
            mlformats::ConvertOptions::new().opset(17),
        ),
    ];
    for (req, ext, opts) in cases {
        let file = dir.join(format!("options.{ext}"));
        mlformats::convert(&p, &file, &opts).unwrap();
        let (rc, out) = ask(req.clone());
        assert_eq!(rc, 0, "{req}: {}", String::from_utf8_lossy(&out));
        assert!(out == std::fs::read(&file).unwrap(), "{req}: other bytes");
    }
    let opts = mlformats::ConvertOptions::new().opset(99);
    let want =
        mlformats::chain_message(&mlformats::convert(&p, dir.join("bad.onnx"), &opts).unwrap_err());
    let (rc, out) = ask(serde_json::json!({"op": "convert", "to": "onnx", "opset": 99}));
    assert_eq!((rc, String::from_utf8(out).unwrap()), (1, want));
    let (rc, out) = ask(serde_json::json!({"op": "convert", "to": "npz", "dtype": "f8"}));
    assert_eq!(rc, 1);
    assert!(
        String::from_utf8(out)
            .unwrap()
            .starts_with("invalid value 'f8' for '--dtype <TYPE>'")
    );
    std::fs::remove_dir_all(&dir).unwrap();
    let (rc, out) = ask(serde_json::json!({"op": "convert", "to": "pdf"}));
    assert_eq!(rc, 1);
    assert!(
        String::from_utf8(out)
            .unwrap()
            .starts_with("unknown format \"pdf\"")
    );
    abi::set_input(b"{not json".to_vec());
    assert_eq!(mlf_request(), 1);

    // a hostile file: the library's message, and the previous file is gone
    let mut input = name.to_vec();
    input.extend(&std::fs::read(&p).unwrap()[..100]);
    abi::set_input(input);
    assert_eq!(mlf_open(name.len()), 1);
    let msg = String::from_utf8(abi::output()).unwrap();
    let lib = mlformats::Document::from_bytes(
        std::fs::read(&p).unwrap()[..100].to_vec(),
        Some(Path::new("convnet.nnp")),
        None,
    )
    .unwrap_err();
    assert_eq!(msg, mlformats::chain_message(&lib));
    let (rc, out) = ask(serde_json::json!({"op": "tensors"}));
    assert_eq!((rc, out), (1, b"no file is open".to_vec()));
    abi::set_input(b"ab".to_vec());
    assert_eq!(mlf_open(3), 1);
}

/// Both ways of opening `bytes`: whole, and by slices the way the page
/// opens a big file (through the page file's block cache); every answer
/// the page asks for is the same.
fn sliced_equals_whole(name: &str, bytes: Vec<u8>) -> bool {
    sliced_equals_whole_with(name, bytes, 0)
}

/// [`sliced_equals_whole`], and converted to every target with each of
/// all the option sets ([`converts_like_whole`]).
fn sliced_converts_like_whole(name: &str, bytes: Vec<u8>) -> bool {
    sliced_equals_whole_with(name, bytes, OPTION_SETS)
}

/// [`sliced_equals_whole`], converting to every target too with the
/// first `convert` option sets of [`converts_like_whole`] (none for 0).
fn sliced_equals_whole_with(name: &str, bytes: Vec<u8>, convert: usize) -> bool {
    let whole = Model::open_bytes(bytes.clone(), name);
    let sliced = Model::open_indexed(Box::new(PageFile::over(Box::new(bytes))), name);
    let (whole, sliced) = match (whole, sliced) {
        (Ok(w), Ok(Some(s))) => (w, s),
        // `None`: a format read whole only (the page opens it whole)
        (_, Ok(None)) | (Err(_), Err(_)) => return false,
        // an ONNX initializer whose count is checked at its first read
        // (past the varints counted at open, see `mlformats::random_access`): the file
        // opens, and the first read of that tensor fails as the whole
        // path fails
        (Err(w), Ok(Some(s))) => {
            first_read_fails(name, &w.0, &s);
            return false;
        }
        (w, s) => panic!(
            "{name}: whole {:?}, sliced {:?}",
            w.err(),
            s.map(|s| s.is_some())
        ),
    };
    assert!(sliced.is_sliced() && !whole.is_sliced());
    let json = |s: String| -> Value { serde_json::from_str(&s).unwrap() };
    let mut ws = json(whole.summary());
    let mut ss = json(sliced.summary());
    assert_eq!(ss["sliced"], true);
    ws["sliced"] = Value::Null;
    ss["sliced"] = Value::Null;
    assert_eq!(ws, ss, "{name}");
    assert_eq!(json(whole.tensors()), json(sliced.tensors()), "{name}");
    assert_eq!(json(whole.graph()), json(sliced.graph()), "{name}");
    let rows = json(whole.tensors());
    for r in rows.as_array().unwrap() {
        let key = r["name"].as_str().unwrap();
        assert_eq!(
            json(whole.stats_json(key, 40).unwrap()),
            json(sliced.stats_json(key, 40).unwrap()),
            "{name}: {key}"
        );
        let n = r["numel"].as_u64().unwrap() as usize;
        // small reads (from the cached block, across its edge) and large ones
        for (start, count) in [
            (0, 100),
            (n / 2, 7),
            (n.saturating_sub(3), 10),
            (n + 5, 3),
            (16_383, 3),
            (8_191, 2),
            (n / 3, 5_000),
        ] {
            assert_eq!(
                json(whole.values_json(key, start, count).unwrap()),
                json(sliced.values_json(key, start, count).unwrap()),
                "{name}: {key} from {start}"
            );
        }
    }
    assert!(sliced.stats_json("no such tensor", 10).is_err());
    if convert > 0 {
        converts_like_whole(name, &whole, &sliced, convert);
    }
    true
}

/// The whole path refuses the file `name` (`whole`: its message), the
/// index opened it: the statistics (and values) of some tensor fail; of
/// the first such, with the whole path's message when that is a count.
fn first_read_fails(name: &str, whole: &str, sliced: &Model) {
    let rows: Value = serde_json::from_str(&sliced.tensors()).unwrap();
    for r in rows.as_array().unwrap() {
        let key = r["name"].as_str().unwrap();
        let Err(e) = sliced.values_json(key, 0, 1) else {
            continue;
        };
        if whole.contains(" values but shape ") {
            assert_eq!(e.0, whole, "{name}: {key}");
        }
        let stats = sliced.stats_json(key, 40).unwrap_err();
        assert_eq!(stats.0, e.0, "{name}: {key}");
        return;
    }
    panic!("{name}: the whole path says {whole}, every tensor reads by slices");
}

/// Every model file under the folder `MLFORMATS_CORPUS` names (CI sets it
/// to the real-world and golden corpus when that is beside the checkout;
/// unset, there is nothing to check) opened by slices answers like the
/// whole file: summary, table, graph, statistics, values (and every
/// conversion, with `MLFORMATS_CORPUS_CONVERT=1`). Prints how many opened
/// by slices and names the ones read whole.
#[test]
fn corpus_files_open_by_slices_like_the_whole_file() {
    let Some(root) = std::env::var_os("MLFORMATS_CORPUS") else {
        eprintln!("MLFORMATS_CORPUS is not set: no corpus to check");
        return;
    };
    let convert = std::env::var_os("MLFORMATS_CORPUS_CONVERT").is_some();
    let exts = [
        "params",
        "data",
        "nnp",
        "nntxt",
        "prototxt",
        "protobuf",
        "h5",
        "tsm",
        "npz",
        "onnx",
        "safetensors",
    ];
    let mut files = Vec::new();
    let mut stack = vec![PathBuf::from(root)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| exts.contains(&e))
            {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(!files.is_empty(), "no model file in the corpus");
    let mut whole_only = Vec::new();
    let (mut sliced, mut refused) = (0, 0);
    for p in &files {
        let name = p.file_name().unwrap().to_str().unwrap();
        let bytes = std::fs::read(p).unwrap();
        // (a file the whole path refuses is refused by slices too, or
        // sent to the whole path: checked by `sliced_equals_whole_with`)
        let readable = Model::open_bytes(bytes.clone(), name).is_ok();
        let convert = if convert { OPTION_SETS } else { 0 };
        if sliced_equals_whole_with(name, bytes, convert) {
            sliced += 1;
        } else if readable {
            whole_only.push(p.display().to_string());
        } else {
            refused += 1;
        }
    }
    println!(
        "corpus: {sliced} of {} files open by slices and answer like the whole file; \
         {refused} refused by both paths; read whole: {}",
        files.len(),
        whole_only.len()
    );
    for p in &whole_only {
        println!("  read whole: {p}");
    }
}

/// How many option sets [`converts_like_whole`] has.
const OPTION_SETS: usize = 8;

/// Converting by slices (`Model::convert_to`: a slice at a time to
/// safetensors, npz and cvm-params, a tensor at a time to the others) gives
/// the bytes converting the whole file gives, to every target, with the
/// first `sets` option sets, or the same refusal; the only conversions refused by slices
/// alone are the documented ones that need the whole model (an ONNX
/// model's own graph changed, an ONNX graph imported, an NNabla model kept)
/// and re-encoding a file into its own format; NNabla and TenniS graphs
/// export to ONNX by slices.
fn converts_like_whole(name: &str, whole: &Model, sliced: &Model, sets: usize) {
    use mlformats::{ConvertOptions, DType, Format};
    let option_sets = [
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
    ];
    assert_eq!(option_sets.len(), OPTION_SETS);
    let from = sliced_format(sliced).unwrap();
    for &target in Format::ALL {
        assert!(mlformats::SLICED_TARGETS.contains(&target));
        for (k, opts) in option_sets.iter().enumerate().take(sets) {
            let what = format!("{name} -> {target} (options {k})");
            let w = whole.convert(target.name(), opts, None);
            let s = sliced.convert(target.name(), opts, None);
            let s_abi = {
                let mut sink = mlformats_web::abi::PageSink::new();
                let r = sliced.convert_to(target.name(), opts, false, &mut sink);
                std::io::Write::flush(&mut sink).unwrap();
                r.map(|n| (n, mlformats_web::abi::streamed()))
            };
            // the refusals of the sliced path alone (see `convert_sliced`)
            let needs_whole = |msg: &str| {
                msg.contains("a slice at a time")
                    && if opts.is_plain() && from == target {
                        msg.contains("re-encoding")
                    } else if opts.weights_only {
                        false
                    } else if target == Format::Onnx {
                        from == Format::Onnx
                            && msg.contains("exports its graph, which needs the whole model")
                    } else if from == Format::Onnx {
                        msg.contains("imports its graph")
                    } else {
                        from.is_nnabla()
                            && target.is_nnabla()
                            && ((target != Format::NnablaH5 && msg.contains("keeps its model"))
                                || (opts.is_plain() && msg.contains("more than once")))
                    }
            };
            match (&w, &s) {
                (Ok(w), Ok(s)) => {
                    assert!(
                        w == s,
                        "{what}: {} bytes by slices, {} whole",
                        s.len(),
                        w.len()
                    );
                    let (n, streamed) = s_abi.unwrap();
                    assert_eq!(n as usize, w.len(), "{what}");
                    assert!(streamed == *w, "{what}: streamed through the page sink");
                }
                (Err(w), Err(s)) => {
                    assert!(
                        w.0 == s.0 || needs_whole(&s.0),
                        "{what}: whole {:?}, by slices {:?}",
                        w.0,
                        s.0
                    );
                    assert_eq!(s_abi.unwrap_err().0, s.0, "{what}");
                }
                (Ok(_), Err(s)) => {
                    assert!(needs_whole(&s.0), "{what}: refused by slices only: {}", s.0);
                }
                (Err(w), Ok(_)) => panic!("{what}: whole refuses ({}), by slices not", w.0),
            }
        }
    }
}

fn sliced_format(m: &Model) -> Option<mlformats::Format> {
    let v: Value = serde_json::from_str(&m.summary()).unwrap();
    mlformats::Format::from_name(v["format"].as_str()?)
}

/// In each folder, the files of each extension: the first two and every
/// 25th (files of one folder and extension share a layout; the page's
/// two ways of opening differ by format, not by file).
fn sample_of(files: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut groups: std::collections::BTreeMap<(PathBuf, String), Vec<PathBuf>> =
        Default::default();
    for p in files {
        let ext = p.extension().unwrap().to_string_lossy().into_owned();
        groups
            .entry((p.parent().unwrap().to_path_buf(), ext))
            .or_default()
            .push(p);
    }
    groups
        .into_values()
        .flat_map(|g| {
            g.into_iter()
                .enumerate()
                .filter(|(i, _)| *i < 2 || i % 25 == 0)
                .map(|(_, p)| p)
        })
        .collect()
}

/// A sample of testdata/ (see [`sample_of`]), each file opened by slices
/// answering like the whole file, converted to every target with every
/// option set for the first file of each extension; then fixtures of each
/// kind the index reads (stored, deflated, chunked, big-endian, typed ONNX
/// fields, primitiv kinds), one of each kind converted too.
#[test]
fn a_file_opened_by_slices_answers_like_the_whole_file() {
    let mut opened = 0;
    let mut converted = std::collections::BTreeSet::new();
    for p in sample_of(samples()) {
        let name = p.file_name().unwrap().to_str().unwrap();
        let ext = p.extension().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&p).unwrap();
        let ok = if converted.contains(&ext) {
            sliced_equals_whole(name, bytes)
        } else {
            sliced_converts_like_whole(name, bytes)
        };
        if ok {
            converted.insert(ext);
        }
        opened += ok as usize;
        // each read .params also as .safetensors
        if let Ok(doc) = mlformats::open(&p)
            && doc.format() == mlformats::Format::CvmParams
        {
            let tmp = tempfile::tempdir().unwrap();
            let st = tmp.path().join("x.safetensors");
            if mlformats::save(&st, doc.tensors()).is_ok() {
                let bytes = std::fs::read(&st).unwrap();
                let ok = if converted.contains("safetensors") {
                    sliced_equals_whole("x.safetensors", bytes)
                } else {
                    sliced_converts_like_whole("x.safetensors", bytes)
                };
                if ok {
                    converted.insert("safetensors".into());
                }
                opened += ok as usize;
            }
        }
    }
    assert!(opened >= 20, "{opened}");
    let every = [
        "params",
        "data",
        "nnp",
        "protobuf",
        "h5",
        "tsm",
        "npz",
        "onnx",
        "safetensors",
    ];
    assert!(
        every.iter().all(|e| converted.contains(*e)),
        "{converted:?}"
    );
    // an .nnp whose parameters are in a stored parameter.protobuf or a
    // stored parameter.h5, and an .h5: by slices, networks and graph
    // included (a deflated parameter.h5: below)
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let nnabla = testdata.join("nnabla");
    // (the first of each kind below converted to every target too)
    let check = |i: usize, name: &str, bytes: Vec<u8>| {
        if i == 0 {
            sliced_converts_like_whole(name, bytes)
        } else {
            sliced_equals_whole(name, bytes)
        }
    };
    for (i, name) in ["convnet.nnp", "mlp_pbparam.nnp", "convnet_params.h5"]
        .into_iter()
        .enumerate()
    {
        let bytes = std::fs::read(nnabla.join(name)).unwrap();
        assert!(check(i, name, bytes), "{name}");
    }
    // .npz with deflated (numpy.savez_compressed) or big-endian members,
    // or both kinds in one archive, and an .nnp whose parameter.protobuf is
    // deflated: by slices, inflated as they are read
    for (i, name) in [
        "mixed.npz",
        "big_endian.npz",
        "big_endian_compressed.npz",
        "savez_compressed.npz",
    ]
    .into_iter()
    .enumerate()
    {
        let bytes = std::fs::read(testdata.join("compressed").join(name)).unwrap();
        assert!(check(i, name, bytes), "{name}");
    }
    let name = "params_deflated.nnp";
    let bytes = std::fs::read(testdata.join("compressed").join(name)).unwrap();
    assert!(sliced_converts_like_whole(name, bytes), "{name}");
    // .h5 and .nnp whose datasets are chunked (gzip, shuffle), compact or
    // big-endian (testdata/nnabla/h5chunks, made with h5py): by slices
    for (i, name) in [
        "chunked_params.h5",
        "chunked_v110_params.h5",
        "many_chunks_params.h5",
        "filters_params.h5",
        "compact_params.h5",
        "big_endian_params.h5",
        "mlp_chunked.nnp",
    ]
    .into_iter()
    .enumerate()
    {
        let bytes = std::fs::read(nnabla.join("h5chunks").join(name)).unwrap();
        assert!(check(i, name, bytes), "{name}");
    }
    // primitiv Model, Parameter (with stats), batched Tensor, Shape and
    // Optimizer files: by slices, kind and metadata included
    for (i, name) in [
        "model_nested_nostats.data",
        "param_2x2_10stats.data",
        "tensor_2x2_batch3.data",
        "shape_scalar.data",
        "optimizer_adam_custom.data",
    ]
    .into_iter()
    .enumerate()
    {
        let bytes = std::fs::read(testdata.join("primitiv").join(name)).unwrap();
        assert!(check(i, name, bytes), "{name}");
    }
    // a TenniS module: by slices, its graph included
    let tsm = std::fs::read(testdata.join("tennis/py_convnet.tsm")).unwrap();
    assert!(sliced_converts_like_whole("py_convnet.tsm", tsm));
    // ONNX models whose initializers are in typed fields (float_data,
    // int32_data, ..., packed, unpacked, several runs): by slices
    let mut typed: Vec<PathBuf> = std::fs::read_dir(testdata.join("onnx_typed"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "onnx"))
        .collect();
    typed.sort();
    assert_eq!(typed.len(), 7);
    for (i, p) in typed.iter().enumerate() {
        let name = p.file_name().unwrap().to_str().unwrap();
        assert!(check(i, name, std::fs::read(p).unwrap()), "{name}");
    }
    // a deflated parameter.h5: by slices (its contiguous datasets), and
    // one of chunked datasets, which the index parses whole and holds
    let p = testdata.join("onnx/op_average_pool.nnp");
    assert!(sliced_equals_whole("x.nnp", std::fs::read(&p).unwrap()));
    let p = nnabla.join("h5chunks/mlp_chunked_deflated.nnp");
    assert!(sliced_equals_whole("x.nnp", std::fs::read(&p).unwrap()));
}

/// The zip archive `bytes` again, every member deflated.
fn deflated(bytes: &[u8]) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut zin = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut zout = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..zin.len() {
        let mut f = zin.by_index(i).unwrap();
        let name = f.name().unwrap().to_string();
        let o = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .large_file(true);
        let mut data = Vec::new();
        f.read_to_end(&mut data).unwrap();
        zout.start_file(name, o).unwrap();
        zout.write_all(&data).unwrap();
    }
    zout.finish().unwrap().into_inner()
}

/// 3 tensors bigger than a slice (4 MiB: two slices each; bigger ones
/// only take longer in a debug build), of sizes not a multiple of it, with
/// NaN, infinities and zeros.
fn big_tensors() -> [mlformats::Tensor<'static>; 3] {
    let a: Vec<f32> = (0..1_100_000u32)
        .map(|i| match i % 100_003 {
            7 => f32::NAN,
            8 => f32::INFINITY,
            9 => 0.0,
            _ => (i as f32 * 0.37).sin() * 1e3,
        })
        .collect();
    let b: Vec<f64> = (0..600_001u32).map(|i| (i as f64).sqrt() - 300.0).collect();
    let c: Vec<i8> = (0..4_500_000u32).map(|i| (i % 251) as i8).collect();
    let ta = mlformats::Tensor::from_values([1100, 1000], &a).unwrap();
    let tb = mlformats::Tensor::from_values([600_001], &b).unwrap();
    let tc = mlformats::Tensor::from_values([9, 500_000], &c).unwrap();
    assert!([&ta, &tb, &tc].iter().all(|t| t.bytes().len() > 4 << 20));
    [ta, tb, tc]
}

#[test]
fn statistics_over_many_slices_are_the_whole_tensors() {
    let [ta, tb, tc] = big_tensors();
    let tmp = tempfile::tempdir().unwrap();
    for ext in [
        "params",
        "safetensors",
        "npz",
        "tsm",
        "onnx",
        "h5",
        "nnp",
        "data",
    ] {
        let p = tmp.path().join(format!("big.{ext}"));
        if ext == "params" || ext == "safetensors" {
            mlformats::save(&p, [("a", &ta), ("b", &tb), ("c", &tc)]).unwrap();
        } else {
            // (primitiv stores f32 only; the other dtypes' statistics are
            // the page's, not the format's: once is enough)
            mlformats::save(&p, [("a", &ta)]).unwrap();
        }
        // (converted by slices, several slices a tensor: once, to every
        // target, plainly)
        let convert = if ext == "safetensors" { 1 } else { 0 };
        assert!(sliced_equals_whole_with(
            &format!("big.{ext}"),
            std::fs::read(&p).unwrap(),
            convert
        ));
    }
}

fn pb_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn pb_bytes(out: &mut Vec<u8>, num: u64, payload: &[u8]) {
    pb_varint(out, num << 3 | 2);
    pb_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// An `.onnx` model whose one initializer `w`, int64 of `[dims]`, holds
/// `n` values in one packed `int64_data` run (past the 4 MiB of varints
/// counted at open for `n` of 800,000).
fn int64_data_model(dims: u64, n: u64) -> Vec<u8> {
    let mut run = Vec::new();
    for i in 0..n {
        pb_varint(
            &mut run,
            (i * 2_654_435_761 % (1 << 40)) ^ (i & 1).wrapping_neg(),
        );
    }
    let mut t = Vec::new();
    t.extend_from_slice(&[1 << 3]);
    pb_varint(&mut t, dims);
    t.extend_from_slice(&[2 << 3, 7]);
    pb_bytes(&mut t, 8, b"w");
    pb_bytes(&mut t, 7, &run);
    let mut g = Vec::new();
    pb_bytes(&mut g, 2, b"g");
    pb_bytes(&mut g, 5, &t);
    let mut m = vec![1 << 3, 8];
    pb_bytes(&mut m, 7, &g);
    m
}

#[test]
fn a_big_int64_data_initializer_is_counted_at_its_first_read() {
    let n = 800_000;
    assert!(sliced_equals_whole("big.onnx", int64_data_model(n, n)));
    // a count that is not the dims': the table shows, the first read
    // (values, statistics) fails with the whole path's message
    for dims in [n - 1, n + 1] {
        let m = int64_data_model(dims, n);
        let Err(whole) = Model::open_bytes(m.clone(), "big.onnx") else {
            panic!("the whole path reads it");
        };
        let whole = whole.0;
        assert!(
            whole.contains(&format!("int64_data holds {n} values")),
            "{whole}"
        );
        let sliced = Model::open_indexed(Box::new(PageFile::over(Box::new(m.clone()))), "big.onnx")
            .unwrap()
            .unwrap();
        let rows: Value = serde_json::from_str(&sliced.tensors()).unwrap();
        assert_eq!(rows[0]["numel"], dims);
        assert_eq!(sliced.values_json("w", 5, 3).unwrap_err().0, whole);
        assert_eq!(sliced.stats_json("w", 40).unwrap_err().0, whole);
        assert!(!sliced_equals_whole("big.onnx", m));
    }
}

#[test]
fn statistics_over_many_slices_of_deflated_members_are_the_whole_tensors() {
    // an .npz of the first tensor above (4.4 MB: two slices), its member
    // deflated (numpy.savez_compressed's layout): inflated a slice at a
    // time, each pass going on from the last
    let [ta, _, _] = big_tensors();
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("big.npz");
    mlformats::save(&p, [("a", &ta)]).unwrap();
    let stored = std::fs::read(&p).unwrap();
    assert!(sliced_equals_whole("big_deflated.npz", deflated(&stored)));
}

#[test]
fn the_c_abi_opens_by_slices() {
    use mlformats_web::abi::{self, mlf_request};
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/cvm/two_entry.params");
    let rc = abi::open_sliced(Box::new(std::fs::read(&p).unwrap()), "two_entry.params");
    assert_eq!(rc, 0);
    let summary: Value = serde_json::from_slice(&abi::output()).unwrap();
    assert_eq!(summary["sliced"], true);
    abi::set_input(br#"{"op": "values", "name": "b", "start": 0, "count": 1}"#.to_vec());
    assert_eq!(mlf_request(), 0);
    let v: Value = serde_json::from_slice(&abi::output()).unwrap();
    assert_eq!(v["values"][0], 258.0);
    // converted a slice at a time, streamed through the page sink: the bytes
    // converting the whole file gives
    let whole = Model::open_bytes(std::fs::read(&p).unwrap(), "two_entry.params").unwrap();
    for to in ["npz", "safetensors"] {
        let req = serde_json::json!({"op": "convert_stream", "to": to, "dtype": "f16"});
        abi::set_input(req.to_string().into_bytes());
        assert_eq!(mlf_request(), 0);
        let v: Value = serde_json::from_slice(&abi::output()).unwrap();
        let opts = mlformats::ConvertOptions::new().dtype(mlformats::DType::F16);
        let want = whole.convert(to, &opts, None).unwrap();
        assert_eq!(v["bytes"], want.len());
        assert_eq!(abi::streamed(), want);
    }
    // needing the whole model (re-encoding a file into its own format,
    // --params): nothing written, the reason answered as {"whole": ...}
    // (the page then reads the file whole)
    for (req, why) in [
        (
            r#"{"op": "convert_stream", "to": "params"}"#,
            "rewrites it from the whole file",
        ),
        (
            r#"{"op": "convert_stream", "to": "npz", "params": true}"#,
            "--params merges",
        ),
    ] {
        abi::set_input(req.as_bytes().to_vec());
        assert_eq!(mlf_request(), 0);
        let v: Value = serde_json::from_slice(&abi::output()).unwrap();
        let msg = v["whole"].as_str().unwrap();
        assert!(
            msg.contains(why) && msg.contains("a slice at a time"),
            "{msg}"
        );
        assert!(v.get("bytes").is_none(), "{v}");
    }
    // any other refusal is an error: a malformed option
    abi::set_input(br#"{"op": "convert_stream", "to": "npz", "only": ["a[1"]}"#.to_vec());
    assert_eq!(mlf_request(), 1);
    let msg = String::from_utf8(abi::output()).unwrap();
    assert!(msg.contains("--only"), "{msg}");
    // chunked datasets in a deflated parameter.h5: the index parses the
    // archive whole and holds its tensors (every built-in format opens
    // through its index; 2, "open it whole", is left to formats without one)
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/nnabla/h5chunks/mlp_chunked_deflated.nnp");
    assert_eq!(
        abi::open_sliced(
            Box::new(std::fs::read(&p).unwrap()),
            "mlp_chunked_deflated.nnp"
        ),
        0
    );
}

/// A network opened by slices exports to ONNX, and an ONNX model's own graph
/// is rewritten with options, through the page sink (no `{"whole": ...}`):
/// the bytes `mlformats convert` writes.
#[test]
fn the_c_abi_exports_a_graph_by_slices() {
    use mlformats_web::abi::{self, mlf_request};
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    for (file, req) in [
        (
            "nnabla/convnet.nnp",
            r#"{"op": "convert_stream", "to": "onnx"}"#,
        ),
        (
            "nnabla/convnet.nnp",
            r#"{"op": "convert_stream", "to": "onnx", "dtype": "f16", "opset": 17}"#,
        ),
        (
            "tennis/cpp_add_const.tsm",
            r#"{"op": "convert_stream", "to": "onnx"}"#,
        ),
        // an ONNX model's own graph rewritten (cast to f16)
        (
            "onnx_typed/mixed.onnx",
            r#"{"op": "convert_stream", "to": "onnx", "dtype": "f16"}"#,
        ),
        (
            "translate/import/cases/const_test_constant_pad.onnx",
            r#"{"op": "convert_stream", "to": "onnx", "dtype": "f16"}"#,
        ),
    ] {
        let p = data.join(file);
        let name = p.file_name().unwrap().to_str().unwrap();
        let rc = abi::open_sliced(Box::new(std::fs::read(&p).unwrap()), name);
        assert_eq!(rc, 0, "{file}");
        abi::set_input(req.as_bytes().to_vec());
        assert_eq!(mlf_request(), 0, "{file}");
        let v: Value = serde_json::from_slice(&abi::output()).unwrap();
        assert!(v.get("whole").is_none(), "{file}: {v}");
        let r: Value = serde_json::from_str(req).unwrap();
        let mut opts = mlformats::ConvertOptions::new();
        if r.get("dtype").is_some() {
            opts = opts.dtype(mlformats::DType::F16);
        }
        if r.get("opset").is_some() {
            opts = opts.opset(17);
        }
        let (want, _) = mlformats::convert_document_to_bytes(
            &mlformats::open(&p).unwrap(),
            mlformats::Format::Onnx,
            &opts,
        )
        .unwrap();
        assert_eq!(v["bytes"], want.len(), "{file}");
        assert!(abi::streamed() == want, "{file}: {req}");
    }
}

#[test]
fn the_c_abi_converts_with_params_and_input_shapes() {
    use mlformats_web::abi::{self, mlf_open, mlf_params, mlf_request};
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nnabla");
    let tmp = tempfile::tempdir().unwrap();
    // --params: a network whose parameters are in a separate file
    let net = data.join("convnet.nntxt");
    let params = data.join("convnet_params.h5");
    let put = |name: &str, bytes: Vec<u8>| {
        let mut input = name.as_bytes().to_vec();
        input.extend(bytes);
        abi::set_input(input);
    };
    put("convnet.nntxt", std::fs::read(&net).unwrap());
    assert_eq!(mlf_open("convnet.nntxt".len()), 0);
    put("convnet_params.h5", std::fs::read(&params).unwrap());
    assert_eq!(mlf_params("convnet_params.h5".len()), 0);
    for to in ["onnx", "nnp", "safetensors"] {
        let out = tmp.path().join(format!("cli.{to}"));
        let mut opts = mlformats::ConvertOptions::new();
        opts.params = Some(params.clone());
        mlformats::convert(&net, &out, &opts).unwrap();
        let req = serde_json::json!({"op": "convert", "to": to, "params": true});
        abi::set_input(req.to_string().into_bytes());
        assert_eq!(
            mlf_request(),
            0,
            "{}",
            String::from_utf8_lossy(&abi::output())
        );
        assert!(
            abi::output() == std::fs::read(&out).unwrap(),
            "--params to {to}"
        );
    }
    // a parameter file that is not one: the library's message, naming it
    put("bad.h5", b"not hdf5".to_vec());
    assert_eq!(mlf_params("bad.h5".len()), 1);
    assert!(
        String::from_utf8(abi::output())
            .unwrap()
            .starts_with("bad.h5: ")
    );
    // --input-shape: parsed as the CLI parses it, into the options
    let req = serde_json::json!({"op": "convert", "to": "nnp", "input_shape": ["x:0=1,b"]});
    let opts = abi::convert_options(&req);
    assert_eq!(
        opts.unwrap_err(),
        "invalid value 'x:0=1,b' for '--input-shape <NAME=D0,D1,...>': invalid ONNX model: \
         --input-shape \"x:0=1,b\": expected NAME=D0,D1,..."
    );
    let req = serde_json::json!({"input_shape": ["Input=2,1,28,28", "D=2,1,28"]});
    let opts = abi::convert_options(&req).unwrap();
    assert_eq!(
        opts.input_shapes,
        [
            ("Input".to_string(), vec![2, 1, 28, 28]),
            ("D".to_string(), vec![2, 1, 28])
        ]
    );
}

/// A `.safetensors` past 4 GiB that exists only as its header and the bytes
/// written at its end (zeros elsewhere): read by offset, never held.
struct Sparse {
    len: u64,
    parts: Vec<(u64, Vec<u8>)>,
}

impl mlformats::random_access::ReadAt for Sparse {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let end = offset + buf.len() as u64;
        if end > self.len {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.fill(0);
        for (at, bytes) in &self.parts {
            let (a, b) = (offset.max(*at), end.min(at + bytes.len() as u64));
            if a < b {
                buf[(a - offset) as usize..(b - offset) as usize]
                    .copy_from_slice(&bytes[(a - at) as usize..(b - at) as usize]);
            }
        }
        Ok(())
    }
}

#[test]
fn a_safetensors_past_4_gib_opens_by_slices() {
    let big: u64 = 1025 * 1048576; // f32 elements: 4 GiB + 4 MiB
    let header = serde_json::json!({
        "big": {"dtype": "F32", "shape": [1025, 1048576], "data_offsets": [0, big * 4]},
        "tail": {"dtype": "F32", "shape": [4], "data_offsets": [big * 4, big * 4 + 16]},
    });
    let mut h = header.to_string().into_bytes();
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let mut head = (h.len() as u64).to_le_bytes().to_vec();
    head.extend(&h);
    let data = head.len() as u64;
    let values: Vec<u8> = [1.5f32, -2.25, 3.0, 4.75, 10.0, 20.0, 30.0, 40.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let file = Sparse {
        len: data + big * 4 + 16,
        parts: vec![(0, head), (data + big * 4 - 16, values)],
    };
    let m = Model::open_indexed(Box::new(PageFile::over(Box::new(file))), "huge.safetensors")
        .unwrap()
        .unwrap();
    let rows: Value = serde_json::from_str(&m.tensors()).unwrap();
    assert_eq!(rows[0]["bytes"], big * 4);
    assert_eq!(rows[1]["shape"], serde_json::json!([4]));
    let v: Value =
        serde_json::from_str(&m.values_json("big", big as usize - 4, 4).unwrap()).unwrap();
    assert_eq!(v["values"], serde_json::json!([1.5, -2.25, 3.0, 4.75]));
    let v: Value = serde_json::from_str(&m.values_json("tail", 0, 4).unwrap()).unwrap();
    assert_eq!(v["values"], serde_json::json!([10.0, 20.0, 30.0, 40.0]));
}

/// A file in memory that counts the bytes and calls read through it.
struct Counting {
    bytes: Vec<u8>,
    read: std::sync::Arc<(std::sync::atomic::AtomicU64, std::sync::atomic::AtomicU64)>,
}

impl mlformats::random_access::ReadAt for Counting {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        use std::sync::atomic::Ordering::Relaxed;
        self.read.0.fetch_add(buf.len() as u64, Relaxed);
        self.read.1.fetch_add(1, Relaxed);
        self.bytes.read_at(offset, buf)
    }
}

#[test]
fn statistics_of_a_deflated_member_inflate_it_once() {
    use std::sync::atomic::Ordering::Relaxed;
    // the 4.4 MB tensor above in a deflated member (two slices): the range
    // and the histogram from one pass, its compressed bytes read once
    let [ta, _, _] = big_tensors();
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("big.npz");
    mlformats::save(&p, [("a", &ta)]).unwrap();
    let bytes = deflated(&std::fs::read(&p).unwrap());
    let whole = Model::open_bytes(bytes.clone(), "big.npz").unwrap();
    let read = std::sync::Arc::new(Default::default());
    let file = Counting {
        bytes: bytes.clone(),
        read: std::sync::Arc::clone(&read),
    };
    let sliced = Model::open_indexed(Box::new(file), "big.npz")
        .unwrap()
        .unwrap();
    let (opened, _) = (read.0.swap(0, Relaxed), read.1.swap(0, Relaxed));
    let stats = sliced.stats_json("a", 40).unwrap();
    assert_eq!(stats, whole.stats_json("a", 40).unwrap());
    let (n, calls) = (read.0.load(Relaxed), read.1.load(Relaxed));
    eprintln!(
        "{} bytes, {opened} read at opening, {n} for the statistics in {calls} reads",
        bytes.len()
    );
    assert!(
        n <= bytes.len() as u64,
        "{n} bytes read for {}",
        bytes.len()
    );
    assert!(n * 10 > bytes.len() as u64 * 9, "{n} bytes read");
    // 1 MiB of compressed bytes at a time (a call out of the page's module each)
    assert!(calls <= n / (1 << 20) + 3, "{calls} reads");
}

/// 64-bit integers are given exactly as text (an f64 rounds 2^64 - 1 up to
/// 2^64 and 2^63 + 5 to 2^63), whole and by slices: values and the
/// statistics' extremes.
#[test]
fn sixty_four_bit_integers_are_exact() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/onnx_typed");
    for (file, key, text, min, max) in [
        (
            "uint64_data.onnx",
            "u64",
            vec!["0", "1", "18446744073709551615", "9223372036854775808"],
            "0",
            "18446744073709551615",
        ),
        (
            "int64_data.onnx",
            "i64",
            vec!["0", "-1", "1", "-9223372036854775808"],
            "-9223372036854775808",
            "9223372036854775807",
        ),
    ] {
        let p = root.join(file);
        let bytes = std::fs::read(&p).unwrap();
        let whole = open(&p).unwrap();
        let sliced = Model::open_indexed(Box::new(PageFile::over(Box::new(bytes))), file)
            .unwrap()
            .unwrap();
        for m in [&whole, &sliced] {
            let v: Value = serde_json::from_str(&m.values_json(key, 0, 4).unwrap()).unwrap();
            let got: Vec<&str> = v["text"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap())
                .collect();
            assert_eq!(got, text, "{file}");
            let s: Value = serde_json::from_str(&m.stats_json(key, 10).unwrap()).unwrap();
            assert_eq!(s["exact"]["min"], min, "{file}");
            assert_eq!(s["exact"]["max"], max, "{file}");
            // a slice from the middle
            let v: Value = serde_json::from_str(&m.values_json(key, 2, 1).unwrap()).unwrap();
            assert_eq!(v["text"].as_array().unwrap().len(), 1);
            assert_eq!(v["text"][0], text[2]);
        }
    }
}

/// The summary's metadata of an ONNX file holds its file-level fields and
/// every `metadata_props` entry (the page's model properties).
#[test]
fn onnx_model_properties_are_in_the_summary() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nnabla/convnet.nnp");
    let doc = mlformats::open(&p).unwrap();
    let (mut bytes, _) = mlformats::convert_document_to_bytes(
        &doc,
        mlformats::Format::Onnx,
        &mlformats::ConvertOptions::new(),
    )
    .unwrap();
    // a field of ModelProto appended: (tag, bytes)
    let field = |tag: u8, payload: &[u8]| {
        let mut out = vec![tag << 3 | 2, u8::try_from(payload.len()).unwrap()];
        out.extend_from_slice(payload);
        out
    };
    for (k, v) in [("author", "someone"), ("names", "{0: 'person'}")] {
        let entry = [field(1, k.as_bytes()), field(2, v.as_bytes())].concat();
        bytes.extend(field(14, &entry));
    }
    bytes.extend(field(6, b"about the model"));
    let m = Model::open_bytes(bytes, "props.onnx").unwrap();
    let s: Value = serde_json::from_str(&m.summary()).unwrap();
    let meta = &s["metadata"];
    assert_eq!(meta["metadata_props"]["author"], "someone");
    assert_eq!(meta["metadata_props"]["names"], "{0: 'person'}");
    assert_eq!(meta["doc_string"], "about the model");
    assert_eq!(meta["producer"], "mlformats");
    assert!(meta["ir_version"].as_i64().unwrap() >= 7);
    assert!(meta["opset"].as_i64().is_some());
}

/// A TenniS module's one graph, unnamed in the file, is named by the file's
/// stem in the summary and the graph; its nodes' internal `#op`, `#name`
/// and `#output_count` fields are not listed as attributes (the panel shows
/// the operator and the name), while their real parameters are.
#[test]
fn tennis_networks_are_named_and_internal_fields_hidden() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tennis/py_convnet.tsm");
    let doc = mlformats::open(&p).unwrap();
    let model = doc.graph().unwrap();
    assert_eq!(model.graphs.len(), 1);
    assert_eq!(model.graphs[0].name, "", "the file names no network");
    let internal = |k: &str| ["#op", "#name", "#output_count"].contains(&k);
    let in_file = model.graphs[0]
        .nodes
        .iter()
        .flat_map(|n| &n.attributes)
        .filter(|(k, _)| internal(k))
        .count();
    assert!(in_file > 0, "the typed graph keeps them");
    let m = Model::open_bytes(std::fs::read(&p).unwrap(), "models/py_convnet.tsm").unwrap();
    let s: Value = serde_json::from_str(&m.summary()).unwrap();
    assert_eq!(s["networks"][0]["name"], "py_convnet");
    let g: Value = serde_json::from_str(&m.graph()).unwrap();
    assert_eq!(g["graphs"][0]["name"], "py_convnet");
    let mut listed = 0;
    for n in g["graphs"][0]["nodes"].as_array().unwrap() {
        for a in n["attributes"].as_array().unwrap() {
            let k = a[0].as_str().unwrap();
            assert!(!internal(k), "{}: {k}", n["name"]);
            listed += 1;
        }
    }
    assert!(listed > 0, "real parameters are still listed");
    // without a file name, `module`
    let m = Model::open_bytes(std::fs::read(&p).unwrap(), "").unwrap();
    let g: Value = serde_json::from_str(&m.graph()).unwrap();
    assert_eq!(g["graphs"][0]["name"], "module");
}

/// A value info `name` of float elements whose dimensions are `dims`
/// (`Ok(size)` a `dim_value`, `Err(name)` a `dim_param`).
fn pb_value_info(name: &str, dims: &[Result<u64, &str>]) -> Vec<u8> {
    let mut shape = Vec::new();
    for d in dims {
        let mut dim = Vec::new();
        match d {
            Ok(v) => {
                dim.push(1 << 3);
                pb_varint(&mut dim, *v);
            }
            Err(p) => pb_bytes(&mut dim, 2, p.as_bytes()),
        }
        pb_bytes(&mut shape, 1, &dim);
    }
    let mut tensor = vec![1 << 3, 1];
    pb_bytes(&mut tensor, 2, &shape);
    let mut ty = Vec::new();
    pb_bytes(&mut ty, 1, &tensor);
    let mut v = Vec::new();
    pb_bytes(&mut v, 1, name.as_bytes());
    pb_bytes(&mut v, 2, &ty);
    v
}

/// The names an ONNX file gives its open dimensions (`dim_param`) reach
/// the page: in the graph's values and the summary's inputs and outputs,
/// beside the shape that holds -1 there.
#[test]
fn onnx_dimension_names_are_in_the_graph() {
    let mut node = Vec::new();
    pb_bytes(&mut node, 1, b"x");
    pb_bytes(&mut node, 2, b"y");
    pb_bytes(&mut node, 4, b"Relu");
    let mut g = Vec::new();
    pb_bytes(&mut g, 1, &node);
    pb_bytes(&mut g, 2, b"g");
    pb_bytes(&mut g, 11, &pb_value_info("x", &[Err("batch"), Ok(3)]));
    pb_bytes(&mut g, 12, &pb_value_info("y", &[Err("batch"), Ok(3)]));
    let mut m = vec![1 << 3, 8];
    pb_bytes(&mut m, 7, &g);
    let model = Model::open_bytes(m, "named.onnx").unwrap();
    let graph: Value = serde_json::from_str(&model.graph()).unwrap();
    let x = graph["graphs"][0]["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "x")
        .unwrap();
    assert_eq!(x["shape"], serde_json::json!([-1, 3]));
    assert_eq!(x["dim_names"], serde_json::json!(["batch", null]));
    let s: Value = serde_json::from_str(&model.summary()).unwrap();
    assert_eq!(s["networks"][0]["inputs"][0]["dim_names"][0], "batch");
    assert_eq!(s["networks"][0]["outputs"][0]["dim_names"][0], "batch");
    let layout: Value = serde_json::from_str(
        &model
            .layout_json(0, false, (&[], &[]), Default::default())
            .unwrap(),
    )
    .unwrap();
    let input = &layout["nodes"][0];
    assert_eq!(input["op"], "input");
    assert!(input.to_string().contains("batch×3"), "{input}");
}
