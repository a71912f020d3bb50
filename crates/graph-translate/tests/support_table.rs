//! `SUPPORT.md` and `IMPORT_SUPPORT.md` are the support tables the
//! operator tables generate; these tests fail when a checked-in copy is
//! stale. `REGENERATE=1 cargo test -p graph-translate --test
//! support_table` rewrites them (`MLFORMATS_BLESS=1` too, for
//! `IMPORT_SUPPORT.md`, as when the test lived in the umbrella crate).

use std::path::Path;

#[test]
fn support_md_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("SUPPORT.md");
    let want = graph_translate::export::support_table();
    if std::env::var_os("REGENERATE").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "SUPPORT.md is stale: run REGENERATE=1 cargo test -p graph-translate --test support_table"
    );
}

#[test]
fn tables_name_each_operator_once() {
    use graph_translate::export::{nnabla_table, tennis_table};
    let mut n: Vec<&str> = nnabla_table::TABLE.iter().map(|e| e.op).collect();
    let len = n.len();
    n.sort_unstable();
    n.dedup();
    assert_eq!(n.len(), len);
    let mut t: Vec<&str> = tennis_table::TABLE.iter().map(|e| e.op).collect();
    let len = t.len();
    t.sort_unstable();
    t.dedup();
    assert_eq!(t.len(), len);
    // every refusal says why
    assert!(
        nnabla_table::TABLE
            .iter()
            .all(|e| e.lower.is_some() || !e.reason.is_empty())
    );
    assert!(
        tennis_table::TABLE
            .iter()
            .all(|e| e.lower.is_some() || !e.reason.is_empty())
    );
}

/// The TenniS rows whose output `_field` takes apart are the five its
/// error message names ("the export knows the fields of chunk, split,
/// topkv2, yolo and LSTM"), each with its own packing.
#[test]
fn tennis_packing_rows_are_the_five_field_knows() {
    use graph_translate::export::tennis_table::{Packed, TABLE};
    let mut packing: Vec<(&str, Packed)> = TABLE
        .iter()
        .filter_map(|e| Some((e.op, e.lower?.packed?)))
        .collect();
    packing.sort_unstable_by_key(|p| p.0);
    assert_eq!(
        packing,
        [
            ("LSTM", Packed::Lstm),
            ("chunk", Packed::Chunk),
            ("split", Packed::Split),
            ("topkv2", Packed::TopKV2),
            ("yolo", Packed::Yolo),
        ]
    );
}

/// The verification record `name` of `testdata/translate/import/`.
#[cfg(all(feature = "nnabla", feature = "tennis"))]
fn record(name: &str) -> serde_json::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/translate/import")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// How many conformance cases using `op` pass, in record `r`.
#[cfg(all(feature = "nnabla", feature = "tennis"))]
fn passing(r: &serde_json::Value, op: &str) -> usize {
    r["per_op"][op]["pass"].as_u64().unwrap_or(0) as usize
}

#[cfg(all(feature = "nnabla", feature = "tennis"))]
#[test]
fn import_support_md_is_current() {
    let (nnabla, tennis) = (record("nnabla.json"), record("tennis.json"));
    let mut md = graph_translate::import::support_table_markdown(&|op| passing(&nnabla, op));
    md.push_str(&graph_translate::import::tennis_support_markdown(&|op| {
        passing(&tennis, op)
    }));
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("IMPORT_SUPPORT.md");
    if std::env::var_os("REGENERATE").is_some() || std::env::var_os("MLFORMATS_BLESS").is_some() {
        std::fs::write(&path, &md).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == md,
        "IMPORT_SUPPORT.md is stale: run REGENERATE=1 cargo test -p graph-translate --test support_table"
    );
    // The record counts real cases: most operators have some.
    assert!(md.matches("— (no case)").count() < md.matches("\n| ").count() / 2);
}
