//! `SUPPORT.md` is the support table the operator tables generate; this
//! test fails when the checked-in copy is stale. `REGENERATE=1 cargo test
//! -p graph-translate --test support_table` rewrites it.

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
