//! Converting in memory (`convert_document_to_bytes`, what the viewer's
//! "Convert" downloads) and to a writer (`convert_document_to_writer`,
//! what `mlformats convert IN - --to FMT` writes to standard output) give
//! exactly the bytes `convert` writes to a file, for every target format,
//! and the same refusal where `convert` refuses.

use std::path::Path;

use mlformats::{ConvertOptions, Document, Format, chain_message};

const INPUTS: [&str; 6] = [
    "nnabla/convnet.nnp",
    "nnabla/mlp.nntxt",
    "tennis/py_convnet.tsm",
    "cvm/two_entry.params",
    "translate/import/cases/tsm_conv_group3_bias_stride.onnx",
    "primitiv/model_20_params_sorted.data",
];

fn testdata(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

fn check(rel: &str, opts: &ConvertOptions) -> (usize, usize) {
    let input = testdata(rel);
    let doc = Document::open(&input).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (mut same, mut refused) = (0, 0);
    for &target in Format::ALL {
        let out = dir.path().join(format!("out.{}", target.extension()));
        let by_file = mlformats::convert(&input, &out, opts);
        let in_memory = mlformats::convert_document_to_bytes(&doc, target, opts);
        let mut streamed = Vec::new();
        let to_writer = mlformats::convert_document_to_writer(&doc, target, &mut streamed, opts);
        match (&in_memory, to_writer) {
            (Ok((bytes, summary)), Ok(s)) => {
                assert!(*bytes == streamed, "{rel} -> {target}: to a writer");
                assert_eq!(s.warnings, summary.warnings, "{rel} -> {target}");
            }
            (Err(a), Err(b)) => {
                assert!(
                    streamed.is_empty(),
                    "{rel} -> {target}: written, then refused"
                );
                assert_eq!(chain_message(a), chain_message(&b), "{rel} -> {target}");
            }
            (a, b) => panic!(
                "{rel} -> {target}: in memory {:?}, to a writer {:?}",
                a.as_ref().map(|_| ()).map_err(|e| chain_message(e)),
                b.map(|_| ()).map_err(|e| chain_message(&e))
            ),
        }
        match (by_file, in_memory) {
            (Ok(file_summary), Ok((bytes, summary))) => {
                let written = std::fs::read(&out).unwrap();
                assert!(
                    written == bytes,
                    "{rel} -> {target}: {} bytes in memory, {} in the file",
                    bytes.len(),
                    written.len()
                );
                assert_eq!(summary.warnings, file_summary.warnings, "{rel} -> {target}");
                same += 1;
            }
            (Err(a), Err(b)) => {
                assert_eq!(chain_message(&a), chain_message(&b), "{rel} -> {target}");
                refused += 1;
            }
            (a, b) => panic!(
                "{rel} -> {target}: to a file {:?}, in memory {:?}",
                a.map(|_| ()).map_err(|e| chain_message(&e)),
                b.map(|_| ()).map_err(|e| chain_message(&e))
            ),
        }
    }
    (same, refused)
}

#[test]
fn in_memory_bytes_equal_the_file_for_every_target() {
    let mut total = 0;
    for rel in INPUTS {
        let (same, refused) = check(rel, &ConvertOptions::default());
        eprintln!("{rel}: {same} targets byte-identical, {refused} refused alike");
        assert!(same >= 3, "{rel}: only {same} targets convert");
        total += same;
    }
    assert!(total >= 30, "{total} conversions in all");
}

#[test]
fn with_options_too() {
    let mut opts = ConvertOptions::default();
    opts.dtype = Some(mlformats::DType::F16);
    opts.weights_only = true;
    let (same, _) = check("nnabla/convnet.nnp", &opts);
    assert!(same >= 5);
    let mut opts = ConvertOptions::default();
    opts.skip_unsupported = true;
    let (same, _) = check("tennis/py_convnet.tsm", &opts);
    assert!(same >= 8, "{same}");
}

#[test]
fn nothing_is_written_to_disk() {
    let doc = Document::open(testdata("cvm/two_entry.params")).unwrap();
    let (bytes, _) =
        mlformats::convert_document_to_bytes(&doc, Format::Npz, &ConvertOptions::default())
            .unwrap();
    assert!(!bytes.is_empty());
    assert!(!Path::new("converted.npz").exists());
    // the next write to a file goes to the file again
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.npz");
    mlformats::convert_document(&doc, &out, &ConvertOptions::default()).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), bytes);
}

#[test]
fn save_to_a_writer_gives_the_files_bytes_for_every_format() {
    let doc = Document::open(testdata("cvm/two_entry.params")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut same = Vec::new();
    for &format in Format::ALL {
        let path = dir.path().join(format!("saved.{}", format.extension()));
        let opts = mlformats::SaveOptions::new().format(format);
        let to_file = mlformats::save_with(&path, doc.tensors(), &opts);
        let mut out = Vec::new();
        let to_writer = mlformats::save_to_writer(&mut out, format, doc.tensors(), &opts);
        match (to_file, to_writer) {
            (Ok(()), Ok(())) => {
                assert!(std::fs::read(&path).unwrap() == out, "{format}");
                same.push(format);
            }
            (Err(a), Err(b)) => {
                assert!(out.is_empty(), "{format}");
                assert_eq!(chain_message(&a), chain_message(&b), "{format}");
            }
            (a, b) => panic!("{format}: to a file {a:?}, to a writer {b:?}"),
        }
    }
    // .nnp, .h5 and .npz, whose writers seek, among them
    for format in [
        Format::NnablaNnp,
        Format::NnablaH5,
        Format::Npz,
        Format::Safetensors,
    ] {
        assert!(same.contains(&format), "{format}: {same:?}");
    }
    assert!(same.len() >= 7, "{same:?}");
    assert_eq!(
        std::fs::read_dir(".")
            .unwrap()
            .filter(|e| e
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("saved."))
            .count(),
        0
    );
}
