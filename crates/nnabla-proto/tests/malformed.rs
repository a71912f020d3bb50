//! Hostile binary input: every malformation is an error naming where, never
//! a panic, a stack overflow or an allocation the input has not paid for.

use std::path::{Path, PathBuf};

use nnabla_proto::*;
use tensor_core::Limits;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nnabla")
}

fn both(bytes: &[u8]) -> (Result<NNablaProtoBuf>, Result<binary::BinaryFile<'_>>) {
    (binary::decode(bytes), binary::parse(bytes))
}

fn both_fail(bytes: &[u8], needle: &str) {
    let (a, b) = both(bytes);
    assert!(a.is_err(), "prost path accepted {bytes:02x?}");
    let e = b.unwrap_err().to_string();
    assert!(e.contains(needle), "{bytes:02x?}: {e}");
}

/// A parameter entry (field 200) around `body`.
fn param(body: &[u8]) -> Vec<u8> {
    let mut v = vec![0xC2, 0x0C, body.len() as u8];
    v.extend_from_slice(body);
    v
}

#[test]
fn malformed_wire_format_is_an_error() {
    // truncated varints: in a key, in a length, inside a parameter
    both_fail(&[0xC2], "byte 0: truncated varint");
    both_fail(&[0xC2, 0x0C, 0x80], "byte 2: truncated varint");
    both_fail(
        &param(&[0x0A, 0x01, b'w', 0xA2, 0x01, 0x03, 0x0A, 0x01, 0x80]),
        "truncated varint",
    );
    // lengths beyond the buffer
    both_fail(
        &[0xC2, 0x0C, 0x05, 0x0A],
        "5 bytes claimed but only 1 remain",
    );
    both_fail(&param(&[0x0A, 0x09, b'w']), "9 bytes claimed");
    both_fail(
        &[
            0xC2, 0x0C, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01,
        ],
        "claimed",
    );
    // wrong wire types
    both_fail(&[0xC0, 0x0C, 0x01], "wire type 0, expected 2");
    both_fail(
        &param(&[0x0D, 0, 0, 0, 0]),
        "Parameter field 1 has wire type 5",
    );
    both_fail(&param(&[0xA5, 0x06, 0, 0, 0, 0, 0xA0, 0x06, 0x01]), "");
    both_fail(&param(&[0xA0, 0x06, 0x01]), "wire type 0, expected 2 or 5");
    both_fail(
        &param(&[0xA2, 0x01, 0x02, 0x0D, 0x00]),
        "Shape.dim has wire type 5",
    );
    both_fail(&[0x0F], "invalid wire type 7");
    both_fail(&[0x00], "invalid field number 0");
    // a packed float run that is not whole floats
    both_fail(&param(&[0xA2, 0x06, 0x03, 1, 2, 3]), "not a multiple of 4");
    // a varint longer than 10 bytes
    both_fail(
        &[
            0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01,
        ],
        "varint",
    );
    // invalid UTF-8 in a name
    both_fail(&param(&[0x0A, 0x01, 0xFF]), "UTF-8");
}

#[test]
fn inconsistent_parameters_name_the_parameter() {
    // shape [2] but one float
    let bytes = param(&[
        0x0A, 0x01, b'w', 0xA2, 0x01, 0x03, 0x0A, 0x01, 0x02, 0xA2, 0x06, 0x04, 0, 0, 0x80, 0x3F,
    ]);
    let e = binary::parse(&bytes).unwrap_err();
    assert!(e.to_string().starts_with("parameter \"w\": "), "{e}");
    let m = binary::decode(&bytes).unwrap();
    assert!(parameters(&m).is_err());
    // a negative dimension
    let bytes = param(&[
        0x0A, 0x01, b'w', 0xA2, 0x01, 0x0C, 0x0A, 0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xFF, 0xFF, 0x01,
    ]);
    let e = binary::parse(&bytes).unwrap_err();
    assert!(e.to_string().contains("negative dimension -1"), "{e}");
    // rank and count limits
    let mut shape = vec![0x0A, 70];
    shape.extend(std::iter::repeat_n(1u8, 70));
    let mut body = vec![0xA2, 0x01, shape.len() as u8];
    body.extend(shape);
    let e = binary::parse(&param(&body)).unwrap_err();
    assert!(e.to_string().contains("rank"), "{e}");
    let empty = |n: u8| param(&[0x0A, 0x01, n, 0xA2, 0x01, 0x03, 0x0A, 0x01, 0x00]);
    let two = [empty(b'a'), empty(b'b')].concat();
    assert_eq!(binary::parse(&two).unwrap().parameters.len(), 2);
    let e = binary::parse_with(
        &two,
        &ReadOptions::default().with_limits(Limits::default().with_max_tensors(1)),
    )
    .unwrap_err();
    assert!(e.to_string().contains("tensor count"), "{e}");
}

