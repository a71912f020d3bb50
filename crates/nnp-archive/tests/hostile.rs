//! Hostile archives are refused cleanly, before anything large is allocated.

use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};

use nnp_archive::{Error, Nnp, ReadOptions, archive};
use tensor_core::Limits;
use zip::CompressionMethod;
use zip::write::SimpleFileOptions;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nnabla")
}

fn zip_of(members: &[(&str, &[u8], CompressionMethod)]) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, data, method) in members {
        z.start_file(
            *name,
            SimpleFileOptions::default().compression_method(*method),
        )
        .unwrap();
        z.write_all(data).unwrap();
    }
    z.finish().unwrap().into_inner()
}

fn golden_h5() -> Vec<u8> {
    std::fs::read(testdata().join("mlp_params.h5")).unwrap()
}

#[test]
fn path_traversal_names_are_refused_or_flagged_never_used() {
    let h5 = golden_h5();
    for evil in [
        "../evil.h5",
        "a/../../evil.h5",
        "/etc/evil.h5",
        "C:\\evil.h5",
        "..\\evil.h5",
    ] {
        let z = zip_of(&[(evil, &h5, CompressionMethod::Stored)]);
        let e = Nnp::parse_with(&z, &ReadOptions::default()).unwrap_err();
        assert!(matches!(e, Error::UnsafeMemberName { .. }), "{evil}: {e}");
        // Allowed explicitly: read as data, flagged, never touched on disk.
        let nnp = Nnp::parse_with(&z, &ReadOptions::default().allow_unsafe_names(true)).unwrap();
        assert!(nnp.members()[0].unsafe_name);
        assert_eq!(nnp.parameters().len(), 4);
        assert!(!Path::new("../evil.h5").exists() && !Path::new("/etc/evil.h5").exists());
    }
}

/// Sets the uncompressed size of the first member in the local header and
/// the central directory.
fn patch_size(z: &mut [u8], size: u32) {
    assert_eq!(&z[..4], b"PK\x03\x04");
    z[22..26].copy_from_slice(&size.to_le_bytes());
    let cd = z.windows(4).rposition(|w| w == b"PK\x01\x02").unwrap();
    z[cd + 24..cd + 28].copy_from_slice(&size.to_le_bytes());
}

#[test]
fn deflate_bomb_declaring_one_gib_is_refused_before_inflating() {
    let zeros = vec![0u8; 4 << 20];
    let mut z = zip_of(&[("parameter.h5", &zeros, CompressionMethod::Deflated)]);
    patch_size(&mut z, 1 << 30);
    let e = Nnp::parse_with(&z, &ReadOptions::default()).unwrap_err();
    match e {
        Error::TooLarge { declared, .. } => assert_eq!(declared, 1 << 30),
        other => panic!("{other}"),
    }
    // A bomb whose ratio is possible is still held to the limits: the
    // inflation budget (here its ceiling) refuses it before inflating.
    let z = zip_of(&[("parameter.h5", &zeros, CompressionMethod::Deflated)]);
    let small =
        ReadOptions::default().with_limits(Limits::default().with_max_total_inflated(1 << 20));
    let e = Nnp::parse_with(&z, &small).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Tensor(tensor_core::Error::InflateLimit { limit, .. }) if limit == 1 << 20
        ),
        "{e}"
    );
    assert!(e.to_string().contains("\"parameter.h5\""), "{e}");
    let small = ReadOptions::default().with_limits(Limits::default().with_max_alloc(1 << 20));
    assert!(matches!(
        Nnp::parse_with(&z, &small),
        Err(Error::TooLarge { .. })
    ));
    // A member that inflates to more than it declares is caught while reading.
    let mut z = zip_of(&[("parameter.h5", &zeros, CompressionMethod::Deflated)]);
    patch_size(&mut z, 1000);
    let e = Nnp::parse_with(&z, &ReadOptions::default()).unwrap_err();
    assert!(e.to_string().contains("parameter.h5"), "{e}");
}

