//! The typed errors a caller branches on: a tensor position past the last
//! one, a tensor past the end of the file, a broken file found by a
//! reader's walk, an ONNX model that does not decode, a `--rename` the
//! ONNX export refuses. Each keeps the message it had as a string.

use std::path::{Path, PathBuf};

use mlformats::{ConvertOptions, Document, Error, Format};

fn td(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

/// The error under any [`Error::Tensor`] wrappers, and the tensor names
/// they give (outermost first).
fn unwrap_tensor(e: &Error) -> (&Error, Vec<&str>) {
    let mut names = Vec::new();
    let mut cur = e;
    while let Error::Tensor { name, source } = cur {
        names.push(name.as_str());
        cur = source;
    }
    (cur, names)
}

#[test]
fn a_tensor_position_past_the_last_is_no_tensor_at() {
    let bytes = std::fs::read(td("cvm/two_entry.params")).unwrap();
    let doc = Document::open_at(bytes, None, None, &Default::default()).unwrap();
    assert_eq!(doc.len(), 2);
    let mut buf = Vec::new();
    let e = doc.read_elements(7, 0, 1, &mut buf).unwrap_err();
    assert!(matches!(e, Error::NoTensorAt { index: 7 }), "{e:?}");
    assert_eq!(e.to_string(), "no tensor 7");
    let e = doc.read_elements(2, 0, 1, &mut buf).unwrap_err();
    assert!(matches!(e, Error::NoTensorAt { index: 2 }), "{e:?}");
    let e = doc.tensor_stats(5).unwrap_err();
    assert!(matches!(e, Error::NoTensorAt { index: 5 }), "{e:?}");
}

// (a tensor past the end of the file, `Error::PastEnd`: the unit test in
// `src/random_access.rs`, since an opened document's index always fits
// its own file)

#[test]
fn nntxt_that_is_not_utf8_is_malformed_at_its_byte() {
    let mut bytes = b"network {\n  name: \"n\"\n}\n".to_vec();
    let at = bytes.len();
    bytes.extend_from_slice(b"\xff\xfe");
    let e = Document::from_bytes(bytes, None, Some(Format::NnablaNntxt)).unwrap_err();
    let (inner, _) = unwrap_tensor(&e);
    let Error::Malformed {
        part, at: found, ..
    } = inner
    else {
        panic!("{e:?}")
    };
    assert_eq!((*part, *found), ("protobuf text", Some(at as u64)));
    assert_eq!(
        inner.to_string(),
        format!("not UTF-8 text at byte {at}: a .nntxt/.prototxt file is protobuf text format")
    );
    assert!(!e.is_unreadable());
}

#[test]
fn a_truncated_protobuf_is_malformed_at_the_message_that_runs_short() {
    let bytes = std::fs::read(td("nnabla/mlp.protobuf")).unwrap();
    for cut in [bytes.len() / 3, bytes.len() / 2, bytes.len() - 3] {
        let e = Document::from_bytes(bytes[..cut].to_vec(), None, Some(Format::NnablaProtobuf))
            .unwrap_err();
        let (inner, _) = unwrap_tensor(&e);
        let Error::Malformed {
            part,
            at: Some(at),
            why,
        } = inner
        else {
            panic!("cut {cut}: {e:?}")
        };
        assert_eq!(*part, "protobuf message");
        assert!(*at < cut as u64, "cut {cut}: {e:?}");
        assert!(
            why.ends_with(&format!("(at byte {at} of the archive)")),
            "{why}"
        );
        assert_eq!(&inner.to_string(), why);
    }
}

/// An `.nnp` of one `network.nntxt` member, stored or deflated.
#[cfg(feature = "nnp")]
fn nnp_of(text: &[u8], deflate: bool) -> Vec<u8> {
    use std::io::Write;
    use zip::write::SimpleFileOptions;
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let method = match deflate {
        true => zip::CompressionMethod::Deflated,
        false => zip::CompressionMethod::Stored,
    };
    let o = SimpleFileOptions::default().compression_method(method);
    z.start_file("network.nntxt", o).unwrap();
    z.write_all(text).unwrap();
    z.finish().unwrap().into_inner()
}

#[cfg(feature = "nnp")]
#[test]
fn an_nnp_text_member_that_is_not_utf8_is_malformed_at_its_byte_where_stored() {
    let text = b"network {\n  name: \"n\"\n}\n\xff\xfe\xfd";
    let k = text.iter().position(|&b| b == 0xff).unwrap();
    for deflate in [false, true] {
        let bytes = nnp_of(text, deflate);
        let in_file = bytes.windows(3).position(|w| w == b"\xff\xfe\xfd");
        let e = Document::from_bytes(bytes, None, Some(Format::NnablaNnp)).unwrap_err();
        let (inner, _) = unwrap_tensor(&e);
        let Error::Malformed { part, at, .. } = inner else {
            panic!("{e:?}")
        };
        assert_eq!(*part, "zip member");
        // a stored member's byte is a byte of the file; a deflated one's is not
        let want = if deflate {
            None
        } else {
            Some(in_file.unwrap() as u64)
        };
        assert_eq!(*at, want, "deflate {deflate}");
        assert_eq!(
            inner.to_string(),
            format!("network.nntxt: text is not UTF-8 (at byte {k})")
        );
    }
}

#[cfg(feature = "onnx")]
#[test]
fn an_onnx_model_that_does_not_decode_is_an_onnx_error() {
    let e =
        Document::from_bytes(vec![0x0a, 0xff, 0xff, 0xff], None, Some(Format::Onnx)).unwrap_err();
    let (inner, _) = unwrap_tensor(&e);
    assert!(matches!(inner, Error::Onnx(_)), "{e:?}");
    assert!(!matches!(inner, Error::Invalid(_)));
    assert!(!e.is_unreadable());
}

#[cfg(all(feature = "onnx", feature = "nnp"))]
#[test]
fn a_rename_the_onnx_export_refuses_is_typed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.onnx");
    let e = mlformats::convert(
        td("onnx/convnet.nnp"),
        &out,
        &ConvertOptions::new().rename("^conv1/conv/W$", "mlformats/w"),
    )
    .unwrap_err();
    let Error::ReservedName {
        tensor,
        name,
        prefix,
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(
        (tensor.as_str(), name.as_str(), *prefix),
        ("conv1/conv/W", "mlformats/w", "mlformats/")
    );
    assert_eq!(
        e.to_string(),
        "--rename gives \"conv1/conv/W\" the name \"mlformats/w\"; names starting with \
         \"mlformats/\" are reserved for the exporter's helper tensors"
    );
    // the network's input is a value of the exported graph
    let e = mlformats::convert(
        td("nnabla/mlp.nnp"),
        &out,
        &ConvertOptions::new().rename("^fc1/affine/W$", "x"),
    )
    .unwrap_err();
    let Error::NameInUse { tensor, name } = &e else {
        panic!("{e:?}")
    };
    assert_eq!((tensor.as_str(), name.as_str()), ("fc1/affine/W", "x"));
    assert_eq!(
        e.to_string(),
        "--rename gives \"fc1/affine/W\" the name \"x\", which the exported graph already uses \
         for another value"
    );
    assert!(!out.exists());
}
