//! Every `inspect --json` document validates against the published JSON
//! Schema of the contract (`docs/inspect.schema.json`), and the schema is
//! strict enough to refuse a broken document.

mod common;

use common::{files_with_suffix, inspect_json, run_str, testdata};
use serde_json::{Value, json};

fn validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(testdata().join("../docs/inspect.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&schema).expect("the schema is a valid JSON Schema")
}

fn check(v: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {}", errors.join("; "));
}

#[test]
fn every_inspect_document_follows_the_schema() {
    let v = validator();
    let mut n = 0;
    for dir in ["cvm", "primitiv", "nnabla", "tennis"] {
        for exp in files_with_suffix(&testdata().join(dir), ".expected.json") {
            let name = exp
                .file_name()
                .unwrap()
                .to_string_lossy()
                .replace(".expected.json", "");
            let data = std::fs::read_dir(exp.parent().unwrap())
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| {
                    let f = p.file_name().unwrap().to_string_lossy();
                    !f.ends_with(".json")
                        && (f == name || p.file_stem().unwrap().to_string_lossy() == name)
                });
            let Some(data) = data else { continue };
            let doc = inspect_json(&data);
            check(&v, &doc, &data.display().to_string());
            n += 1;
        }
    }
    assert!(n >= 75, "only {n} files checked");
    // converted exchange files too
    let dir = tempfile::tempdir().unwrap();
    for ext in ["safetensors", "npz"] {
        let out = dir.path().join(format!("m.{ext}"));
        let src = testdata().join("primitiv/model_nested_adam.data");
        let r = run_str(&["convert", src.to_str().unwrap(), out.to_str().unwrap()]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        check(&v, &inspect_json(&out), ext);
    }
}

#[test]
fn the_schema_refuses_broken_documents() {
    let v = validator();
    let good = inspect_json(&testdata().join("cvm/two_entry.params"));
    check(&v, &good, "two_entry");
    let mut bad = good.clone();
    bad["tensors"][0]["sha256"] = json!("XYZ");
    assert!(!v.is_valid(&bad));
    let mut bad = good.clone();
    bad["graph"] = json!({"nodes": []});
    assert!(!v.is_valid(&bad), "cvm-params has no graph");
    let mut bad = good.clone();
    bad.as_object_mut().unwrap().remove("file_size");
    assert!(!v.is_valid(&bad));
    let mut bad = good;
    bad["tensors"][0]["dtype"] = json!("float32");
    assert!(!v.is_valid(&bad));
}