#[test]
fn unpacked_and_split_encodings_are_accepted() {
    // unpacked dims (field 1 varints) and unpacked floats (field 100 fixed32),
    // as in the edge case unpacked_repeated_encoding: p [2], need_grad true
    let mut body = vec![0x0A, 0x01, b'p', 0xA2, 0x01, 0x02, 0x08, 0x02];
    body.extend([0xA5, 0x06]);
    body.extend(1.5f32.to_le_bytes());
    body.extend([0xA5, 0x06]);
    body.extend((-2.0f32).to_le_bytes());
    body.extend([0xA8, 0x06, 0x01]);
    let bytes = param(&body);
    let f = binary::parse(&bytes).unwrap();
    let p = &f.parameters[0];
    assert_eq!(
        (p.name.as_str(), p.tensor.dims(), p.need_grad),
        ("p", &[2usize][..], true)
    );
    assert_eq!(&*p.tensor.view::<f32>().unwrap(), &[1.5, -2.0]);
    let m = binary::decode(&bytes).unwrap();
    assert_eq!(m.parameter[0].data, [1.5, -2.0]);
    // two packed runs are concatenated; unknown fields are skipped
    let mut body = vec![0x0A, 0x01, b'q', 0xA2, 0x01, 0x03, 0x0A, 0x01, 0x02];
    body.extend([0xA2, 0x06, 0x04]);
    body.extend(3.0f32.to_le_bytes());
    body.extend([0xF8, 0x07, 0x05]); // unknown field 127, varint
    body.extend([0xA2, 0x06, 0x04]);
    body.extend(4.0f32.to_le_bytes());
    let mut bytes = param(&body);
    bytes.extend([0xB8, 0x3E, 0x07]); // unknown root field 999
    let f = binary::parse(&bytes).unwrap();
    assert_eq!(&*f.parameters[0].tensor.view::<f32>().unwrap(), &[3.0, 4.0]);
    assert_eq!(
        binary::decode(&bytes).unwrap().parameter[0].data,
        [3.0, 4.0]
    );
}

#[test]
fn deep_group_nesting_is_an_error_not_a_stack_overflow() {
    // 10,000 nested start-group tags of an unknown field
    let bytes = [0xBBu8, 0x3E].repeat(10_000);
    let (a, b) = both(&bytes);
    assert!(a.is_err());
    assert!(b.is_err());
}

/// Top-level field boundaries of a valid message.
fn boundaries(bytes: &[u8]) -> Vec<usize> {
    let mut out = vec![0];
    let mut pos = 0;
    while pos < bytes.len() {
        let mut key = 0u64;
        let mut shift = 0;
        loop {
            let b = bytes[pos];
            pos += 1;
            key |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b < 0x80 {
                break;
            }
        }
        assert_eq!(
            key & 7,
            2,
            "golden files have only length-delimited root fields"
        );
        let mut len = 0u64;
        let mut shift = 0;
        loop {
            let b = bytes[pos];
            pos += 1;
            len |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b < 0x80 {
                break;
            }
        }
        pos += len as usize;
        out.push(pos);
    }
    out
}

#[test]
fn truncation_at_every_offset_is_an_error_unless_between_fields() {
    for name in ["mlp.protobuf", "mlp_params.protobuf"] {
        let bytes = std::fs::read(testdata().join(name)).unwrap();
        let cuts = boundaries(&bytes);
        for cut in 0..bytes.len() {
            let (a, b) = both(&bytes[..cut]);
            // Protobuf has no framing: a cut between root fields is a valid,
            // shorter message. Everywhere else both paths must fail.
            let valid = cuts.contains(&cut);
            assert_eq!(a.is_ok(), valid, "{name} cut at {cut} (prost)");
            assert_eq!(b.is_ok(), valid, "{name} cut at {cut} (borrowed)");
        }
    }
}

#[test]
fn corrupted_bytes_never_panic() {
    for name in ["mlp.protobuf", "mlp_params.protobuf"] {
        let bytes = std::fs::read(testdata().join(name)).unwrap();
        for pos in 0..bytes.len() {
            for v in [0x00u8, 0x7F, 0x80, 0xFF] {
                let mut b = bytes.clone();
                b[pos] = v;
                let _ = binary::decode(&b);
                if let Ok(f) = binary::parse(&b) {
                    for p in &f.parameters {
                        assert_eq!(p.tensor.bytes().len(), p.tensor.numel() * 4);
                    }
                }
            }
        }
    }
}
