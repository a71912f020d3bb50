//! The CLI on TVM/CVM `.params` files: `inspect --json` of every golden
//! matches its `.expected.json`, and `convert X.params Y.params` reproduces
//! every golden byte for byte.

mod common;

use common::{check_goldens, files_with_suffix, inspect_json, run, run_str, testdata};

#[test]
fn inspect_json_matches_every_golden() {
    let n = check_goldens(&testdata().join("cvm"), ".params");
    // 12 TVM-written goldens and one file our writer made, checked by TVM
    assert_eq!(n, 13);
}

#[test]
fn convert_params_to_params_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let goldens = files_with_suffix(&testdata().join("cvm"), ".params");
    assert_eq!(goldens.len(), 13);
    for g in goldens {
        let out = dir.path().join(g.file_name().unwrap());
        let r = run(&["convert".as_ref(), g.as_os_str(), out.as_os_str()]);
        assert!(
            r.status.success(),
            "{}: {}",
            g.display(),
            String::from_utf8_lossy(&r.stderr)
        );
        assert!(
            std::fs::read(&out).unwrap() == std::fs::read(&g).unwrap(),
            "{}: convert output differs",
            g.display()
        );
    }
}

#[test]
fn zero_inner_dim_is_valid_and_its_names_are_exact() {
    let v = inspect_json(&testdata().join("cvm/zero_inner_dim.params"));
    assert_eq!(v["format"], "cvm-params");
    assert_eq!(v["tensors"][0]["shape"], serde_json::json!([3, 0, 2]));
    let v = inspect_json(&testdata().join("cvm/names.params"));
    let names: Vec<&str> = v["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&""), "{names:?}");
    assert!(names.contains(&"权重/αβγ/🙂"), "{names:?}");
    assert!(names.contains(&"tab\tnewline\n"), "{names:?}");
}

/// A one-tensor file with the given raw name (int8[1] = 5).
fn one_tensor_file(name: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&0xF7E5_8D4F_0504_9CB7u64.to_le_bytes());
    f.extend_from_slice(&0u64.to_le_bytes());
    f.extend_from_slice(&1u64.to_le_bytes());
    f.extend_from_slice(&(name.len() as u64).to_le_bytes());
    f.extend_from_slice(name);
    f.extend_from_slice(&1u64.to_le_bytes());
    f.extend_from_slice(&0xDD5E_40F0_96B4_A13Fu64.to_le_bytes());
    f.extend_from_slice(&0u64.to_le_bytes());
    f.extend_from_slice(&1i32.to_le_bytes());
    f.extend_from_slice(&0i32.to_le_bytes());
    f.extend_from_slice(&1i32.to_le_bytes());
    f.extend_from_slice(&[0, 8, 1, 0]);
    f.extend_from_slice(&1i64.to_le_bytes());
    f.extend_from_slice(&1i64.to_le_bytes());
    f.push(5);
    f
}

#[test]
fn invalid_utf8_names_are_replaced_and_kept_raw_by_convert() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad_name.params");
    let file = one_tensor_file(b"a\xffb");
    std::fs::write(&p, &file).unwrap();
    let v = inspect_json(&p);
    assert_eq!(v["tensors"][0]["name"], "a\u{fffd}b");
    assert_eq!(v["tensors"][0]["sum"], 5);
    let out = dir.path().join("copy.params");
    let r = run(&["convert".as_ref(), p.as_os_str(), out.as_os_str()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(std::fs::read(&out).unwrap(), file);
}

#[test]
fn a_broken_file_is_exit_1_with_offset_and_name() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("short.params");
    let mut file = one_tensor_file(b"weight");
    file.pop(); // payload one byte short
    std::fs::write(&p, &file).unwrap();
    let r = run_str(&["inspect", "--json", p.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(1));
    assert!(r.stdout.is_empty());
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("weight") && err.contains("payload"), "{err}");
    assert!(err.contains(&format!("byte {}", file.len())), "{err}");
}
