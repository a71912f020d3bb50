//! Golden `.nnp` archives written by the real nnabla: parameters (names,
//! order, values, need_grad) and networks as nnabla reports them; and what
//! we write reads back the same.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use nnp_archive::{MemberKind, Nnp, ParamFormat, ReadOptions, WriteOptions};
use serde_json::Value;
use sha2::{Digest, Sha256};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nnabla")
}

fn hex(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

fn goldens() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(testdata())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "nnp"))
        .collect();
    v.sort();
    v
}

fn check(nnp: &Nnp<'_>, exp: &Value, what: &str) {
    let expected = exp["tensors"].as_array().unwrap();
    let params: Vec<_> = nnp.parameters().iter().collect();
    assert_eq!(params.len(), expected.len(), "{what}");
    for (p, e) in params.iter().zip(expected) {
        assert_eq!(p.name, e["name"].as_str().unwrap(), "{what}");
        assert_eq!(
            p.tensor.dtype().name(),
            e["dtype"].as_str().unwrap(),
            "{what}"
        );
        let shape: Vec<usize> = e["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(p.tensor.dims(), &shape[..], "{what} {}", p.name);
        assert_eq!(
            hex(p.tensor.bytes()),
            e["sha256"].as_str().unwrap(),
            "{what} {}",
            p.name
        );
        assert_eq!(
            p.need_grad,
            e["need_grad"].as_bool().unwrap(),
            "{what} {}",
            p.name
        );
    }
    let nets: Vec<&str> = nnp.networks().iter().map(|n| n.name.as_str()).collect();
    let exp_nets: Vec<&str> = exp["graph"]["networks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(nets, exp_nets, "{what}");
    let execs: Vec<&str> = nnp.executors().iter().map(|n| n.name.as_str()).collect();
    let exp_execs: Vec<&str> = exp["graph"]["executors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(execs, exp_execs, "{what}");
}

#[test]
fn golden_nnp_match_expected_through_every_reader() {
    let files = goldens();
    assert!(files.len() >= 6, "{files:?}");
    for f in files {
        let exp: Value = serde_json::from_slice(
            &std::fs::read(format!("{}.expected.json", f.display())).unwrap(),
        )
        .unwrap();
        let what = f.file_name().unwrap().to_string_lossy().into_owned();
        let mapped = Nnp::open(&f).unwrap();
        check(&mapped, &exp, &what);
        for p in mapped.parameters() {
            if mapped
                .members()
                .iter()
                .any(|m| m.kind == MemberKind::H5 || m.kind == MemberKind::Protobuf)
            {
                assert!(
                    p.tensor.storage().is_zero_copy(),
                    "{what}: {} copied",
                    p.name
                );
            }
        }
        let bytes = std::fs::read(&f).unwrap();
        check(
            &Nnp::parse_with(&bytes, &ReadOptions::default()).unwrap(),
            &exp,
            &what,
        );
        check(
            &Nnp::from_reader(Cursor::new(&bytes), &ReadOptions::default()).unwrap(),
            &exp,
            &what,
        );
        // Solver states are listed, not parameters.
        let opt = mapped.optimizer_states().len();
        assert_eq!(
            opt,
            usize::from(what.starts_with("train_with_solver_state")),
            "{what}"
        );

        // Written again (both parameter formats), it reads back the same.
        for format in [ParamFormat::H5, ParamFormat::Protobuf] {
            let out = mapped
                .write(
                    Cursor::new(Vec::new()),
                    &WriteOptions::default().with_param_format(format),
                )
                .unwrap()
                .into_inner();
            let again = Nnp::parse_with(&out, &ReadOptions::default()).unwrap();
            check(&again, &exp, &format!("{what} rewritten as {format:?}"));
            let names: Vec<&str> = again.members().iter().map(|m| m.name.as_str()).collect();
            let param_member = match format {
                ParamFormat::H5 => "parameter.h5",
                _ => "parameter.protobuf",
            };
            assert_eq!(
                &names[..3],
                ["nnp_version.txt", "network.nntxt", param_member]
            );
            assert_eq!(names.len(), 3 + opt);
            assert!(
                again
                    .members()
                    .iter()
                    .all(|m| m.compression == nnp_archive::archive::Compression::Stored)
            );
        }
    }
}

#[test]
fn truncated_golden_nnp_is_an_error_at_every_offset() {
    for name in ["mlp.nnp", "mlp_pbparam.nnp"] {
        let bytes = std::fs::read(testdata().join(name)).unwrap();
        for cut in 0..bytes.len() {
            assert!(
                Nnp::parse_with(&bytes[..cut], &ReadOptions::default()).is_err(),
                "{name} cut at {cut} accepted"
            );
        }
    }
}
