//! Shared helpers for the crate's tests: testdata paths and a tiny,
//! independent encoder for crafting (possibly hostile) module bytes.
#![allow(dead_code)]

use std::path::PathBuf;

/// `testdata/tennis` of the workspace.
pub fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tennis")
}

/// Every file in `dir` ending with `suffix`, sorted.
pub fn files(dir: &std::path::Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    v.sort();
    v
}

/// A field for [`enc`]: dtype code, shape, data.
pub struct F(pub u8, pub Vec<u32>, pub Vec<u8>);

/// A node for [`enc`]: params (key, fields) and inputs.
pub struct N(pub Vec<(&'static str, Vec<F>)>, pub Vec<u32>);

pub fn s(text: &str) -> Vec<F> {
    vec![F(13, vec![text.len() as u32], text.as_bytes().to_vec())]
}

/// A node with `#op` and `#name` first, then `extra` params.
pub fn node(op: &'static str, name: &'static str, inputs: &[u32]) -> N {
    N(vec![("#op", s(op)), ("#name", s(name))], inputs.to_vec())
}

/// Encodes a module by hand (independent of the crate's writer).
pub fn enc(inputs: &[u32], outputs: &[u32], nodes: &[N]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend(0u32.to_le_bytes());
    b.extend(0x1991_0929u32.to_le_bytes());
    b.extend([0u8; 120]);
    let list = |b: &mut Vec<u8>, l: &[u32]| {
        b.extend((l.len() as u32).to_le_bytes());
        for v in l {
            b.extend(v.to_le_bytes());
        }
    };
    list(&mut b, inputs);
    list(&mut b, outputs);
    b.extend((nodes.len() as u32).to_le_bytes());
    for N(params, ins) in nodes {
        b.extend((params.len() as u32).to_le_bytes());
        for (k, fields) in params {
            b.extend((k.len() as u32).to_le_bytes());
            b.extend(k.as_bytes());
            b.extend((fields.len() as u32).to_le_bytes());
            for F(code, shape, data) in fields {
                b.push(*code);
                list(&mut b, shape);
                b.extend(data);
            }
        }
        list(&mut b, ins);
    }
    b
}
