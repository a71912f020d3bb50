//! A conversion of a document opened at a `ReadAt` (`Document::open_at`)
//! holds about one tensor at a time, not the file: measured with a
//! counting allocator (per thread, as `alloc_bounds.rs` counts) on a
//! safetensors file of 16 tensors of 2 MiB converted to every format that
//! holds f32 tensors, written to a sink.

use mlformats::{ConvertOptions, Document, Format};

mod counting;
use counting::{Counting, peak_of};

#[global_allocator]
static ALLOC: Counting = Counting;

const TENSORS: usize = 16;
const TENSOR_BYTES: usize = 2 << 20;

/// A safetensors file of [`TENSORS`] f32 tensors of [`TENSOR_BYTES`] each.
fn safetensors_file() -> Vec<u8> {
    let numel = TENSOR_BYTES / 4;
    let header: Vec<String> = (0..TENSORS)
        .map(|i| {
            format!(
                "\"layer{i}/W\":{{\"dtype\":\"F32\",\"shape\":[{},{}],\"data_offsets\":[{},{}]}}",
                numel / 256,
                256,
                i * TENSOR_BYTES,
                (i + 1) * TENSOR_BYTES
            )
        })
        .collect();
    let mut json = format!("{{{}}}", header.join(",")).into_bytes();
    while json.len() % 8 != 0 {
        json.push(b' ');
    }
    let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&json);
    for i in 0..TENSORS * numel {
        bytes.extend_from_slice(&(i as f32).to_le_bytes());
    }
    bytes
}

#[test]
fn a_read_at_document_converts_one_tensor_at_a_time() {
    let bytes = safetensors_file();
    let total = bytes.len();
    let name = std::path::Path::new("big.safetensors");
    let whole = Document::from_bytes(bytes.clone(), Some(name), None).unwrap();
    let doc = Document::open_at(bytes, Some(name), None, &Default::default()).unwrap();
    assert!(doc.is_read_at());
    let cases = [
        (
            Format::Safetensors,
            ConvertOptions::new().dtype(mlformats::DType::F16),
        ),
        (Format::Npz, ConvertOptions::new()),
        (Format::CvmParams, ConvertOptions::new()),
        (Format::Primitiv, ConvertOptions::new()),
        (Format::TennisModule, ConvertOptions::new()),
        (Format::NnablaH5, ConvertOptions::new()),
        (Format::NnablaProtobuf, ConvertOptions::new()),
        (Format::Onnx, ConvertOptions::new()),
    ];
    for (target, opts) in cases {
        let mut out = Vec::new();
        let mut sink = std::io::sink();
        let peak = peak_of(|| {
            let s = mlformats::convert_document_to_writer(&doc, target, &mut sink, &opts).unwrap();
            assert_eq!(s.tensors, TENSORS);
        });
        // the bytes are the whole document's
        mlformats::convert_document_to_writer(&doc, target, &mut out, &opts).unwrap();
        let (expected, _) = mlformats::convert_document_to_bytes(&whole, target, &opts).unwrap();
        assert!(out == expected, "{target}: not the whole document's bytes");
        eprintln!(
            "{target}: peak {:.1} MiB of a {:.1} MiB file",
            peak as f64 / 1048576.0,
            total as f64 / 1048576.0
        );
        assert!(
            peak < 4 * TENSOR_BYTES,
            "{target}: {peak} bytes held converting a file of {total} bytes"
        );
    }
    // nothing is kept by the document once converted
    let before = counting::held();
    let opts = ConvertOptions::new();
    mlformats::convert_document_to_writer(&doc, Format::Npz, &mut std::io::sink(), &opts).unwrap();
    let kept = counting::held() - before;
    assert!(kept < TENSOR_BYTES as isize, "{kept} bytes kept");
    // nor once each tensor was had alone
    let before = counting::held();
    for name in doc.names() {
        let t = doc.get(name).unwrap();
        assert_eq!(t.bytes().len(), TENSOR_BYTES, "{name}");
    }
    let kept = counting::held() - before;
    assert!(kept < TENSOR_BYTES as isize, "{kept} bytes kept after get");
}

/// The steps that need the whole model (an NNabla model kept, a file
/// re-encoded, an ONNX graph imported) read a document opened at a
/// `ReadAt` whole and give the whole document's bytes; with
/// `streaming_only` they are refused as `convert_sliced` refuses them.
#[test]
fn whole_model_steps_read_a_read_at_document_whole_or_refuse() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let cases = [
        (
            "nnabla/mlp.nnp",
            Format::NnablaNnp,
            ConvertOptions::new().dtype(mlformats::DType::F16),
        ),
        ("nnabla/mlp.nnp", Format::NnablaNntxt, ConvertOptions::new()),
        (
            "nnabla/mlp.nntxt",
            Format::NnablaNntxt,
            ConvertOptions::new(),
        ),
    ];
    for (file, target, opts) in cases {
        let path = root.join(file);
        let bytes = std::fs::read(&path).unwrap();
        let whole = Document::open(&path).unwrap();
        let doc = Document::open_at(bytes, Some(&path), None, &Default::default()).unwrap();
        let (expected, s) = mlformats::convert_document_to_bytes(&whole, target, &opts).unwrap();
        let (got, t) = mlformats::convert_document_to_bytes(&doc, target, &opts).unwrap();
        assert!(
            got == expected,
            "{file} -> {target}: not the whole document's bytes"
        );
        assert_eq!(format!("{s:?}"), format!("{t:?}"));
        assert!(s.whole_model, "{file} -> {target}");
        let refused =
            mlformats::convert_document_to_bytes(&doc, target, &opts.streaming_only(true));
        assert!(
            matches!(refused, Err(mlformats::Error::NeedsWholeModel { .. })),
            "{file} -> {target}: {refused:?}"
        );
    }
}