#[test]
fn local_header_disagreeing_with_central_directory_is_refused() {
    let h5 = golden_h5();
    let good = zip_of(&[
        (
            "network.nntxt",
            b"network { name: \"n\" }\n",
            CompressionMethod::Stored,
        ),
        ("parameter.h5", &h5, CompressionMethod::Stored),
    ]);
    assert_eq!(
        Nnp::parse_with(&good, &ReadOptions::default())
            .unwrap()
            .parameters()
            .len(),
        4
    );
    // a different name in the local header (same length)
    let mut bad = good.clone();
    let at = bad.windows(12).position(|w| w == b"parameter.h5").unwrap();
    bad[at] = b'q';
    let e = Nnp::parse_with(&bad, &ReadOptions::default()).unwrap_err();
    assert!(matches!(e, Error::Zip(_)), "{e}");
    // a different size in the local header of the second member
    let mut bad = good.clone();
    let second = bad
        .windows(4)
        .skip(4)
        .position(|w| w == b"PK\x03\x04")
        .unwrap()
        + 4;
    bad[second + 22] ^= 0x10;
    assert!(Nnp::parse_with(&bad, &ReadOptions::default()).is_err());
    // a different compression method in the local header
    let mut bad = good.clone();
    bad[8] = 8;
    assert!(Nnp::parse_with(&bad, &ReadOptions::default()).is_err());
}

#[test]
fn stored_member_running_past_the_end_and_crc_errors() {
    let h5 = golden_h5();
    let good = zip_of(&[("parameter.h5", &h5, CompressionMethod::Stored)]);
    // a flipped data byte: caught by the CRC check when asked for
    let mut bad = good.clone();
    bad[30 + 12 + 3000] ^= 1;
    let e = archive::parse_with(&bad, &ReadOptions::default().verify_crc(true)).unwrap_err();
    assert!(e.to_string().contains("CRC"), "{e}");
    // a declared size beyond the archive
    let mut bad = good.clone();
    let n = (h5.len() as u32) + 1000;
    patch_size(&mut bad, n);
    bad[18..22].copy_from_slice(&n.to_le_bytes());
    let cd = bad.windows(4).rposition(|w| w == b"PK\x01\x02").unwrap();
    bad[cd + 20..cd + 24].copy_from_slice(&n.to_le_bytes());
    assert!(Nnp::parse_with(&bad, &ReadOptions::default()).is_err());
}

#[test]
fn nested_nnp_and_broken_h5_member() {
    let z = zip_of(&[("inner.nnp", b"PK", CompressionMethod::Stored)]);
    assert!(matches!(
        Nnp::parse_with(&z, &ReadOptions::default()),
        Err(Error::NestedNnp(_))
    ));
    let mut h5 = golden_h5();
    h5[40..48].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let z = zip_of(&[("parameter.h5", &h5, CompressionMethod::Stored)]);
    let e = Nnp::parse_with(&z, &ReadOptions::default()).unwrap_err();
    assert!(
        e.to_string().contains("parameter.h5") && e.to_string().contains("truncated"),
        "{e}"
    );
}

#[test]
fn zip64_archives_are_read() {
    let h5 = golden_h5();
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    z.start_file(
        "parameter.h5",
        SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .large_file(true),
    )
    .unwrap();
    z.write_all(&h5).unwrap();
    let bytes = z.finish().unwrap().into_inner();
    // the local header carries a ZIP64 extra field (id 0x0001) after the name
    let extra_len = u16::from_le_bytes([bytes[28], bytes[29]]) as usize;
    assert!(extra_len >= 4);
    assert_eq!(&bytes[30 + 12..30 + 14], &[1, 0]);
    let nnp = Nnp::parse_with(&bytes, &ReadOptions::default()).unwrap();
    assert_eq!(nnp.parameters().len(), 4);
}
